// The Workers page's charts: the last minutes of the fleet, from the leader's samples
// (queue_sample, worker_group_sample; see sample.ts) and from completed jobs (the partial index on
// job.completed_at). Every query is bounded: one window of at most an hour, bucketed in SQL into
// at most HISTORY_POINTS steps, and at most MAX_SERIES groups and tags.
//
// Who may see it: whoever may see the Workers page, as listWorkers: instance-level figures (tags,
// groups, counts), never a job id or anything else of another tenant's.
import { prepared } from "@millrace/db";
import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { invalidInput } from "../errors.ts";

export const HISTORY_WINDOWS_MINUTES = [5, 15, 60] as const;
export type HistoryWindowMinutes = (typeof HISTORY_WINDOWS_MINUTES)[number];
export const HISTORY_POINTS = 240;
/** The busiest groups and tags are charted; a fleet with more says how many it left out. */
export const MAX_SERIES = 10;

export interface GroupOccupancyPoint {
  /** Start of the step, epoch milliseconds. */
  at: number;
  alive: number;
  busy: number;
  occupancy15s: number | null;
  occupancy5m: number | null;
  occupancy30m: number | null;
}

export interface TagQueuePoint {
  at: number;
  /** The most jobs waiting (due now) at any sample of the step. */
  queued: number;
  /** The longest wait seen at any sample of the step, in seconds. */
  oldestWaitSecs: number;
}

export interface ThroughputPoint {
  /** Start of the minute, epoch milliseconds. */
  at: number;
  completed: number;
  failed: number;
}

export interface FleetHistory {
  from: number;
  to: number;
  stepSecs: number;
  groups: { workerGroup: string; points: GroupOccupancyPoint[] }[];
  groupsLeftOut: number;
  tags: { tag: string; points: TagQueuePoint[] }[];
  tagsLeftOut: number;
  /** Jobs run by workers (flow runs themselves are not: the engine advances them). */
  throughput: ThroughputPoint[];
}

// Samples are grouped into steps of $1 seconds since the epoch, over the last $2 seconds. The
// series kept are the MAX_SERIES groups with the most live workers, and the MAX_SERIES tags with
// the longest queues among those that had a job waiting or running (a tag idle all along would
// only add a flat line at zero per tag a worker serves).
const GROUP_HISTORY = `
  WITH recent AS (
    SELECT * FROM worker_group_sample WHERE at > now() - make_interval(secs => $2)
  ), chosen AS (
    SELECT worker_group, count(*) OVER () AS total FROM recent
     GROUP BY worker_group ORDER BY max(alive) DESC, worker_group LIMIT $3
  )
  SELECT r.worker_group, c.total::int AS total,
         (floor(extract(epoch FROM r.at) / $1) * $1)::float8 AS step,
         max(r.alive)::int AS alive, max(r.busy)::int AS busy,
         avg(r.occupancy_15s)::float8 AS occupancy_15s, avg(r.occupancy_5m)::float8 AS occupancy_5m,
         avg(r.occupancy_30m)::float8 AS occupancy_30m
    FROM recent r JOIN chosen c USING (worker_group)
   GROUP BY r.worker_group, c.total, step ORDER BY r.worker_group, step`;

const TAG_HISTORY = `
  WITH recent AS (
    SELECT * FROM queue_sample WHERE at > now() - make_interval(secs => $2)
  ), chosen AS (
    SELECT tag, count(*) OVER () AS total FROM recent
     GROUP BY tag HAVING max(queued) > 0 OR max(oldest_wait_secs) > 0 OR max(running) > 0
     ORDER BY max(queued) DESC, max(oldest_wait_secs) DESC, tag LIMIT $3
  )
  SELECT r.tag, c.total::int AS total, (floor(extract(epoch FROM r.at) / $1) * $1)::float8 AS step,
         max(r.queued)::int AS queued, max(r.oldest_wait_secs)::float8 AS oldest_wait_secs
    FROM recent r JOIN chosen c USING (tag)
   GROUP BY r.tag, c.total, step ORDER BY r.tag, step`;

