import { withTransaction, type Pool, type PoolClient } from "@millrace/db";
import type { Boss } from "../jobs/boss.ts";
import { appendLogs } from "../jobs/claim.ts";
import { redispatchJob } from "../jobs/enqueue.ts";
import { JOB_DONE_CHANNEL } from "../jobs/events.ts";
import { revokeTokensOfJob } from "../secrets/job-token.ts";
import { advanceFlows } from "../flows/engine/run.ts";
import { millraceMetrics } from "../metrics/registry.ts";

export const MAX_ZOMBIE_RESTARTS = 3;

interface StuckJob {
  id: string;
  tag: string;
  priority: number;
  timeout_secs: number;
  boss_job_id: string;
  zombie_restarts: number;
  worker_name: string | null;
  canceled_by: string | null;
  cancel_reason: string | null;
  last_ping_at: Date | null;
}

async function failStuckJob(
  client: PoolClient,
  job: StuckJob,
  status: "failure" | "canceled",
  error: { name: string; message: string },
): Promise<void> {
  await appendLogs(client, [{ jobId: job.id, chunk: `\n[millrace] ${error.message}\n` }]);
  await revokeTokensOfJob(client, job.id);
  await client.query(
    `UPDATE job SET status = $2::job_status, result = $3, completed_at = now() WHERE id = $1`,
    [job.id, status, JSON.stringify({ error })],
  );
  await client.query("SELECT pg_notify($1, $2)", [JOB_DONE_CHANNEL, job.id]);
}

async function restartStuckJob(
  client: PoolClient,
  boss: Boss,
  job: StuckJob,
  note: string,
  countAsZombie: boolean,
) {
  await appendLogs(client, [{ jobId: job.id, chunk: `\n[millrace] ${note}\n` }]);
  // The job's next claim issues it a new token.
  await revokeTokensOfJob(client, job.id);
  if (countAsZombie)
    await client.query("UPDATE job SET zombie_restarts = zombie_restarts + 1 WHERE id = $1", [job.id]);
  // The dead dispatch was used up by its claim; only the new one can complete the job.
  await redispatchJob(
    client,
    boss,
    { id: job.id, tag: job.tag, priority: job.priority, timeoutSecs: job.timeout_secs },
    new Date(),
  );
}

/** Where the leader publishes its zombie monitor's settings for the workers (see publishZombieSettings). */
export const ZOMBIE_SETTINGS_KEY = "zombie_monitor";

/** What workers read of the zombie monitor's settings (answered with each ping, see pingWorkers). */
export interface ZombieSettings {
  timeoutSecs: number;
  restart: boolean;
}

/**
 * Publishes the zombie monitor's settings in `instance_setting`: workers read them with each ping
 * and fence themselves (kill their running jobs) well before the monitor could hand those jobs to
 * another worker (see apps/worker/src/fence.ts). Written only when they changed.
 */
export async function publishZombieSettings(pool: Pool, options: ZombieOptions): Promise<void> {
  const value: ZombieSettings = { timeoutSecs: options.timeoutSecs, restart: options.restart };
  await pool.query(
    `INSERT INTO instance_setting (key, value, updated_at) VALUES ($1, $2::jsonb, now())
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
      WHERE instance_setting.value IS DISTINCT FROM EXCLUDED.value`,
    [ZOMBIE_SETTINGS_KEY, JSON.stringify(value)],
  );
}

/** The published settings, if they look right (null: none published, or not understood). */
export function parseZombieSettings(value: unknown): ZombieSettings | null {
  if (!value || typeof value !== "object") return null;
  const { timeoutSecs, restart } = value as Record<string, unknown>;
  if (typeof timeoutSecs !== "number" || !(timeoutSecs > 0)) return null;
  return { timeoutSecs, restart: restart !== false };
}

