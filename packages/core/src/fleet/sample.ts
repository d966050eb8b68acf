// The fleet's state, sampled by the leader (apps/web/server/background.ts) every few seconds into
// queue_sample and worker_group_sample. Everything that watches the fleet reads the latest sample:
// each server's /metrics, the Workers page's charts and the instance's alerts. So the job table is
// grouped once per interval for the whole instance, however many servers are scraped how often.
import { prepared, type Pool } from "@millrace/db";
import { DEFAULT_PING_SINCE_SECS } from "../workers/ping-window.ts";

/** How long samples are kept: the charts show the last hour, the simulator's "my data" a day. */
export const FLEET_SAMPLE_RETENTION_SECS = 24 * 3600;

export interface QueueSampleRow {
  tag: string;
  queued: number;
  scheduled: number;
  running: number;
  oldestWaitSecs: number;
  workers: number;
}

export interface WorkerGroupSampleRow {
  workerGroup: string;
  alive: number;
  busy: number;
  occupancy15s: number | null;
  occupancy5m: number | null;
  occupancy30m: number | null;
}

export interface FleetSample {
  at: Date;
  queues: QueueSampleRow[];
  groups: WorkerGroupSampleRow[];
}

// One pass over the queued and running jobs (the partial index on status, tag, priority,
// scheduled_for holds exactly them), plus every tag a live worker serves, so that an idle tag is
// reported as 0 rather than missing. A worker is live when it pinged within the Workers page's
// window.
const SAMPLE_QUEUES = `
  WITH jobs AS (
    SELECT tag,
           count(*) FILTER (WHERE status = 'queued' AND scheduled_for <= now())::int AS queued,
           count(*) FILTER (WHERE status = 'queued' AND scheduled_for > now())::int AS scheduled,
           count(*) FILTER (WHERE status = 'running')::int AS running,
           COALESCE(extract(epoch FROM now() - min(scheduled_for) FILTER (WHERE status = 'queued' AND scheduled_for <= now())), 0)::float8
             AS oldest_wait_secs
      FROM job WHERE status IN ('queued', 'running') GROUP BY tag
  ), served AS (
    SELECT tag, count(*)::int AS workers
      FROM worker_ping, unnest(tags) AS tag
     WHERE last_ping_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => $1)
     GROUP BY tag
  )
  SELECT COALESCE(j.tag, s.tag) AS tag, COALESCE(j.queued, 0) AS queued, COALESCE(j.scheduled, 0) AS scheduled,
         COALESCE(j.running, 0) AS running, COALESCE(j.oldest_wait_secs, 0) AS oldest_wait_secs,
         COALESCE(s.workers, 0) AS workers
    FROM jobs j FULL JOIN served s ON s.tag = j.tag
   ORDER BY 1`;

const SAMPLE_GROUPS = `
  SELECT worker_group,
         count(*) FILTER (WHERE last_ping_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => $1))::int AS alive,
         count(*) FILTER (WHERE last_ping_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => $1)
                            AND current_job_id IS NOT NULL)::int AS busy,
         avg(occupancy_15s) FILTER (WHERE last_ping_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => $1)) AS occupancy_15s,
         avg(occupancy_5m) FILTER (WHERE last_ping_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => $1)) AS occupancy_5m,
         avg(occupancy_30m) FILTER (WHERE last_ping_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => $1)) AS occupancy_30m
    FROM worker_ping
   WHERE last_ping_at > (now() AT TIME ZONE 'UTC') - interval '1 day'
   GROUP BY worker_group ORDER BY worker_group`;

interface QueueRow {
  tag: string;
  queued: number;
  scheduled: number;
  running: number;
  oldest_wait_secs: number;
  workers: number;
}

interface GroupRow {
  worker_group: string;
  alive: number;
  busy: number;
  occupancy_15s: number | null;
  occupancy_5m: number | null;
  occupancy_30m: number | null;
}

/**
 * Takes a sample of the fleet and stores it. A group whose workers all stopped is still sampled
 * (alive 0) for a day after its last ping, so an alert sees it go to zero instead of vanish.
 *
 * Samples are keyed by their millisecond: two taken in the same one (a leader handing over to the
 * next, an operator's or the bench's sample beside the leader's) keep the first, where the second
 * used to fail on the primary key and, in the bench, ended the run.
 */
