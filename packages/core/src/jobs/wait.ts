import { AppError, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../workspaces.ts";
import { JOB_DONE_CHANNEL } from "./events.ts";
import type { JobsContext } from "./run.ts";

export interface FinishedJob {
  status: "success" | "failure" | "canceled";
  result: unknown;
}

/**
 * Waits for a job of the caller's workspace to finish and returns its outcome: woken by NOTIFY,
 * re-reading the row each time (and every 2 s as a safety net), so a missed notification only
 * delays the answer. Reads only status and result: run_wait_result's hot path.
 */
export async function waitForResult(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  timeoutMs: number,
): Promise<FinishedJob> {
  requirePermission(membership, "job.read");
  let wake: () => void = () => {};
  const unsubscribe = ctx.events.on(JOB_DONE_CHANNEL, id, () => wake());
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await ctx.pool.query<{ status: string; result: unknown }>(
        "SELECT status, result FROM job WHERE id = $1 AND workspace_id = $2",
        [id, membership.workspace.id],
      );
      const row = rows[0];
      if (!row) throw notFound(`job ${id}`);
      if (row.status === "success" || row.status === "failure" || row.status === "canceled") {
        return { status: row.status, result: row.result };
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new AppError(
          "LIMIT_EXCEEDED",
          `timed out after ${Math.round(timeoutMs / 1000)} s waiting for job ${id}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 2000));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    unsubscribe();
  }
}