export interface ZombieOptions {
  /** Seconds without a ping after which a running job's worker is considered dead. */
  timeoutSecs: number;
  /** Put zombie jobs back in the queue (at most MAX_ZOMBIE_RESTARTS times) instead of failing them. */
  restart: boolean;
}

/**
 * Finds running jobs whose worker stopped pinging for `timeoutSecs` (counted from the database's
 * start at the earliest) and restarts or fails them,
 * saying so in their logs. Rows are locked with SKIP LOCKED, so two servers checking at once
 * never handle the same job twice (only the leader runs this anyway).
 */
export async function handleZombieJobs(
  pool: Pool,
  boss: Boss,
  options: ZombieOptions,
): Promise<{ restarted: string[]; failed: string[] }> {
  const zombieTags: string[] = [];
  const outcome = await withTransaction(pool, async (client) => {
    zombieTags.length = 0;
    const { rows } = await client.query<StuckJob>(
      `SELECT j.id, j.tag, j.priority, j.timeout_secs, j.boss_job_id, j.zombie_restarts, j.worker_name,
              j.canceled_by, j.cancel_reason, w.last_ping_at
         FROM job j LEFT JOIN worker_ping w ON w.name = j.worker_name
        WHERE j.status = 'running'
          -- A flow job has no worker: the flow engine advances it (flows/engine).
          AND j.kind NOT IN ('flow', 'flowpreview')
          AND j.started_at < now() - make_interval(secs => $1)
          -- A worker cannot ping while the database is down: silence before the database's own
          -- start does not count, or every job that finished during a restart (its worker
          -- retrying the completion) would be run again.
          AND GREATEST(COALESCE(w.last_ping_at::timestamptz, '-infinity'), pg_postmaster_start_time())
              < now() - make_interval(secs => $1)
        ORDER BY j.started_at
        LIMIT 500
        FOR UPDATE OF j SKIP LOCKED`,
      [options.timeoutSecs],
    );
    const restarted: string[] = [];
    const failed: string[] = [];
    for (const job of rows) {
      if (!job.canceled_by) zombieTags.push(job.tag);
      const since = job.last_ping_at ? `since ${job.last_ping_at.toISOString()}` : "at all";
      const lost = `worker ${job.worker_name ?? "?"} has not pinged ${since} (ZOMBIE_JOB_TIMEOUT ${options.timeoutSecs} s)`;
      if (job.canceled_by) {
        await failStuckJob(client, job, "canceled", {
          name: "Canceled",
          message: `canceled by ${job.canceled_by}${job.cancel_reason ? `: ${job.cancel_reason}` : ""} (${lost})`,
        });
        failed.push(job.id);
      } else if (options.restart && job.zombie_restarts < MAX_ZOMBIE_RESTARTS) {
        const attempt = job.zombie_restarts + 1;
        await restartStuckJob(
          client,
          boss,
          job,
          `${lost}: job put back in the queue (zombie restart ${attempt} of ${MAX_ZOMBIE_RESTARTS})`,
          true,
        );
        restarted.push(job.id);
      } else {
        const why = options.restart
          ? `restarted ${job.zombie_restarts} times already, giving up`
          : "RESTART_ZOMBIE_JOBS is false";
        await failStuckJob(client, job, "failure", { name: "ZombieJob", message: `${lost}; ${why}` });
        failed.push(job.id);
      }
    }
    // Flow steps among them: their flows move on (fail at that step, or run their failure step).
    await advanceFlows(client, boss, failed);
    return { restarted, failed };
  });
  // Counted once committed: a rolled-back check found nothing.
  for (const tag of zombieTags) millraceMetrics().jobsCompleted.inc({ tag, status: "zombie" });
  return outcome;
}

/**
 * Puts jobs a stopping worker could not finish back in the queue at once (without waiting for
 * the zombie timeout), unless they were meanwhile canceled, completed or re-dispatched.
 */