export async function sampleFleet(pool: Pool, at = new Date()): Promise<FleetSample> {
  const [queues, groups] = await Promise.all([
    pool.query<QueueRow>(prepared(SAMPLE_QUEUES, [DEFAULT_PING_SINCE_SECS])),
    pool.query<GroupRow>(prepared(SAMPLE_GROUPS, [DEFAULT_PING_SINCE_SECS])),
  ]);
  const sample: FleetSample = {
    at,
    queues: queues.rows.map((row) => ({
      tag: row.tag,
      queued: row.queued,
      scheduled: row.scheduled,
      running: row.running,
      oldestWaitSecs: row.oldest_wait_secs,
      workers: row.workers,
    })),
    groups: groups.rows.map((row) => ({
      workerGroup: row.worker_group,
      alive: row.alive,
      busy: row.busy,
      occupancy15s: row.occupancy_15s,
      occupancy5m: row.occupancy_5m,
      occupancy30m: row.occupancy_30m,
    })),
  };
  await pool.query(
    `WITH q AS (
       INSERT INTO queue_sample (at, tag, queued, scheduled, running, oldest_wait_secs, workers)
       SELECT $1, * FROM unnest($2::text[], $3::int[], $4::int[], $5::int[], $6::float8[], $7::int[])
       ON CONFLICT DO NOTHING
     )
     INSERT INTO worker_group_sample (at, worker_group, alive, busy, occupancy_15s, occupancy_5m, occupancy_30m)
     SELECT $1, * FROM unnest($8::text[], $9::int[], $10::int[], $11::float8[], $12::float8[], $13::float8[])
     ON CONFLICT DO NOTHING`,
    [
      at,
      sample.queues.map((q) => q.tag),
      sample.queues.map((q) => q.queued),
      sample.queues.map((q) => q.scheduled),
      sample.queues.map((q) => q.running),
      sample.queues.map((q) => q.oldestWaitSecs),
      sample.queues.map((q) => q.workers),
      sample.groups.map((g) => g.workerGroup),
      sample.groups.map((g) => g.alive),
      sample.groups.map((g) => g.busy),
      sample.groups.map((g) => g.occupancy15s),
      sample.groups.map((g) => g.occupancy5m),
      sample.groups.map((g) => g.occupancy30m),
    ],
  );
  return sample;
}

/** The newest sample, or null before the leader took one. */
export async function latestFleetSample(pool: Pool): Promise<FleetSample | null> {
  const { rows } = await pool.query<{
    at: Date | null;
    queues: QueueSampleRow[] | null;
    groups: WorkerGroupSampleRow[] | null;
  }>(
    prepared(
      `WITH latest AS (SELECT GREATEST((SELECT max(at) FROM queue_sample), (SELECT max(at) FROM worker_group_sample)) AS at)
       SELECT latest.at,
              (SELECT json_agg(json_build_object('tag', tag, 'queued', queued, 'scheduled', scheduled, 'running', running,
                                                 'oldestWaitSecs', oldest_wait_secs, 'workers', workers) ORDER BY tag)
                 FROM queue_sample q WHERE q.at = latest.at) AS queues,
              (SELECT json_agg(json_build_object('workerGroup', worker_group, 'alive', alive, 'busy', busy,
                                                 'occupancy15s', occupancy_15s, 'occupancy5m', occupancy_5m,
                                                 'occupancy30m', occupancy_30m) ORDER BY worker_group)
                 FROM worker_group_sample g WHERE g.at = latest.at) AS groups
         FROM latest`,
      [],
    ),
  );
  const row = rows[0];
  if (!row?.at) return null;
  return { at: row.at, queues: row.queues ?? [], groups: row.groups ?? [] };
}

/**
 * Above this many queued and running jobs, counting them per tag live costs more than a page may
 * wait (an index-only pass, about 100 ms per 200,000 jobs on 2 cores, and it grows with the
 * queue): the Workers page and queue_counts then read the leader's latest sample, which counted
 * the same jobs at most FLEET_SAMPLE_SECS ago. Below it they count live, so that a small
 * install sees a job it just queued at once.
 */
export const LIVE_QUEUE_COUNT_MAX_JOBS = 100_000;
/** A sample older than this (the leader gone, sampling stopped) is not used: counts are live. */
const QUEUE_SAMPLE_MAX_AGE_MS = 120_000;

/** The latest sample when it is recent and counted more than LIVE_QUEUE_COUNT_MAX_JOBS jobs. */
export async function recentLargeQueueSample(pool: Pool): Promise<FleetSample | null> {
  const sample = await latestFleetSample(pool);
  if (!sample || Date.now() - sample.at.getTime() > QUEUE_SAMPLE_MAX_AGE_MS) return null;
  const jobs = sample.queues.reduce((sum, q) => sum + q.queued + q.scheduled + q.running, 0);
  return jobs > LIVE_QUEUE_COUNT_MAX_JOBS ? sample : null;
}

/** Drops samples older than the retention (the leader's retention task). */
export async function deleteOldFleetSamples(pool: Pool): Promise<void> {
  for (const table of ["queue_sample", "worker_group_sample"]) {
    await pool.query(`DELETE FROM ${table} WHERE at < now() - make_interval(secs => $1)`, [
      FLEET_SAMPLE_RETENTION_SECS,
    ]);
  }
}
