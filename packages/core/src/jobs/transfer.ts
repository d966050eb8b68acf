// `wmill jobs pull` / `wmill jobs push`: a workspace's jobs exported for a move between instances,
// imported on the other side, and deleted from the first. Only workspace admins do this: an
// export holds every user's arguments, results and logs.
import type { Job, JobStatus } from "@millrace/db";
import { withTransaction, type PoolClient } from "@millrace/db";
import { recordAudit } from "../audit/index.ts";
import { AppError, invalidInput } from "../errors.ts";
import { runFlowByPath } from "../flows/engine/run.ts";
import { ALL_GROUP } from "../people/groups.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import { FINISHED_STATUSES, findInListOrder } from "./list-order.ts";
import { MAX_JOBS_PER_PAGE } from "./queries.ts";
import { runScriptByHash, runScriptByPath, type JobsContext, type RunOptions } from "./run.ts";
import { storableJson, storableText } from "./storable.ts";

export type ExportedJob = Job & { logs: string };

/**
 * One page of the workspace's finished (`completed`) or not yet finished (`queued`, running
 * included) jobs, flow steps included, oldest first, with their logs.
 */
export async function exportJobs(
  ctx: JobsContext,
  membership: Membership,
  scope: "completed" | "queued",
  page = 1,
  perPage = 30,
): Promise<ExportedJob[]> {
  requirePermission(membership, "job.transfer");
  if (!Number.isInteger(page) || page < 1) throw invalidInput("page", "must be at least 1");
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_JOBS_PER_PAGE)
    throw invalidInput("per_page", `must be from 1 to ${MAX_JOBS_PER_PAGE}`);
  const statuses = new Set<JobStatus>(scope === "completed" ? FINISHED_STATUSES : ["queued", "running"]);
  const jobs = await findInListOrder(
    ctx.pool,
    membership.workspace.id,
    statuses,
    "asc",
    { skip: (page - 1) * perPage, take: perPage },
    (group, range) =>
      ctx.db.job.findMany({
        where: { AND: [{ workspaceId: membership.workspace.id }, group] },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        ...range,
        include: { log: true },
      }),
  );
  return jobs.map(({ log, ...job }) => ({ ...job, logs: log?.logs ?? "" }));
}

/** A finished job as an export carries it (Windmill's ExportableCompletedJob, the fields kept). */
export interface ImportedCompletedJob {
  id: string;
  kind: string;
  status: (typeof FINISHED_STATUSES)[number];
  scriptPath?: string | null;
  scriptHash?: string | null;
  language?: string | null;
  content?: string | null;
  args?: Record<string, unknown> | null;
  result?: unknown;
  logs?: string | null;
  tag?: string | null;
  priority?: number | null;
  createdBy: string;
  permissionedAs: string;
  createdAt: Date;
  startedAt?: Date | null;
  completedAt?: Date | null;
  canceledBy?: string | null;
  cancelReason?: string | null;
  parentJobId?: string | null;
  rawFlow?: unknown;
  flowStatus?: unknown;
  flowStepId?: string | null;
}

/**
 * Who a job was created by and runs as decides who sees it and what it may do: an import may name
 * only this workspace's members (disabled ones included: history keeps them) and groups, never an
 * arbitrary user (an admin could otherwise file jobs under anyone's name).
 */
async function checkJobOwners(
  client: PoolClient,
  workspaceId: string,
  jobs: ImportedCompletedJob[],
): Promise<void> {
  const { rows: members } = await client.query<{ username: string }>(
    `SELECT u.username FROM workspace_member m JOIN "user" u ON u.id = m.user_id WHERE m.workspace_id = $1`,
    [workspaceId],
  );
  const { rows: groups } = await client.query<{ name: string }>(
    `SELECT name FROM "group" WHERE workspace_id = $1`,
    [workspaceId],
  );
  const usernames = new Set(members.map((row) => row.username));
  const groupNames = new Set([ALL_GROUP, ...groups.map((row) => row.name)]);
  jobs.forEach((job, index) => {
    if (!usernames.has(job.createdBy))
      throw invalidInput(
        `[${index}].created_by`,
        `${job.createdBy} is not a member of workspace ${workspaceId}: add them before importing their jobs`,
      );
    const [kind, name = ""] = job.permissionedAs.split(/\/(.*)/s);
    const known = kind === "u" ? usernames.has(name) : kind === "g" && groupNames.has(name);
    if (!known)
      throw invalidInput(
        `[${index}].permissioned_as`,
        `${job.permissionedAs} is not a member or group of workspace ${workspaceId}`,
      );
  });
}

/**
 * Finished jobs recorded as they were (history: nothing runs), all or none: an id that already
 * exists refuses the whole import, naming it (Windmill: the job id is unique).
 */
