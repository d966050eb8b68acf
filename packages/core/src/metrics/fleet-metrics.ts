// A server's view of the whole fleet, for Prometheus: the leader's latest sample (queues per tag,
// worker groups) and each workspace's git sync lag. Every server exposes the same figures, so
// aggregate them with max() (not sum()) across servers.
import client from "prom-client";
import { prepared, type Pool } from "@millrace/db";
import { latestFleetSample, type FleetSample } from "../fleet/sample.ts";
import { SYNCED_OPERATIONS } from "../sync/git-sync.ts";
import { millraceMetrics } from "./registry.ts";

/** One scrape reads the sample once for all the gauges below, and two scrapes within this share it. */
const CACHE_MS = 2000;

interface GitSyncLag {
  workspace: string;
  lagSecs: number;
  failures: number;
}

function cached<T>(read: () => Promise<T>): () => Promise<T> {
  let value: { at: number; promise: Promise<T> } | null = null;
  return () => {
    if (!value || Date.now() - value.at > CACHE_MS) {
      const promise = read();
      value = { at: Date.now(), promise };
      promise.catch(() => (value = null));
    }
    return value.promise;
  };
}

/**
 * Seconds since the oldest change git sync has not committed yet (0 when it is up to date), and
 * its consecutive failures, per workspace with git sync enabled.
 */
async function gitSyncLags(pool: Pool): Promise<GitSyncLag[]> {
  const { rows } = await pool.query<{ workspace_id: string; lag_secs: number; failures: number }>(
    prepared(
      `SELECT c.workspace_id, c.failures,
              COALESCE(extract(epoch FROM (now() AT TIME ZONE 'UTC') - min(a.at)), 0)::float8 AS lag_secs
         FROM git_sync_config c
         LEFT JOIN audit_log a ON a.workspace_id = c.workspace_id AND a.id > c.synced_audit_id AND a.operation = ANY($1)
        WHERE c.enabled
        GROUP BY c.workspace_id, c.failures`,
      [SYNCED_OPERATIONS],
    ),
  );
  return rows.map((row) => ({
    workspace: row.workspace_id,
    lagSecs: Math.max(0, row.lag_secs),
    failures: row.failures,
  }));
}

/** Registers the fleet gauges on this server's registry (once per process). */
export function registerFleetMetrics(pool: Pool): void {
  const { registry } = millraceMetrics();
  if (registry.getSingleMetric("millrace_queue_jobs")) return;
  const sample = cached<FleetSample | null>(() => latestFleetSample(pool));
  const lags = cached(() => gitSyncLags(pool));

  const perTag = (name: string, help: string, value: (q: FleetSample["queues"][number]) => number) =>
    new client.Gauge({
      name,
      help,
      labelNames: ["tag"],
      registers: [registry],
      async collect() {
        this.reset();
        for (const queue of (await sample())?.queues ?? []) this.set({ tag: queue.tag }, value(queue));
      },
    });
  perTag("millrace_queue_jobs", "Jobs queued and due now, by tag.", (q) => q.queued);
  perTag(
    "millrace_queue_scheduled_jobs",
    "Jobs queued for later (scheduled_for in the future), by tag.",
    (q) => q.scheduled,
  );
  perTag("millrace_queue_running_jobs", "Jobs running, by tag.", (q) => q.running);
  perTag(
    "millrace_queue_oldest_wait_seconds",
    "How long the oldest due job of each tag has waited.",
    (q) => q.oldestWaitSecs,
  );
  perTag("millrace_tag_workers_alive", "Live workers serving each tag.", (q) => q.workers);

  new client.Gauge({
    name: "millrace_worker_occupancy_ratio",
    help: "Mean share of time a worker group's live workers spent running jobs, over each window (15s, 5m, 30m).",
    labelNames: ["group", "window"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const group of (await sample())?.groups ?? []) {
        const windows = { "15s": group.occupancy15s, "5m": group.occupancy5m, "30m": group.occupancy30m };
        for (const [window, value] of Object.entries(windows)) {
          if (value !== null) this.set({ group: group.workerGroup, window }, value);
        }
      }
    },
  });
  new client.Gauge({
    name: "millrace_workers_alive",
    help: "Workers of each group that pinged within the last minute.",
    labelNames: ["group"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const group of (await sample())?.groups ?? []) this.set({ group: group.workerGroup }, group.alive);
    },
  });
  new client.Gauge({
    name: "millrace_workers_busy",
    help: "Live workers of each group running a job.",
    labelNames: ["group"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const group of (await sample())?.groups ?? []) this.set({ group: group.workerGroup }, group.busy);
    },
  });
  new client.Gauge({
    name: "millrace_fleet_sample_age_seconds",
    help: "Age of the leader's latest fleet sample (the queue and worker figures above); grows when no server leads.",
    registers: [registry],
    async collect() {
      const latest = await sample();
      if (latest) this.set((Date.now() - latest.at.getTime()) / 1000);
    },
  });
  new client.Gauge({
    name: "millrace_git_sync_lag_seconds",
    help: "Seconds since the oldest change of the workspace that git sync has not committed yet (0: up to date).",
    labelNames: ["workspace"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const lag of await lags()) this.set({ workspace: lag.workspace }, lag.lagSecs);
    },
  });
  new client.Gauge({
    name: "millrace_git_sync_failures",
    help: "Consecutive failed git sync runs of the workspace (0 after a success).",
    labelNames: ["workspace"],
    registers: [registry],
    async collect() {
      this.reset();
      for (const lag of await lags()) this.set({ workspace: lag.workspace }, lag.failures);
    },
  });
}
