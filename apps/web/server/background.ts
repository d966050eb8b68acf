import {
  deleteExpiredAudit,
  deleteOldGitSyncRuns,
  deleteStaleRateLimits,
  deleteExpiredTokens,
  deleteExpiredJobs,
  deleteOldAutoscalingEvents,
  deleteOldFleetSamples,
  evaluateFleetAlerts,
  handleZombieJobs,
  publishZombieSettings,
  repairOrphanedJobs,
  runAutoscaler,
  sampleFleet,
  startLeaderLoop,
  startGitSyncLoop,
  startScheduleTicker,
  sweepFlows,
} from "@millrace/core";
import { serverEnv } from "./env.ts";
import { getServices } from "./services.ts";

const holder = globalThis as unknown as { __millraceBackground?: Promise<void> };

async function retentionSecs(): Promise<number> {
  const services = await getServices();
  const { rows } = await services.pool.query<{ value: unknown }>(
    "SELECT value FROM instance_setting WHERE key = 'retention_period_secs'",
  );
  const value = Number(rows[0]?.value);
  return Number.isInteger(value) && value > 0 ? value : serverEnv().RETENTION_PERIOD_SECS;
}

/**
 * Instance-wide periodic work, run by whichever server holds the leader lock: the zombie monitor
 * and retention. Every server starts the loop; only one runs the tasks at a time.
 */
export function startBackgroundTasks(): Promise<void> {
  holder.__millraceBackground ??= (async () => {
    const env = serverEnv();
    const services = await getServices();
    const log = (message: string) => console.log(`[leader] ${message}`);
    let lastAutoscale = 0;
    startLeaderLoop(
      env.DATABASE_URL,
      [
        {
          name: "zombie monitor",
          intervalMs: Math.max(2000, Math.min(15_000, (env.ZOMBIE_JOB_TIMEOUT * 1000) / 4)),
          async run() {
            const zombie = { timeoutSecs: env.ZOMBIE_JOB_TIMEOUT, restart: env.RESTART_ZOMBIE_JOBS };
            // Workers read it with their pings and fence themselves before this monitor could
            // hand their jobs to another worker (apps/worker/src/fence.ts).
            await publishZombieSettings(services.pool, zombie);
            const { restarted, failed } = await handleZombieJobs(services.pool, services.boss, zombie);
            if (restarted.length) log(`restarted zombie jobs: ${restarted.join(", ")}`);
            if (failed.length) log(`failed zombie jobs: ${failed.join(", ")}`);
            const repaired = await repairOrphanedJobs(services.pool, services.boss);
            if (repaired.length)
              log(`re-dispatched jobs that had lost their dispatch: ${repaired.join(", ")}`);
            const flows = await sweepFlows(services.pool, services.boss);
            if (flows.started.length)
              log(`started flow runs due after their concurrency limit: ${flows.started.join(", ")}`);
            if (flows.timedOut.length) log(`flow approvals timed out: ${flows.timedOut.join(", ")}`);
          },
        },
        {
          // Queues per tag and live workers per group: what /metrics, the Workers page's charts
          // and the alerts read (fleet/sample.ts); then the instance's alerts (fleet/alerts.ts);
          // then, every AUTOSCALING_INTERVAL_SECS, the autoscaler decides from that same sample
          // (autoscaling/run.ts): an idle fleet stores no sample row, so a separate task reading
          // the latest rows could not tell "nothing waits" from "no sampler".
          name: "fleet sampler",
          intervalMs: Math.min(env.FLEET_SAMPLE_SECS, env.AUTOSCALING_INTERVAL_SECS) * 1000,
          async run() {
            const sample = await sampleFleet(services.pool);
            await evaluateFleetAlerts(services, sample, log);
            if (Date.now() - lastAutoscale >= env.AUTOSCALING_INTERVAL_SECS * 1000 - 100) {
              lastAutoscale = Date.now();
              await runAutoscaler(services, log, sample, {
                kubernetesService: env.KUBERNETES_SERVICE_HOST
                  ? { host: env.KUBERNETES_SERVICE_HOST, port: env.KUBERNETES_SERVICE_PORT }
                  : undefined,
              });
            }
          },
        },
        {
          name: "retention",
          intervalMs: 5 * 60_000,
          async run() {
            const deleted = await deleteExpiredJobs(services.pool, { retentionSecs: await retentionSecs() });
            if (deleted > 0) log(`retention: deleted ${deleted} completed job(s)`);
            const audit = await deleteExpiredAudit(services, { retentionDays: env.AUDIT_RETENTION_DAYS });
            if (audit > 0) log(`retention: deleted ${audit} audit log row(s)`);
            await deleteStaleRateLimits(services);
            await deleteOldGitSyncRuns(services.pool);
            await deleteOldFleetSamples(services.pool);
            await deleteOldAutoscalingEvents(services.pool);
            await deleteExpiredTokens(services);
          },
        },
      ],
      log,
    );
    // Not a leader task: every server ticks, and a compare-and-set lets exactly one of them run
    // each tick, so a dead server costs no failover delay.
    startScheduleTicker(services, env.DATABASE_URL, {
      log: (message) => console.log(`[schedules] ${message}`),
    });
    // Every server polls for git sync work; an advisory lock runs each workspace's sync on one
    // server at a time, so a dead server costs no failover delay either.
    startGitSyncLoop(services, { log: (message) => console.log(`[git-sync] ${message}`) });
  })();
  return holder.__millraceBackground;
}
