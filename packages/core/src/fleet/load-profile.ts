// "Use my data" for the sizing simulator: how jobs arrived and ran on this instance over the last
// day, per tag and for all tags together. One pass over the jobs completed in the window (the
// partial index on job.completed_at); instance-level figures only, like the Workers page.
import { prepared } from "@millrace/db";
import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";

export const LOAD_PROFILE_HOURS = 24;
const MAX_TAGS = 50;

export interface TagLoad {
  /** null: every tag together. */
  tag: string | null;
  jobs: number;
  /** Jobs per second over the whole window (24 h), not only while jobs ran. */
  arrivalRatePerSec: number;
  /** Jobs per second in the busiest minute of the window. */
  peakRatePerSec: number;
  meanDurationSecs: number;
  /** How long jobs waited for a worker, on average: to compare with the simulated wait. */
  meanWaitSecs: number;
}

export interface LoadProfile {
  hours: number;
  tags: TagLoad[];
}

// Jobs that ran on a worker (started, and not a flow run, which the engine advances) and
// completed within the window. A job's wait counts from when it was due (scheduled_for).
const LOAD_PROFILE = `
  WITH ran AS (
    SELECT tag, date_trunc('minute', completed_at) AS minute,
           extract(epoch FROM completed_at - started_at) AS run_secs,
           greatest(0, extract(epoch FROM started_at - greatest(created_at, scheduled_for))) AS wait_secs
      FROM job
     WHERE completed_at >= (now() AT TIME ZONE 'UTC') - make_interval(hours => $1)
       AND started_at IS NOT NULL AND kind NOT IN ('flow', 'flowpreview')
  ), per_minute AS (
    SELECT tag, count(*) AS n FROM ran GROUP BY GROUPING SETS ((tag, minute), (minute))
  ), peaks AS (
    SELECT tag, max(n)::int AS peak FROM per_minute GROUP BY tag
  ), totals AS (
    SELECT tag, count(*)::int AS jobs, avg(run_secs)::float8 AS mean_run, avg(wait_secs)::float8 AS mean_wait
      FROM ran GROUP BY GROUPING SETS ((tag), ())
  )
  SELECT t.tag, t.jobs, p.peak, t.mean_run, t.mean_wait
    FROM totals t JOIN peaks p ON p.tag IS NOT DISTINCT FROM t.tag
   ORDER BY t.tag IS NULL DESC, t.jobs DESC, t.tag
   LIMIT $2`;

export async function loadProfile(ctx: CoreContext, _principal: Principal): Promise<LoadProfile> {
  const { rows } = await ctx.pool.query<{
    tag: string | null;
    jobs: number;
    peak: number;
    mean_run: number;
    mean_wait: number;
  }>(prepared(LOAD_PROFILE, [LOAD_PROFILE_HOURS, MAX_TAGS + 1]));
  return {
    hours: LOAD_PROFILE_HOURS,
    tags: rows.map((row) => ({
      tag: row.tag,
      jobs: row.jobs,
      arrivalRatePerSec: row.jobs / (LOAD_PROFILE_HOURS * 3600),
      peakRatePerSec: row.peak / 60,
      meanDurationSecs: row.mean_run,
      meanWaitSecs: row.mean_wait,
    })),
  };
}
