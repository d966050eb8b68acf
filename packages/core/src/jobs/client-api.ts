// What Windmill's own clients ask of a job beyond reading it whole: windmill-client's waitJob
// (get_result_maybe), getRootJobId, setProgress/getProgress, `wmill job logs` and `wmill job
// rerun`, and the queue position `wmill script run` reports while it waits.
import type { JobStatus } from "@millrace/db";
import { canSeeJob } from "../access.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { runFlowByPath } from "../flows/engine/run.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import { getJob, isFinished, isJobId } from "./queries.ts";
import { runPreview, runScriptByHash, runScriptByPath, type JobsContext } from "./run.ts";
import { inColumnOrder } from "./result-columns.ts";

/** windmill-client's getResultMaybe: where a job is, and its result once it has finished. */
export interface ResultMaybe {
  completed: boolean;
  result: unknown;
  success: boolean;
  started: boolean;
}

interface JobRow {
  status: JobStatus;
  createdBy: string;
  scriptPath: string | null;
}

/** The few columns of a job of the caller's workspace that the caller may see; 404 otherwise. */
async function visibleJobRow<T extends JobRow>(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  columns: string,
): Promise<T> {
  requirePermission(membership, "job.read");
  if (!isJobId(id)) throw notFound(`job ${id}`);
  const { rows } = await ctx.pool.query<T>(
    `SELECT status, created_by AS "createdBy", script_path AS "scriptPath", ${columns}
       FROM job WHERE id = $1 AND workspace_id = $2`,
    [id, membership.workspace.id],
  );
  const row = rows[0];
  if (!row || !(await canSeeJob(ctx, membership, row))) throw notFound(`job ${id}`);
  return row;
}

export async function getResultMaybe(
  ctx: JobsContext,
  membership: Membership,
  id: string,
): Promise<ResultMaybe> {
  const row = await visibleJobRow<
    JobRow & { result: unknown; resultColumns: string[] | null; startedAt: Date | null }
  >(ctx, membership, id, `result, result_columns AS "resultColumns", started_at AS "startedAt"`);
  const completed = isFinished(row);
  return {
    completed,
    result: completed ? inColumnOrder(row.result, row.resultColumns) : null,
    success: row.status === "success",
    started: completed || row.status === "running" || row.startedAt !== null,
  };
}

/** The job's log (Windmill's get_logs): the text, empty when the job has written none yet. */
export async function getJobLogs(ctx: JobsContext, membership: Membership, id: string): Promise<string> {
  return (await getJob(ctx, membership, id)).logs;
}

/**
 * The job at the root of the job's lineage: the flow run a step belongs to, the first job of a
 * chain of jobs started from jobs (windmill-client's `parent_job`), else the job itself.
 */
export async function getRootJobId(ctx: JobsContext, membership: Membership, id: string): Promise<string> {
  const row = await visibleJobRow<JobRow & { rootJobId: string | null; parentJobId: string | null }>(
    ctx,
    membership,
    id,
    `root_job_id AS "rootJobId", parent_job_id AS "parentJobId"`,
  );
  return row.rootJobId ?? row.parentJobId ?? id;
}

/**
 * Who started a job through windmill-client inside another job: `parent_job` (its own WM_JOB_ID)
 * and `root_job` (WM_ROOT_FLOW_JOB_ID). The parent must be a job of the workspace the caller may
 * see. A flow run as `parent_job` is recorded only as the root: a flow's children are its steps,
 * which its engine alone starts.
 */
export async function jobLineage(
  ctx: JobsContext,
  membership: Membership,
  parentJob: string | undefined,
  rootJob: string | undefined,
): Promise<{ parentJobId: string | null; rootJobId: string | null } | undefined> {
  if (!parentJob && !rootJob) return undefined;
  const find = async (field: string, id: string) => {
    if (!isJobId(id)) throw invalidInput(field, `not a job id: "${id}"`);
    try {
      return await visibleJobRow<JobRow & { kind: string; rootJobId: string | null }>(
        ctx,
        membership,
        id,
        `kind, root_job_id AS "rootJobId"`,
      );
    } catch (error) {
      if (error instanceof AppError && error.code === "NOT_FOUND")
        throw invalidInput(field, `no job ${id} in this workspace`);
      throw error;
    }
  };
  const parent = parentJob ? await find("parent_job", parentJob) : undefined;
  if (rootJob) await find("root_job", rootJob);
  const isFlow = parent && (parent.kind === "flow" || parent.kind === "flowpreview");
  return {
    parentJobId: parent && !isFlow ? parentJob! : null,
    rootJobId: rootJob ?? parent?.rootJobId ?? parentJob ?? null,
  };
}

const FLOW_KINDS = new Set(["flow", "flowpreview"]);

/**
 * Windmill's setProgress: a percentage from 0 to 99 that never goes back (100 is the job's
 * success). Kept on the job row, so every web process answers the same.
 */
export async function setJobProgress(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  percent: number,
): Promise<void> {
  requirePermission(membership, "job.run");
  const row = await visibleJobRow<JobRow & { kind: string }>(ctx, membership, id, "kind");
  if (FLOW_KINDS.has(row.kind)) {
    throw invalidInput("id", "progress is set on a script job (a flow's steps), not on a flow run");
  }
  const clamped = Math.max(0, Math.min(99, Math.floor(percent)));
  await ctx.pool.query(
    `UPDATE job SET progress = GREATEST(coalesce(progress, 0), $3::int) WHERE id = $1 AND workspace_id = $2`,
    [id, membership.workspace.id, clamped],
  );
}

