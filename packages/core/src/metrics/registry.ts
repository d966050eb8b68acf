// Prometheus metrics (prom-client). Each process has one registry: a server exposes the fleet's
// figures (from the leader's latest sample, see fleet/sample.ts), its HTTP requests and git sync
// lag; a worker its own jobs. Both expose their database pools and Node's process metrics.
//
// Label sets stay bounded: tags, worker groups, languages, statuses, route patterns and
// workspaces, never a job id, a path or a user.
import client from "prom-client";
import type { Pool } from "@millrace/db";

const holder = globalThis as unknown as { __millraceMetrics?: MillraceMetrics };

export interface MillraceMetrics {
  registry: client.Registry;
  jobsStarted: client.Counter<"tag">;
  jobsCompleted: client.Counter<"tag" | "status">;
  jobDuration: client.Histogram<"tag" | "language">;
  jobQueueWait: client.Histogram<"tag">;
  httpRequestDuration: client.Histogram<"route" | "method" | "status">;
}

/** Job durations: from a fraction of a second (bash, deno) to the default maximum timeout. */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 10, 30, 60, 300, 1800, 3600];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The process's metrics, made on first use (every module of the process shares them). */
export function millraceMetrics(): MillraceMetrics {
  if (holder.__millraceMetrics) return holder.__millraceMetrics;
  const registry = new client.Registry();
  // The event loop's delay is sampled once a second: at prom-client's default (every 10 ms) its
  // timer woke every server and worker 100 times a second, idle or not, which on a VM cost more
  // CPU than an idle process otherwise spends (and ~0.1 ms per job per process under load). The
  // lag percentiles stay those of a second-by-second sample; nodejs_eventloop_lag_seconds is
  // measured at each scrape, as before.
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1000 });
  // Gauges named like counters, which `promtool check metrics` refuses; their per-type
  // counterparts (nodejs_active_handles{type}…) stay.
  for (const name of [
    "nodejs_active_handles_total",
    "nodejs_active_requests_total",
    "nodejs_active_resources_total",
  ])
    registry.removeSingleMetric(name);
  const metrics: MillraceMetrics = {
    registry,
    jobsStarted: new client.Counter({
      name: "millrace_jobs_started_total",
      help: "Jobs this process started running, by tag.",
      labelNames: ["tag"],
      registers: [registry],
    }),
    jobsCompleted: new client.Counter({
      name: "millrace_jobs_completed_total",
      help: "Jobs this process completed, by tag and final status (success, failure, canceled; zombie: a job whose worker stopped pinging, counted by the server that found it).",
      labelNames: ["tag", "status"],
      registers: [registry],
    }),
    jobDuration: new client.Histogram({
      name: "millrace_job_duration_seconds",
      help: "How long jobs ran, from start to completion, by tag and language.",
      labelNames: ["tag", "language"],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    }),
    jobQueueWait: new client.Histogram({
      name: "millrace_job_queue_wait_seconds",
      help: "How long jobs waited between being due (scheduled_for) and starting, by tag.",
      labelNames: ["tag"],
      buckets: WAIT_BUCKETS,
      registers: [registry],
    }),
    httpRequestDuration: new client.Histogram({
      name: "millrace_http_request_duration_seconds",
      help: "REST API requests answered by this server, by route pattern, method and status class (2xx, 4xx, 5xx).",
      labelNames: ["route", "method", "status"],
      buckets: HTTP_BUCKETS,
      registers: [registry],
    }),
  };
  holder.__millraceMetrics = metrics;
  return metrics;
}

const watchedPools = new Set<Pool>();

/**
 * Reports the process's database pools as millrace_db_pool_connections{state}: total (open),
 * idle, and waiting (queries queued for a connection: the pool is saturated when it stays > 0).
 */
export function watchDatabasePool(pool: Pool): void {
  const { registry } = millraceMetrics();
  watchedPools.add(pool);
  if (registry.getSingleMetric("millrace_db_pool_connections")) return;
  new client.Gauge({
    name: "millrace_db_pool_connections",
    help: "Connections of this process's database pools, by state (total, idle, waiting for a connection).",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      let total = 0;
      let idle = 0;
      let waiting = 0;
      for (const watched of watchedPools) {
        total += watched.totalCount;
        idle += watched.idleCount;
        waiting += watched.waitingCount;
      }
      this.set({ state: "total" }, total);
      this.set({ state: "idle" }, idle);
      this.set({ state: "waiting" }, waiting);
    },
  });
}

/** "2xx", "4xx"…: status classes keep the label set small. */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** The exposition text and its content type. */
export async function metricsExposition(): Promise<{ body: string; contentType: string }> {
  const { registry } = millraceMetrics();
  return { body: await registry.metrics(), contentType: registry.contentType };
}
