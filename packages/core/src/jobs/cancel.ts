import { withTransaction } from "@millrace/db";
import { canSeeJob } from "../access.ts";
import { recordAudit } from "../audit/index.ts";
import { AppError, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import type { Boss } from "./boss.ts";
import { isJobId } from "./queries.ts";
import { JOB_CANCEL_CHANNEL, JOB_DONE_CHANNEL } from "./events.ts";
import type { JobsContext } from "./run.ts";
import { advanceFlows, cancelFlowJob } from "../flows/engine/run.ts";

export interface CancelResult {
  id: string;
  /** `canceled` when the job never ran; `canceling` while its worker kills it. */
  state: "canceled" | "canceling";
}

/**
 * Cancels a job. A queued job ends at once (its pg-boss job is settled so no worker claims it).
 * A running job is marked and its worker told through NOTIFY (it also re-checks every second);
 * the worker kills the job's process tree and records the job as canceled.
 */
export async function cancelJob(
  ctx: JobsContext & { boss: Boss },
  membership: Membership,
  id: string,
  reason: string | null,
): Promise<CancelResult> {
  requirePermission(membership, "job.run");
  if (!isJobId(id)) throw notFound(`job ${id}`);
  const canceledBy = membership.principal.username;
  return withTransaction(ctx.pool, async (client) => {
    // A flow's step or child flow: the run's root flow job is locked first, as completions lock
    // it (jobs/complete.ts), so the two never wait for each other in a cycle.
    await client.query(
      `SELECT 1 FROM job WHERE id = (SELECT root_job_id FROM job WHERE id = $1 AND workspace_id = $2) FOR UPDATE`,
      [id, membership.workspace.id],
    );
    const { rows } = await client.query<{
      status: string;
      tag: string;
      boss_job_id: string | null;
      created_by: string;
      script_path: string | null;
      kind: string;
      parent_job_id: string | null;
    }>(
      `SELECT status, tag, boss_job_id, created_by, script_path, kind, parent_job_id
         FROM job WHERE id = $1 AND workspace_id = $2 FOR UPDATE`,
      [id, membership.workspace.id],
    );
    const job = rows[0];
    if (
      !job ||
      !(await canSeeJob(ctx, membership, { createdBy: job.created_by, scriptPath: job.script_path }))
    ) {
      throw notFound(`job ${id}`);
    }
    if (job.status === "queued" || job.status === "running") {
      await recordAudit(client, membership.principal, {
        workspaceId: membership.workspace.id,
        operation: "jobs.cancel",
        resource: id,
        parameters: { reason },
      });
    }
    if ((job.kind === "flow" || job.kind === "flowpreview") && job.status === "running") {
      // No worker runs a flow job: it ends here, with every unfinished step under it.
      await cancelFlowJob(client, ctx.boss, id, canceledBy, reason);
      return { id, state: "canceled" };
    }
    if (job.status === "queued") {
      const message = `canceled by ${canceledBy}${reason ? `: ${reason}` : ""}`;
      await client.query(
        `UPDATE job SET status = 'canceled', canceled_by = $2, cancel_reason = $3, completed_at = now(),
           result = $4 WHERE id = $1`,
        [id, canceledBy, reason, JSON.stringify({ error: { name: "Canceled", message } })],
      );
      if (job.boss_job_id) {
        await ctx.boss.cancel(job.tag, job.boss_job_id, {
          db: { executeSql: (text, values) => client.query(text, values) },
        });
      }
      await client.query("SELECT pg_notify($1, $2)", [JOB_DONE_CHANNEL, id]);
      // A flow's step: the flow moves on (fails at this step, or its failure step runs).
      if (job.parent_job_id) await advanceFlows(client, ctx.boss, [id]);
      return { id, state: "canceled" };
    }
    if (job.status === "running") {
      await client.query("UPDATE job SET canceled_by = $2, cancel_reason = $3 WHERE id = $1", [
        id,
        canceledBy,
        reason,
      ]);
      await client.query("SELECT pg_notify($1, $2)", [JOB_CANCEL_CHANNEL, id]);
      return { id, state: "canceling" };
    }
    throw new AppError("CONFLICT", `job ${id} already finished (${job.status})`);
  });
}
