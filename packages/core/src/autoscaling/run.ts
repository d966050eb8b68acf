// The autoscaler, run by the leader right after a fleet sample every AUTOSCALING_INTERVAL_SECS
// (apps/web/server/background.ts): for each worker group whose config enables autoscaling, take
// what the fleet sampler just measured
// (fleet/sample.ts: jobs waiting per tag, live and busy workers and occupancy per group), ask the
// rule (decide.ts), record a change (autoscaling_state, autoscaling_event, the audit log, a NOTIFY
// for MODE=pool processes, a metric) and then apply it through the group's integration.
import { withTransaction, type Pool } from "@millrace/db";
import type { FleetSample } from "../fleet/sample.ts";
import type { JobsContext } from "../jobs/run.ts";
import { effectiveWorkerTags, parseWorkerGroupConfig } from "../workers/group-config.ts";
import { DEFAULT_COOLDOWN_SECS, type AutoscalingConfig } from "./config.ts";
import { decideScaling, SCALE_IN_OCCUPANCY, SCALE_OUT_OCCUPANCY, type ScalingDecision } from "./decide.ts";
import { applyScaling, type IntegrationEnvironment } from "./integrations.ts";
import { autoscalingMetrics } from "./metrics.ts";

/** MODE=pool processes LISTEN here; the payload is the group whose desired count changed. */
export const AUTOSCALING_CHANNEL = "millrace_autoscaling";

interface GroupState {
  desired: number;
  secsSinceChange: number | null;
  /** The last apply failed: it is tried again at the next tick. */
  error: string | null;
}

export interface AppliedDecision extends ScalingDecision {
  group: string;
  integration: string;
  error: string | null;
}

async function autoscaledGroups(pool: Pool, log: (message: string) => void) {
  const { rows } = await pool.query<{ name: string; config: unknown }>(
    `SELECT name, config FROM worker_group_config
      WHERE jsonb_typeof(config->'autoscaling') = 'object' AND config->'autoscaling'->>'enabled' = 'true'
      ORDER BY name`,
  );
  const groups: { name: string; autoscaling: AutoscalingConfig; tags: string[] }[] = [];
  for (const row of rows) {
    try {
      const config = parseWorkerGroupConfig(row.config);
      if (config.autoscaling?.enabled)
        groups.push({
          name: row.name,
          autoscaling: config.autoscaling,
          // Windmill's custom_tags: the tags to scale on, instead of the group's own.
          tags: config.autoscaling.custom_tags?.length
            ? config.autoscaling.custom_tags
            : effectiveWorkerTags(undefined, config),
        });
    } catch (error) {
      log(
        `autoscaling: worker group ${row.name} skipped, its config is invalid: ${(error as Error).message}`,
      );
    }
  }
  return groups;
}

async function readStates(pool: Pool): Promise<Map<string, GroupState>> {
  const { rows } = await pool.query<{
    worker_group: string;
    desired: number;
    secs_since_change: number | null;
    error: string | null;
  }>(
    `SELECT worker_group, desired, error,
            CASE WHEN last_change_at > 'epoch' THEN extract(epoch FROM now() - last_change_at)::float8 END
              AS secs_since_change
       FROM autoscaling_state`,
  );
  return new Map(
    rows.map((row) => [
      row.worker_group,
      { desired: row.desired, secsSinceChange: row.secs_since_change, error: row.error },
    ]),
  );
}

/** One pass of the autoscaler over every autoscaled group, from a sample just taken; returns the changes. */
export async function runAutoscaler(
  ctx: JobsContext,
  log: (message: string) => void,
  latest: FleetSample,
  environment: IntegrationEnvironment = {},
): Promise<AppliedDecision[]> {
  const groups = await autoscaledGroups(ctx.pool, log);
  if (groups.length === 0) return [];
  const states = await readStates(ctx.pool);
  const applied: AppliedDecision[] = [];
  for (const group of groups) {
    const state = states.get(group.name);
    const live = latest.groups.find((g) => g.workerGroup === group.name);
    const tags = new Set(group.tags);
    const waiting = latest.queues.filter((q) => tags.has(q.tag)).reduce((sum, q) => sum + q.queued, 0);
    const config = group.autoscaling;
    const current = state?.desired ?? live?.alive ?? 0;
    const load = {
      minWorkers: config.min_workers,
      maxWorkers: config.max_workers,
      cooldownSecs: config.cooldown_seconds ?? DEFAULT_COOLDOWN_SECS,
      current,
      waiting,
      alive: live?.alive ?? 0,
      busy: live?.busy ?? 0,
      occupancy15s: live?.occupancy15s ?? null,
      occupancy5m: live?.occupancy5m ?? null,
      occupancy30m: live?.occupancy30m ?? null,
      secsSinceChange: state?.secsSinceChange ?? null,
      incJobsWaiting: config.inc_scale_num_jobs_waiting ?? 1,
      fullScaleJobsWaiting: config.full_scale_jobs_waiting ?? null,
      fullScaleCooldownSecs: config.full_scale_cooldown_seconds ?? 0,
      scaleOutOccupancy: (config.inc_scale_occupancy_rate ?? SCALE_OUT_OCCUPANCY * 100) / 100,
      scaleInOccupancy: (config.dec_scale_occupancy_rate ?? SCALE_IN_OCCUPANCY * 100) / 100,
      step: config.inc_num_workers ?? 1,
    };
    autoscalingMetrics().observe(group.name, load);
    const decision = decideScaling(load);
    if (!decision) {
      // A group seen for the first time gets its row (pools read it), without starting a cooldown.
      if (!state) {
        await ctx.pool.query(
          `INSERT INTO autoscaling_state (worker_group, desired, last_change_at) VALUES ($1, $2, 'epoch')
           ON CONFLICT (worker_group) DO NOTHING`,
          [group.name, current],
        );
      } else if (state.error) {
        await retryApply(ctx, group.name, config, state.desired, environment, log);
      }
      autoscalingMetrics().desired(group.name, current);
      continue;
    }
    applied.push(await recordAndApply(ctx, group.name, config, decision, environment, log));
  }
  return applied;
}

