import type { PoolClient } from "@millrace/db";
import type { Boss } from "../jobs/boss.ts";
import { bossDb, redispatchJob } from "../jobs/enqueue.ts";
import { JOB_DONE_CHANNEL, NOTIFY_CHUNKS } from "../jobs/events.ts";
import { LOCK_HOLD_MS } from "./locks.ts";
import { recordAudit } from "../audit/index.ts";

interface DependencyJobRow {
  id: string;
  workspace_id: string;
  script_hash: string;
  status: "success" | "failure" | "canceled";
  result: { lock?: unknown; error?: { message?: unknown } } | null;
}

/**
 * Runs inside the completion transaction of dependency jobs: writes the script version's lock
 * (or why it could not be computed) and releases the jobs that waited for it, or fails them.
 * Only completions that really completed their job count (a stale dispatch leaves it running).
 */
export async function settleDependencyJobs(
  client: PoolClient,
  boss: Boss,
  completions: { job: { id: string; kind?: string } }[],
): Promise<void> {
  const ids = completions.filter((c) => c.job.kind === "dependency").map((c) => c.job.id);
  if (ids.length === 0) return;
  const { rows } = await client.query<DependencyJobRow>(
    `SELECT id, workspace_id, script_hash, status, result FROM job
      WHERE id = ANY($1::uuid[]) AND kind = 'dependency' AND script_hash IS NOT NULL
        AND status IN ('success', 'failure', 'canceled')`,
    [ids],
  );
  for (const row of rows) {
    const lock = row.status === "success" ? row.result?.lock : undefined;
    if (typeof lock === "string") {
      const { rows: locked } = await client.query<{ path: string; created_by: string }>(
        "UPDATE script SET lock = $3, lock_error = NULL WHERE workspace_id = $1 AND hash = $2 RETURNING path, created_by",
        [row.workspace_id, row.script_hash, lock],
      );
      // The lock is part of the script in git: its own audit row makes git sync commit it, as the
      // deployer's change.
      if (locked[0])
        await recordAudit(client, locked[0].created_by, {
          workspaceId: row.workspace_id,
          operation: "scripts.lock",
          resource: locked[0].path,
          parameters: { hash: row.script_hash },
        });
      await releaseHeldJobs(client, boss, row, lock);
    } else {
      const reason =
        row.status === "canceled"
          ? "the dependency job was canceled"
          : String(row.result?.error?.message ?? "the dependency job did not return a lock");
      await client.query(
        "UPDATE script SET lock_error = $3 WHERE workspace_id = $1 AND hash = $2 AND lock IS NULL",
        [row.workspace_id, row.script_hash, reason],
      );
      await failHeldJobs(client, boss, row, reason);
    }
  }
}

// Jobs of a version enqueued while its lock was pending are exactly its queued jobs without a lock.
const HELD = `workspace_id = $1 AND script_hash = $2 AND kind = 'script' AND status = 'queued' AND lock IS NULL`;

async function releaseHeldJobs(client: PoolClient, boss: Boss, row: DependencyJobRow, lock: string) {
  const { rows } = await client.query<{
    id: string;
    tag: string;
    priority: number;
    timeout_secs: number | null;
    scheduled_for: Date;
    boss_job_id: string | null;
  }>(
    `UPDATE job SET lock = $3 WHERE ${HELD}
     RETURNING id, tag, priority, timeout_secs, scheduled_for, boss_job_id`,
    [row.workspace_id, row.script_hash, lock],
  );
  const now = Date.now();
  for (const job of rows) {
    if (job.boss_job_id) await boss.cancel(job.tag, job.boss_job_id, { db: bossDb(client) });
    const asked = job.scheduled_for.getTime() - LOCK_HOLD_MS;
    await redispatchJob(
      client,
      boss,
      { id: job.id, tag: job.tag, priority: job.priority, timeoutSecs: job.timeout_secs ?? 0 },
      new Date(Math.max(now, asked)),
    );
  }
}

async function failHeldJobs(client: PoolClient, boss: Boss, row: DependencyJobRow, reason: string) {
  const message = `dependencies could not be installed: ${reason}`;
  const { rows } = await client.query<{ id: string; tag: string; boss_job_id: string | null }>(
    `UPDATE job SET status = 'failure', completed_at = now(), result = $3 WHERE ${HELD}
     RETURNING id, tag, boss_job_id`,
    [row.workspace_id, row.script_hash, JSON.stringify({ error: { name: "DependencyError", message } })],
  );
  if (rows.length === 0) return;
  for (const job of rows) {
    if (job.boss_job_id) await boss.cancel(job.tag, job.boss_job_id, { db: bossDb(client) });
  }
  await client.query(
    `WITH failed AS (SELECT unnest($1::uuid[]) AS id),
          logged AS (INSERT INTO job_log (job_id, logs) SELECT id, $2 FROM failed
                     ON CONFLICT (job_id) DO UPDATE SET logs = job_log.logs || EXCLUDED.logs)
     SELECT pg_notify($3, string_agg(id::text, ',')) FROM ${NOTIFY_CHUNKS("failed")}`,
    [rows.map((job) => job.id), `[millrace] ${message}\n`, JOB_DONE_CHANNEL],
  );
}