// Jobs are stamped in UTC without a zone. Minutes with no completion are listed as zeros.
const THROUGHPUT = `
  WITH bounds AS (
    SELECT date_trunc('minute', now() AT TIME ZONE 'UTC') - make_interval(mins => $1 - 1) AS first
  ), done AS (
    SELECT date_trunc('minute', completed_at) AS minute, count(*)::int AS completed,
           count(*) FILTER (WHERE status = 'failure')::int AS failed
      FROM job
     WHERE completed_at >= (SELECT first FROM bounds) AND kind NOT IN ('flow', 'flowpreview')
     GROUP BY 1
  )
  SELECT (extract(epoch FROM m.minute AT TIME ZONE 'UTC') * 1000)::float8 AS at,
         COALESCE(d.completed, 0) AS completed, COALESCE(d.failed, 0) AS failed
    FROM generate_series((SELECT first FROM bounds), (SELECT first FROM bounds) + make_interval(mins => $1 - 1),
                         interval '1 minute') AS m(minute)
    LEFT JOIN done d ON d.minute = m.minute
   ORDER BY 1`;

function groupBy<Row, Key extends string, Point>(
  rows: Row[],
  key: (row: Row) => Key,
  point: (row: Row) => Point,
): Map<Key, Point[]> {
  const out = new Map<Key, Point[]>();
  for (const row of rows) {
    const list = out.get(key(row));
    if (list) list.push(point(row));
    else out.set(key(row), [point(row)]);
  }
  return out;
}

/** The fleet over the last `minutes` (5, 15 or 60). */
export async function fleetHistory(
  ctx: CoreContext,
  _principal: Principal,
  minutes: number = 60,
): Promise<FleetHistory> {
  if (!(HISTORY_WINDOWS_MINUTES as readonly number[]).includes(minutes))
    throw invalidInput("minutes", `must be one of ${HISTORY_WINDOWS_MINUTES.join(", ")}`);
  const windowSecs = minutes * 60;
  const stepSecs = windowSecs / HISTORY_POINTS;
  const to = Date.now();
  const [groups, tags, throughput] = await Promise.all([
    ctx.pool.query<{
      worker_group: string;
      total: number;
      step: number;
      alive: number;
      busy: number;
      occupancy_15s: number | null;
      occupancy_5m: number | null;
      occupancy_30m: number | null;
    }>(prepared(GROUP_HISTORY, [stepSecs, windowSecs, MAX_SERIES])),
    ctx.pool.query<{ tag: string; total: number; step: number; queued: number; oldest_wait_secs: number }>(
      prepared(TAG_HISTORY, [stepSecs, windowSecs, MAX_SERIES]),
    ),
    ctx.pool.query<ThroughputPoint>(prepared(THROUGHPUT, [minutes])),
  ]);
  const byGroup = groupBy(
    groups.rows,
    (row) => row.worker_group,
    (row): GroupOccupancyPoint => ({
      at: row.step * 1000,
      alive: row.alive,
      busy: row.busy,
      occupancy15s: row.occupancy_15s,
      occupancy5m: row.occupancy_5m,
      occupancy30m: row.occupancy_30m,
    }),
  );
  const byTag = groupBy(
    tags.rows,
    (row) => row.tag,
    (row): TagQueuePoint => ({
      at: row.step * 1000,
      queued: row.queued,
      oldestWaitSecs: row.oldest_wait_secs,
    }),
  );
  return {
    from: to - windowSecs * 1000,
    to,
    stepSecs,
    groups: [...byGroup].map(([workerGroup, points]) => ({ workerGroup, points })),
    groupsLeftOut: Math.max(0, (groups.rows[0]?.total ?? 0) - byGroup.size),
    tags: [...byTag].map(([tag, points]) => ({ tag, points })),
    tagsLeftOut: Math.max(0, (tags.rows[0]?.total ?? 0) - byTag.size),
    throughput: throughput.rows,
  };
}