/** Windmill's getProgress: the last progress set, 100 once the job succeeded, null if none. */
export async function getJobProgress(
  ctx: JobsContext,
  membership: Membership,
  id: string,
): Promise<number | null> {
  const row = await visibleJobRow<JobRow & { kind: string; progress: number | null }>(
    ctx,
    membership,
    id,
    "kind, progress",
  );
  if (row.status === "success") return 100;
  return row.progress;
}

/**
 * Windmill's queue position of a job scheduled at `scheduledForMs` (what `wmill script run`
 * reports while it waits): 1 + the jobs of the workspace queued before it; none when nothing of
 * the workspace waits at or before that time.
 */
export async function queuePosition(
  ctx: JobsContext,
  membership: Membership,
  scheduledForMs: number,
): Promise<number | null> {
  requirePermission(membership, "job.read");
  const at = new Date(scheduledForMs);
  if (Number.isNaN(at.getTime())) throw invalidInput("scheduled_for", "is not a valid time in milliseconds");
  const { rows } = await ctx.pool.query<{ ahead: number }>(
    `SELECT count(*)::int AS ahead FROM job
      WHERE workspace_id = $1 AND status = 'queued' AND scheduled_for <= now() AND scheduled_for <= $2`,
    [membership.workspace.id, at],
  );
  const ahead = rows[0]?.ahead ?? 0;
  return ahead > 0 ? ahead : null;
}

/** When a job of the workspace is (or was) due, in milliseconds (Windmill's getScheduledFor). */
export async function jobScheduledFor(ctx: JobsContext, membership: Membership, id: string): Promise<number> {
  const row = await visibleJobRow<JobRow & { scheduledFor: Date }>(
    ctx,
    membership,
    id,
    `scheduled_for AS "scheduledFor"`,
  );
  return row.scheduledFor.getTime();
}

/** Windmill's per-path options of a batch re-run: static argument overrides, latest version. */
export interface RerunOptions {
  input_transforms?: Record<string, { type?: string; value?: unknown; expr?: string }>;
  use_latest_version?: boolean;
}

function rerunArgs(jobArgs: unknown, options: RerunOptions | undefined): Record<string, unknown> {
  const args = { ...(jobArgs as Record<string, unknown>) };
  for (const [name, transform] of Object.entries(options?.input_transforms ?? {})) {
    if (transform.type !== "static") {
      throw invalidInput(
        `input_transforms.${name}`,
        `only static transforms are supported, got "${transform.type ?? "none"}"`,
      );
    }
    args[name] = transform.value;
  }
  return args;
}

/**
 * Windmill's batch re-run: each job run again with its arguments (overridden by the static input
 * transforms of its path), as its caller. One line per job: the new job's id, or `Error: …`.
 * Scripts run the version the job ran unless `use_latest_version`; flows run their latest version.
 */
export async function rerunJobs(
  ctx: JobsContext,
  membership: Membership,
  input: {
    jobIds: string[];
    scriptOptions?: Record<string, RerunOptions>;
    flowOptions?: Record<string, RerunOptions>;
  },
): Promise<string[]> {
  requirePermission(membership, "job.run");
  const lines: string[] = [];
  for (const id of input.jobIds) {
    try {
      const job = await getJob(ctx, membership, id, { withLogs: false });
      if (job.kind === "script" && job.scriptPath) {
        const options = input.scriptOptions?.[job.scriptPath];
        const args = rerunArgs(job.args, options);
        lines.push(
          options?.use_latest_version || !job.scriptHash
            ? await runScriptByPath(ctx, membership, job.scriptPath, args)
            : await runScriptByHash(ctx, membership, job.scriptHash, args),
        );
      } else if (job.kind === "flow" && job.scriptPath) {
        const args = rerunArgs(job.args, input.flowOptions?.[job.scriptPath]);
        lines.push(await runFlowByPath(ctx, membership, job.scriptPath, args));
      } else if (job.kind === "preview" && job.content !== null) {
        lines.push(
          await runPreview(ctx, membership, {
            language: job.language,
            content: job.content,
            args: job.args,
            path: job.scriptPath,
          }),
        );
      } else {
        throw new AppError("INVALID_INPUT", `a ${job.kind} job cannot be re-run`);
      }
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      lines.push(`Error: job ${id}: ${error.message}`);
    }
  }
  return lines;
}

/**
 * The email addresses of the users who started jobs (Windmill's Job `email`), by username. A
 * username without an account (removed since) is answered with itself.
 */
export async function creatorEmails(ctx: JobsContext, usernames: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(usernames)];
  const emails = new Map(unique.map((name) => [name, name]));
  if (unique.length === 0) return emails;
  const { rows } = await ctx.pool.query<{ username: string; email: string }>(
    `SELECT username, email FROM "user" WHERE username = ANY($1::text[])`,
    [unique],
  );
  for (const row of rows) emails.set(row.username, row.email);
  return emails;
}
