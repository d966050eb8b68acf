import { withTransaction, type Pool } from "@millrace/db";
import type { Language } from "@millrace/runtime";
import type { Boss } from "./boss.ts";
import { JOB_DONE_CHANNEL, JOB_LOG_CHANNEL } from "./events.ts";

/** What a worker needs to run a claimed job: ids and code, no user rows. */
export interface ClaimedJob {
  id: string;
  workspaceId: string;
  kind: string;
  scriptPath: string | null;
  language: Language;
  content: string;
  args: Record<string, unknown>;
  argOrder: string[];
  tag: string;
  timeoutSecs: number;
  permissionedAs: string;
  createdBy: string;
}

/**
 * The tag among `tags` whose next due job should run first (highest priority, then oldest). Our
 * own job table answers this in one indexed query, so a worker serving many tags does not poll
 * every pg-boss queue in turn.
 */
export async function nextDueTag(pool: Pool, tags: readonly string[]): Promise<string | null> {
  const { rows } = await pool.query<{ tag: string }>(
    `SELECT tag FROM job
      WHERE status = 'queued' AND tag = ANY($1) AND scheduled_for <= now()
      ORDER BY priority DESC, scheduled_for, created_at
      LIMIT 1`,
    [tags],
  );
  return rows[0]?.tag ?? null;
}

/**
 * Claims the next job of `tag` through pg-boss, then marks our row running. A job canceled
 * between the two steps is settled in pg-boss and skipped.
 */
export async function claimJob(
  pool: Pool,
  boss: Boss,
  tag: string,
  workerName: string,
): Promise<ClaimedJob | null> {
  for (;;) {
    const [bossJob] = await boss.fetch<{ jobId: string }>(tag, { batchSize: 1 });
    if (!bossJob) return null;
    const { rows } = await pool.query(
      `UPDATE job SET status = 'running', started_at = now(), worker_name = $2
        WHERE id = $1 AND status = 'queued'
        RETURNING id, workspace_id, kind, script_path, language, content, args, arg_order, tag, timeout_secs,
                  permissioned_as, created_by`,
      [bossJob.data.jobId, workerName],
    );
    const row = rows[0];
    if (!row) {
      await boss.complete(tag, bossJob.id);
      continue;
    }
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      kind: row.kind,
      scriptPath: row.script_path,
      language: row.language,
      content: row.content ?? "",
      args: row.args ?? {},
      argOrder: row.arg_order ?? [],
      tag: row.tag,
      timeoutSecs: row.timeout_secs,
      permissionedAs: row.permissioned_as,
      createdBy: row.created_by,
    };
  }
}

/** Appends a chunk of output to a running job's log and tells log streams. */
export async function appendJobLog(pool: Pool, jobId: string, chunk: string): Promise<void> {
  await pool.query(
    `WITH appended AS (
       INSERT INTO job_log (job_id, logs) VALUES ($1, $2)
       ON CONFLICT (job_id) DO UPDATE SET logs = job_log.logs || EXCLUDED.logs
     )
     SELECT pg_notify($3, $1::text)`,
    [jobId, chunk, JOB_LOG_CHANNEL],
  );
}

export type JobOutcome =
  | { status: "success"; result: unknown }
  | { status: "failure"; result: { error: { name: string; message: string; stack?: string } } }
  | { status: "canceled"; result: { error: { name: string; message: string } } };

/**
 * Records the outcome, the last log chunk and settles the pg-boss job in one transaction: either
 * all of it is durable or none. Only a row still running on this worker is completed, so a job
 * that was canceled or handed to another worker meanwhile is never completed twice.
 */
export async function completeJob(
  pool: Pool,
  boss: Boss,
  job: Pick<ClaimedJob, "id" | "tag">,
  workerName: string,
  outcome: JobOutcome,
  pendingLog: string,
): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    if (pendingLog) {
      await client.query(
        `INSERT INTO job_log (job_id, logs) VALUES ($1, $2)
         ON CONFLICT (job_id) DO UPDATE SET logs = job_log.logs || EXCLUDED.logs`,
        [job.id, pendingLog],
      );
    }
    const updated = await client.query(
      `UPDATE job SET status = $2, result = $3, completed_at = now()
        WHERE id = $1 AND status = 'running' AND worker_name = $4`,
      [job.id, outcome.status, JSON.stringify(outcome.result ?? null), workerName],
    );
    await boss.complete(job.tag, job.id, null, {
      db: { executeSql: (text, values) => client.query(text, values) },
    });
    await client.query("SELECT pg_notify($1, $2)", [JOB_DONE_CHANNEL, job.id]);
    return (updated.rowCount ?? 0) > 0;
  });
}