async function recordAndApply(
  ctx: JobsContext,
  group: string,
  config: AutoscalingConfig,
  decision: ScalingDecision,
  environment: IntegrationEnvironment,
  log: (message: string) => void,
): Promise<AppliedDecision> {
  const integration = config.integration.type;
  const eventId = await withTransaction(ctx.pool, async (client) => {
    await client.query(
      `INSERT INTO autoscaling_state (worker_group, desired, last_change_at, updated_at, error)
       VALUES ($1, $2, now(), now(), NULL)
       ON CONFLICT (worker_group) DO UPDATE
         SET desired = EXCLUDED.desired, last_change_at = now(), updated_at = now(), error = NULL`,
      [group, decision.to],
    );
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO autoscaling_event (worker_group, event_type, from_workers, to_workers, reason, integration)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [group, decision.eventType, decision.from, decision.to, decision.reason, integration],
    );
    await client.query(
      `INSERT INTO audit_log (workspace_id, actor, operation, resource, parameters, at)
       VALUES (NULL, 'millrace', $1, $2, $3, now() AT TIME ZONE 'UTC')`,
      [
        `autoscaling.${decision.eventType}`,
        `worker__${group}`,
        JSON.stringify({ from: decision.from, to: decision.to, reason: decision.reason, integration }),
      ],
    );
    await client.query("SELECT pg_notify($1, $2)", [AUTOSCALING_CHANNEL, group]);
    return rows[0]!.id;
  });
  log(`autoscaling: ${group} ${decision.from} → ${decision.to} (${decision.eventType}: ${decision.reason})`);
  autoscalingMetrics().decided(group, decision);
  const error = await applyScaling(ctx, group, config.integration, decision, environment).then(
    () => null,
    (failure: Error) => failure.message,
  );
  if (error) {
    log(`autoscaling: ${integration} integration failed for ${group}: ${error}`);
    await ctx.pool.query("UPDATE autoscaling_event SET error = $2 WHERE id = $1", [eventId, error]);
    await ctx.pool.query("UPDATE autoscaling_state SET error = $2 WHERE worker_group = $1", [group, error]);
  }
  return { ...decision, group, integration, error };
}

/** An integration that failed is told the desired count again (the cluster may have been down). */
async function retryApply(
  ctx: JobsContext,
  group: string,
  config: AutoscalingConfig,
  desired: number,
  environment: IntegrationEnvironment,
  log: (message: string) => void,
): Promise<void> {
  const retry: ScalingDecision = {
    from: desired,
    to: desired,
    eventType: "bounds",
    reason: "retry after a failed apply",
  };
  const error = await applyScaling(ctx, group, config.integration, retry, environment).then(
    () => null,
    (failure: Error) => failure.message,
  );
  if (error) log(`autoscaling: ${config.integration.type} integration still failing for ${group}: ${error}`);
  await ctx.pool.query(
    "UPDATE autoscaling_state SET error = $2, updated_at = now() WHERE worker_group = $1",
    [group, error],
  );
}

/** The desired worker count of each of `groups` that the autoscaler manages (MODE=pool). */
export async function readDesiredWorkers(pool: Pool, groups: string[]): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ worker_group: string; desired: number }>(
    "SELECT worker_group, desired FROM autoscaling_state WHERE worker_group = ANY($1)",
    [groups],
  );
  return new Map(rows.map((row) => [row.worker_group, row.desired]));
}

/** Decisions are kept this long (the retention task), as a month of the Workers page's history. */
export const AUTOSCALING_EVENT_RETENTION_DAYS = 30;

export async function deleteOldAutoscalingEvents(pool: Pool): Promise<void> {
  await pool.query("DELETE FROM autoscaling_event WHERE at < now() - make_interval(days => $1)", [
    AUTOSCALING_EVENT_RETENTION_DAYS,
  ]);
}