export async function requeueAbandonedJobs(
  pool: Pool,
  boss: Boss,
  jobs: { id: string; bossJobId: string; workerName: string }[],
  why = "stopped before the job finished",
  /**
   * Counted as a zombie restart (a worker that fenced itself: it lost the database, as a dead
   * worker would): at most MAX_ZOMBIE_RESTARTS, then (or with `restart` false) the job fails.
   */
  zombie: { restart: boolean } | null = null,
): Promise<void> {
  for (const abandoned of jobs) {
    await withTransaction(pool, async (client) => {
      // Status with IS NOT DISTINCT FROM: the row is found by primary key (see claimStatement in jobs/claim.ts).
      const { rows } = await client.query<StuckJob>(
        `SELECT id, tag, priority, timeout_secs, boss_job_id, zombie_restarts, worker_name, canceled_by,
                cancel_reason, NULL::timestamp AS last_ping_at
           FROM job WHERE id = $1 AND boss_job_id = $2 AND status IS NOT DISTINCT FROM 'running' FOR UPDATE`,
        [abandoned.id, abandoned.bossJobId],
      );
      const job = rows[0];
      if (!job) return;
      if (job.canceled_by) {
        await failStuckJob(client, job, "canceled", {
          name: "Canceled",
          message: `canceled by ${job.canceled_by}${job.cancel_reason ? `: ${job.cancel_reason}` : ""}`,
        });
        await advanceFlows(client, boss, [job.id]);
        return;
      }
      if (zombie && !(zombie.restart && job.zombie_restarts < MAX_ZOMBIE_RESTARTS)) {
        const giveUp = zombie.restart
          ? `restarted ${job.zombie_restarts} times already, giving up`
          : "RESTART_ZOMBIE_JOBS is false";
        await failStuckJob(client, job, "failure", {
          name: "ZombieJob",
          message: `worker ${abandoned.workerName} ${why}; ${giveUp}`,
        });
        await advanceFlows(client, boss, [job.id]);
        return;
      }
      const counted = zombie ? ` (zombie restart ${job.zombie_restarts + 1} of ${MAX_ZOMBIE_RESTARTS})` : "";
      await restartStuckJob(
        client,
        boss,
        job,
        `worker ${abandoned.workerName} ${why}: job put back in the queue${counted}`,
        zombie !== null,
      );
    });
  }
}

// A queued job whose pg-boss dispatch is gone or stuck this long is re-dispatched.
const ORPHAN_GRACE_SECS = 60;

/**
 * Safety net for the rare job left queued in our table while its pg-boss job is no longer
 * claimable (a worker lost its connection between claiming and marking the job running, or the
 * pg-boss job was expired or deleted): gives it a fresh dispatch. Reads pg-boss's table, never
 * writes it directly.
 */
export async function repairOrphanedJobs(pool: Pool, boss: Boss): Promise<string[]> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; tag: string; priority: number; timeout_secs: number }>(
      `SELECT j.id, j.tag, j.priority, j.timeout_secs
         FROM job j
         LEFT JOIN pgboss.job b ON b.name = j.tag AND b.id = j.boss_job_id
        WHERE j.status = 'queued' AND j.scheduled_for < now() - make_interval(secs => $1)
          -- A flow run waiting for its concurrency limit has no dispatch: the flow engine starts it.
          AND j.kind NOT IN ('flow', 'flowpreview')
          AND (b.id IS NULL OR b.state NOT IN ('created', 'retry'))
        LIMIT 500
        FOR UPDATE OF j SKIP LOCKED`,
      [ORPHAN_GRACE_SECS],
    );
    for (const job of rows) {
      await appendLogs(client, [
        { jobId: job.id, chunk: "[millrace] job had lost its dispatch; re-dispatched\n" },
      ]);
      await redispatchJob(
        client,
        boss,
        { id: job.id, tag: job.tag, priority: job.priority, timeoutSecs: job.timeout_secs },
        new Date(),
      );
    }
    return rows.map((row) => row.id);
  });
}
