import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { invalidInput } from "../errors.ts";

import { recentLargeQueueSample } from "../fleet/sample.ts";
import { DEFAULT_PING_SINCE_SECS } from "./ping-window.ts";

export { DEFAULT_PING_SINCE_SECS };
const MAX_WORKERS = 1000;

/** Windmill's WorkerPing, from our worker_ping rows. */
export interface WorkerPingView {
  worker: string;
  worker_instance: string;
  worker_group: string;
  custom_tags: string[];
  /** Seconds since the last ping. */
  last_ping: number;
  started_at: string;
  ip: string;
  host: string;
  jobs_executed: number;
  wm_version: string;
  occupancy_rate?: number;
  occupancy_rate_15s?: number;
  occupancy_rate_5m?: number;
  occupancy_rate_30m?: number;
  memory_usage?: number;
  /**
   * Millrace: how the worker isolates jobs: `bubblewrap <version>`, `disabled` (DISABLE_SANDBOX:
   * jobs run without isolation) or `unavailable: <why>` (the worker refuses to run jobs).
   */
  sandbox: string;
  /** Millrace: an agent worker (MODE=agent: no database access, pinged by the server for it). */
  agent: boolean;
  /** The running job and its workspace: superadmins only (other tenants' ids must not leak). */
  current_job_id?: string;
  last_job_id?: string;
  last_job_workspace_id?: string;
}

export interface ListWorkersInput {
  /** Only workers that pinged within this many seconds (default 60). */
  pingSinceSecs?: number;
  page?: number;
  perPage?: number;
}

interface PingRow {
  name: string;
  worker_group: string;
  tags: string[];
  host: string;
  current_job_id: string | null;
  current_job_workspace: string | null;
  jobs_executed: number;
  memory_bytes: number | null;
  occupancy_15s: number | null;
  occupancy_5m: number | null;
  occupancy_30m: number | null;
  version: string | null;
  sandbox: string | null;
  agent: boolean;
  started_at: Date;
  last_ping_secs: number;
}

function optional(value: number | null): number | undefined {
  return value === null ? undefined : value;
}

/** Live workers (any signed-in user): instance-level figures, never another tenant's job. */
export async function listWorkers(
  ctx: CoreContext,
  principal: Principal,
  input: ListWorkersInput = {},
): Promise<WorkerPingView[]> {
  const since = input.pingSinceSecs ?? DEFAULT_PING_SINCE_SECS;
  if (!Number.isInteger(since) || since <= 0)
    throw invalidInput("ping_since", "must be a positive whole number of seconds");
  const perPage = input.perPage ?? MAX_WORKERS;
  const page = input.page ?? 1;
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_WORKERS)
    throw invalidInput("per_page", `must be between 1 and ${MAX_WORKERS}`);
  if (!Number.isInteger(page) || page < 1) throw invalidInput("page", "must be 1 or more");
  // Timestamps are stored as UTC without a zone; compare and convert in UTC explicitly.
  const { rows } = await ctx.pool.query<PingRow>(
    `SELECT w.name, w.worker_group, w.tags, w.host, w.current_job_id, j.workspace_id AS current_job_workspace,
            w.jobs_executed, w.memory_bytes, w.occupancy_15s, w.occupancy_5m, w.occupancy_30m, w.version,
            w.sandbox, w.agent_token_id IS NOT NULL AS agent, w.started_at AT TIME ZONE 'UTC' AS started_at,
            floor(extract(epoch FROM (now() AT TIME ZONE 'UTC') - w.last_ping_at))::int AS last_ping_secs
       FROM worker_ping w LEFT JOIN job j ON j.id = w.current_job_id
      WHERE w.last_ping_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => $1)
      ORDER BY w.worker_group, w.name
      LIMIT $2 OFFSET $3`,
    [since, perPage, (page - 1) * perPage],
  );
  return rows.map((row) => {
    const view: WorkerPingView = {
      worker: row.name,
      worker_instance: row.host,
      worker_group: row.worker_group,
      custom_tags: row.tags,
      last_ping: Math.max(0, row.last_ping_secs),
      started_at: row.started_at.toISOString(),
      ip: row.host,
      host: row.host,
      jobs_executed: row.jobs_executed,
      wm_version: row.version ?? "",
      occupancy_rate: optional(row.occupancy_30m),
      occupancy_rate_15s: optional(row.occupancy_15s),
      occupancy_rate_5m: optional(row.occupancy_5m),
      occupancy_rate_30m: optional(row.occupancy_30m),
      memory_usage: optional(row.memory_bytes),
      sandbox: row.sandbox ?? "unknown",
      agent: row.agent,
    };
    if (principal.isSuperAdmin && row.current_job_id) {
      view.current_job_id = row.current_job_id;
      view.last_job_id = row.current_job_id;
      if (row.current_job_workspace) view.last_job_workspace_id = row.current_job_workspace;
    }
    return view;
  });
}