export async function importCompletedJobs(
  ctx: JobsContext,
  membership: Membership,
  jobs: ImportedCompletedJob[],
): Promise<number> {
  requirePermission(membership, "job.transfer");
  const workspaceId = membership.workspace.id;
  await withTransaction(ctx.pool, async (client) => {
    const { rows: taken } = await client.query<{ id: string }>(
      "SELECT id FROM job WHERE id = ANY($1::uuid[]) LIMIT 1",
      [jobs.map((job) => job.id)],
    );
    if (taken[0]) {
      const index = jobs.findIndex((job) => job.id === taken[0]!.id);
      throw new AppError("CONFLICT", `[${index}].id: job ${taken[0].id} already exists`, `[${index}].id`);
    }
    await checkJobOwners(client, workspaceId, jobs);
    for (const job of jobs) {
      const flow = job.kind === "flow" || job.kind === "flowpreview";
      await client.query(
        `INSERT INTO job (id, workspace_id, kind, script_path, script_hash, language, content, args, tag,
           priority, status, result, created_by, permissioned_as, created_at, scheduled_for, started_at,
           completed_at, canceled_by, cancel_reason, parent_job_id, raw_flow, flow_status, flow_step_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11::job_status, $12::jsonb, $13, $14, $15, $15,
           $16, $17, $18, $19, $20, $21::jsonb, $22::jsonb, $23)`,
        [
          job.id,
          workspaceId,
          job.kind,
          job.scriptPath ?? null,
          job.scriptHash ?? null,
          job.language ?? (flow ? "flow" : "bash"),
          job.content ?? null,
          JSON.stringify(job.args ?? {}),
          job.tag ?? (flow ? "flow" : (job.language ?? "bash")),
          job.priority ?? 0,
          job.status,
          storableJson(job.result ?? null),
          job.createdBy,
          job.permissionedAs,
          job.createdAt,
          job.startedAt ?? job.createdAt,
          job.completedAt ?? job.startedAt ?? job.createdAt,
          job.canceledBy ?? null,
          job.cancelReason ?? null,
          // A parent that did not come along is not invented.
          job.parentJobId && jobs.some((other) => other.id === job.parentJobId) ? job.parentJobId : null,
          job.rawFlow === undefined ? null : JSON.stringify(job.rawFlow),
          job.flowStatus === undefined ? null : JSON.stringify(job.flowStatus),
          job.flowStepId ?? null,
        ],
      );
      if (job.logs) {
        await client.query("INSERT INTO job_log (job_id, logs) VALUES ($1, $2)", [
          job.id,
          storableText(job.logs),
        ]);
      }
    }
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: "jobs.import_completed",
      resource: `${jobs.length} job(s)`,
    });
  });
  return jobs.length;
}

/** A job not yet run, as an export carries it: what it runs and with which arguments. */
export interface ImportedQueuedJob {
  kind: string;
  scriptPath?: string | null;
  scriptHash?: string | null;
  content?: string | null;
  args?: Record<string, unknown> | null;
  scheduledFor?: Date | null;
  priority?: number | null;
}

/**
 * Jobs not yet run are started again here, as new jobs run by the importing admin, through the
 * ordinary run path (the script's or flow's current checks, the admin's rights, a fresh id): an
 * export's `permissioned_as` names a user of another instance, and running code as them would
 * let a file decide whose rights a job gets. Deployed scripts (by hash, else by path) and flows
 * (by path) only; all or none.
 */
export async function importQueuedJobs(
  ctx: JobsContext,
  membership: Membership,
  jobs: ImportedQueuedJob[],
): Promise<string[]> {
  requirePermission(membership, "job.transfer");
  jobs.forEach((job, index) => {
    const flow = job.kind === "flow";
    if (!flow && job.kind !== "script")
      throw invalidInput(
        `[${index}].job_kind`,
        `a queued ${job.kind} job cannot be imported (only deployed scripts and flows; run previews again from the editor)`,
      );
    if (!job.scriptPath && !(job.scriptHash && !flow))
      throw invalidInput(`[${index}].script_path`, "is required to start the job here");
  });
  // The same version where this workspace has it (a copy of the source's history), else the
  // path's current version: another instance's hashes are not found here.
  const runScriptVersion = async (job: ImportedQueuedJob, args: unknown, options: RunOptions) => {
    if (job.scriptHash) {
      try {
        return await runScriptByHash(ctx, membership, job.scriptHash, args, options);
      } catch (error) {
        if (!(error instanceof AppError && error.code === "NOT_FOUND" && job.scriptPath)) throw error;
      }
    }
    return runScriptByPath(ctx, membership, job.scriptPath!, args, options);
  };
  const ids = await withTransaction(ctx.pool, async (transaction) => {
    const started: string[] = [];
    for (const job of jobs) {
      const options = { transaction, scheduledFor: job.scheduledFor ?? null, priority: job.priority ?? null };
      const args = job.args ?? {};
      if (job.kind === "flow")
        started.push(await runFlowByPath(ctx, membership, job.scriptPath!, args, { transaction }));
      else started.push(await runScriptVersion(job, args, options));
    }
    await recordAudit(transaction, membership.principal, {
      workspaceId: membership.workspace.id,
      operation: "jobs.import_queued",
      resource: `${jobs.length} job(s)`,
    });
    return started;
  });
  return ids;
}

/**
 * Deletes jobs of the workspace by id, with their logs (after a `wmill jobs pull`). A running job
 * is refused (cancel it first): its worker would go on running code whose record is gone. A
 * queued one is deleted with its record; its dispatch finds no job and is dropped.
 */
export async function deleteJobs(ctx: JobsContext, membership: Membership, ids: string[]): Promise<number> {
  requirePermission(membership, "job.transfer");
  const workspaceId = membership.workspace.id;
  return withTransaction(ctx.pool, async (client) => {
    const { rows: running } = await client.query<{ id: string }>(
      "SELECT id FROM job WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND status = 'running' FOR UPDATE",
      [workspaceId, ids],
    );
    if (running[0]) throw new AppError("CONFLICT", `job ${running[0].id} is running; cancel it first`);
    // Steps of a deleted flow go with it (they are parts of its record).
    const { rowCount } = await client.query(
      `DELETE FROM job WHERE workspace_id = $1
          AND (id = ANY($2::uuid[]) OR root_job_id = ANY($2::uuid[]) OR parent_job_id = ANY($2::uuid[]))`,
      [workspaceId, ids],
    );
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: "jobs.delete",
      resource: `${ids.length} job(s)`,
    });
    return rowCount ?? 0;
  });
}
