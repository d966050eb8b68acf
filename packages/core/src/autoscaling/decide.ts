// The autoscaling rule, as a pure function of what the leader knows about one group (its config,
// its current count, the jobs waiting for its tags and its occupancy): run.ts feeds it from the
// fleet sampler's latest sample and applies what it answers. Thresholds follow Windmill's docs and
// seed 004: out at 75 % occupancy or when more jobs wait than workers are idle, in below 25 % for
// 5 minutes, a cooldown between changes, zero when idle if min_workers is 0.

export const SCALE_OUT_OCCUPANCY = 0.75;
export const SCALE_IN_OCCUPANCY = 0.25;
/** How long a group must stay below SCALE_IN_OCCUPANCY (its 5 min window) before it shrinks. */
export const SCALE_IN_AFTER_SECS = 300;

export type AutoscalingEventType = "scale_out" | "scale_in" | "bounds";

export interface GroupLoad {
  minWorkers: number;
  maxWorkers: number;
  cooldownSecs: number;
  /** The count last decided (what the integration was told), or the live workers before any. */
  current: number;
  /** Jobs due now on the group's tags. */
  waiting: number;
  /** Live workers of the group, and those running a job. */
  alive: number;
  busy: number;
  /** Mean occupancy of the group's live workers (0..1); null when no worker reported one. */
  occupancy15s: number | null;
  occupancy5m: number | null;
  occupancy30m: number | null;
  /** Seconds since the count last changed; null when it never did. */
  secsSinceChange: number | null;
  // Windmill's advanced settings (see config.ts); each defaults to the rule above.
  /** Jobs waiting beyond the idle workers that add workers (inc_scale_num_jobs_waiting; 1). */
  incJobsWaiting?: number;
  /** Jobs waiting that take the group to max_workers at once (full_scale_jobs_waiting; none). */
  fullScaleJobsWaiting?: number | null;
  /** Cooldown after a change before a full scale out (full_scale_cooldown_seconds; 0). */
  fullScaleCooldownSecs?: number;
  /** Occupancy (0..1) at or above which a worker is added (inc_scale_occupancy_rate; 0.75). */
  scaleOutOccupancy?: number;
  /** Occupancy (0..1) below which the group shrinks (dec_scale_occupancy_rate; 0.25). */
  scaleInOccupancy?: number;
  /** Workers added or removed by an occupancy step (inc_num_workers; 1). */
  step?: number;
}

export interface ScalingDecision {
  from: number;
  to: number;
  eventType: AutoscalingEventType;
  reason: string;
}

const pct = (value: number | null) => (value === null ? "–" : `${Math.round(value * 100)} %`);

function occupancyText(load: GroupLoad): string {
  return `occupancy ${pct(load.occupancy15s)} (15 s), ${pct(load.occupancy5m)} (5 min), ${pct(load.occupancy30m)} (30 min)`;
}

/** What the group should change to now, or null to leave it as it is. */
export function decideScaling(load: GroupLoad): ScalingDecision | null {
  const { current, minWorkers: min, maxWorkers: max } = load;
  const scaleOut = load.scaleOutOccupancy ?? SCALE_OUT_OCCUPANCY;
  const scaleIn = load.scaleInOccupancy ?? SCALE_IN_OCCUPANCY;
  const step = Math.max(1, load.step ?? 1);
  const incJobs = Math.max(1, load.incJobsWaiting ?? 1);
  const decision = (to: number, eventType: AutoscalingEventType, reason: string): ScalingDecision | null =>
    to === current ? null : { from: current, to, eventType, reason };

  // Outside the bounds (the config changed): back inside at once, whatever the cooldown.
  if (current < min) return decision(min, "bounds", `below min_workers (${min})`);
  if (current > max) return decision(max, "bounds", `above max_workers (${max})`);

  // Waking from zero does not wait for the cooldown: a job for the group would wait for nothing.
  if (current === 0 && load.waiting > 0) {
    return decision(
      Math.min(max, Math.max(min, load.waiting)),
      "scale_out",
      `${load.waiting} job(s) waiting and no worker: waking from zero`,
    );
  }

  // Windmill's full scale out: enough jobs wait to take the group to max_workers at once, with a
  // cooldown of its own (full_scale_cooldown_seconds) rather than cooldown_seconds.
  const full = load.fullScaleJobsWaiting ?? null;
  if (
    full !== null &&
    current < max &&
    load.waiting >= full &&
    (load.secsSinceChange === null || load.secsSinceChange >= (load.fullScaleCooldownSecs ?? 0))
  ) {
    return decision(
      max,
      "scale_out",
      `${load.waiting} job(s) waiting, at least full_scale_jobs_waiting (${full}): full scale out`,
    );
  }

  if (load.secsSinceChange !== null && load.secsSinceChange < load.cooldownSecs) return null;

  // Workers still starting are counted as idle: they take the jobs that wait as soon as they are up,
  // so a group that was just scaled out is not scaled out again for the same jobs.
  const idle = Math.max(0, current - load.busy);
  if (current < max && load.waiting - idle >= incJobs) {
    return decision(
      Math.min(max, current + (load.waiting - idle)),
      "scale_out",
      `${load.waiting} job(s) waiting for ${idle} idle worker(s); ${occupancyText(load)}`,
    );
  }
  if (current < max && load.occupancy15s !== null && load.occupancy15s >= scaleOut) {
    return decision(
      Math.min(max, current + step),
      "scale_out",
      `${occupancyText(load)}: at or above ${pct(scaleOut)}`,
    );
  }

  // Idle: nothing waits, nothing runs, and the last 15 s were quiet too (a steady trickle of short
  // jobs can look idle in a single sample between two jobs).
  const quiet = (load.occupancy15s ?? 0) < scaleIn;
  if (current > min && load.waiting === 0 && load.busy === 0 && quiet) {
    return decision(min, "scale_in", `idle: no job waiting or running; ${occupancyText(load)}`);
  }

  // Under-used for the whole 5 min window (and since the last change, so the window measured the
  // current fleet): one worker less, or down to half when the 30 min window is as low.
  const underUsed =
    quiet &&
    load.occupancy5m !== null &&
    load.occupancy5m < scaleIn &&
    (load.secsSinceChange === null || load.secsSinceChange >= SCALE_IN_AFTER_SECS);
  if (current > min && underUsed) {
    const longIdle = load.occupancy30m !== null && load.occupancy30m < scaleIn;
    const to = Math.max(
      min,
      longIdle ? Math.min(current - step, Math.ceil(current / 2)) : current - step,
      load.busy,
    );
    return decision(to, "scale_in", `${occupancyText(load)}: below ${pct(scaleIn)} for 5 min`);
  }
  return null;
}