/** Windmill's queue_counts: queued jobs per tag (scheduled ones included). */
export async function queueCounts(ctx: CoreContext, _principal: Principal): Promise<Record<string, number>> {
  const sample = await recentLargeQueueSample(ctx.pool);
  if (sample)
    return Object.fromEntries(
      sample.queues.filter((q) => q.queued + q.scheduled > 0).map((q) => [q.tag, q.queued + q.scheduled]),
    );
  const { rows } = await ctx.pool.query<{ tag: string; queued: number }>(
    "SELECT tag, count(*)::int AS queued FROM job WHERE status = 'queued' GROUP BY tag ORDER BY tag",
  );
  return Object.fromEntries(rows.map((row) => [row.tag, row.queued]));
}

export interface QueueStat {
  tag: string;
  /** Every queued job of the tag, including those scheduled for later. */
  queued: number;
  /** Queued jobs whose time has not come yet. */
  scheduled: number;
  running: number;
  /** When the longest-waiting due job became runnable; null when none is due. */
  oldest_queued_at: string | null;
  oldest_wait_secs: number | null;
  /** Live workers (pinged within a minute) serving the tag: 0 means the jobs cannot run. */
  workers: number;
}

/** Per-tag queue depth and wait, for tags with queued or running jobs. */
export async function queueStats(ctx: CoreContext, _principal: Principal): Promise<QueueStat[]> {
  const sample = await recentLargeQueueSample(ctx.pool);
  if (sample) {
    return sample.queues
      .filter((q) => q.queued + q.scheduled + q.running > 0)
      .map((q) => ({
        tag: q.tag,
        queued: q.queued + q.scheduled,
        scheduled: q.scheduled,
        running: q.running,
        oldest_queued_at:
          q.queued > 0 ? new Date(sample.at.getTime() - q.oldestWaitSecs * 1000).toISOString() : null,
        oldest_wait_secs: q.queued > 0 ? Math.floor(q.oldestWaitSecs) : null,
        workers: q.workers,
      }));
  }
  const { rows } = await ctx.pool.query<{
    tag: string;
    queued: number;
    scheduled: number;
    running: number;
    oldest: Date | null;
    oldest_wait_secs: number | null;
    workers: number;
  }>(
    `WITH now_utc AS (SELECT now() AT TIME ZONE 'UTC' AS t),
     stats AS (
       SELECT tag,
              count(*) FILTER (WHERE status = 'queued')::int AS queued,
              count(*) FILTER (WHERE status = 'queued' AND scheduled_for > (SELECT t FROM now_utc))::int AS scheduled,
              count(*) FILTER (WHERE status = 'running')::int AS running,
              min(greatest(created_at, scheduled_for))
                FILTER (WHERE status = 'queued' AND scheduled_for <= (SELECT t FROM now_utc)) AS oldest
         FROM job WHERE status IN ('queued', 'running') GROUP BY tag),
     served AS (
       SELECT tag, count(*)::int AS workers FROM worker_ping, unnest(tags) AS tag
        WHERE last_ping_at > (SELECT t FROM now_utc) - interval '60 seconds' GROUP BY tag)
     SELECT s.tag, s.queued, s.scheduled, s.running, s.oldest AT TIME ZONE 'UTC' AS oldest,
            floor(extract(epoch FROM (SELECT t FROM now_utc) - s.oldest))::int AS oldest_wait_secs,
            coalesce(w.workers, 0) AS workers
       FROM stats s LEFT JOIN served w ON w.tag = s.tag
      ORDER BY s.tag`,
  );
  return rows.map((row) => ({
    tag: row.tag,
    queued: row.queued,
    scheduled: row.scheduled,
    running: row.running,
    oldest_queued_at: row.oldest?.toISOString() ?? null,
    oldest_wait_secs: row.oldest_wait_secs === null ? null : Math.max(0, row.oldest_wait_secs),
    workers: row.workers,
  }));
}
