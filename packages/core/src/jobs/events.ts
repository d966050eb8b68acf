import type pg from "pg";
import { createClient } from "@millrace/db";
import { inColumnOrder } from "./result-columns.ts";

export const JOB_DONE_CHANNEL = "millrace_job_done";
export const JOB_LOG_CHANNEL = "millrace_job_log";
/** A job to kill: workers running it end its process tree (cancel.ts and the flow engine send it). */
export const JOB_CANCEL_CHANNEL = "millrace_job_cancel";

/** A finished job's outcome, carried by its completion's notification when it is small. */
export interface NotifiedOutcome {
  status: "success" | "failure" | "canceled";
  result: unknown;
}

type Listener = (jobId: string, outcome: NotifiedOutcome | null) => void;

/**
 * Notifications carry one job id or several, comma-separated: a batch of completions sends one
 * NOTIFY per 150 jobs instead of one per job (every listening backend reads every notification,
 * so at thousands of jobs a second this matters), staying under PostgreSQL's 8000-byte payload.
 * `NOTIFY_CHUNKS(cte)` is the FROM clause grouping a CTE's `id` column into such chunks.
 */
export const NOTIFY_CHUNKS = (cte: string) =>
  `(SELECT id, (row_number() OVER () - 1) / 150 AS chunk FROM ${cte}) AS chunked GROUP BY chunk`;

// Results up to this size (as JSON) travel in the completion's notification, so whoever waits
// for them answers without reading the row again.
const NOTIFIED_RESULT_BYTES = 1000;

/**
 * The NOTIFY of completed jobs (a CTE returning `id`, `status`, `result` and `result_columns`): one
 * line per job, `<id>` or, for a small result, `<id> [status, result]` (the result as stored:
 * jsonb's text), `<id> [status, result, columns]` for a table result (see result-columns.ts).
 * Lines are grouped into payloads of at most ~7.6 kB: 6500 bytes, plus the line that crosses it.
 */
export const NOTIFY_OUTCOMES = (cte: string, channel: string) =>
  `SELECT pg_notify(${channel}, string_agg(line, E'\\n'))
     FROM (SELECT line, floor(sum(octet_length(line) + 1) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) / 6500) AS chunk
             FROM (SELECT id, id::text || CASE WHEN octet_length(result::text) <= ${NOTIFIED_RESULT_BYTES}
                                          THEN ' ' || (CASE WHEN cardinality(result_columns) > 0
                                                             THEN jsonb_build_array(status, result, result_columns)
                                                             ELSE jsonb_build_array(status, result) END)::text
                                          ELSE '' END AS line
                     FROM ${cte}) AS lines) AS chunked
    GROUP BY chunk`;

/** The job ids of a notification payload, each with its outcome when the payload carries it. */
export function parseNotification(payload: string): [string, NotifiedOutcome | null][] {
  const entries: [string, NotifiedOutcome | null][] = [];
  for (const line of payload.split("\n")) {
    const space = line.indexOf(" ");
    if (space < 0) {
      for (const id of line.split(",")) if (id) entries.push([id, null]);
      continue;
    }
    try {
      const [status, result, columns] = JSON.parse(line.slice(space + 1)) as [
        NotifiedOutcome["status"],
        unknown,
        string[] | undefined,
      ];
      entries.push([line.slice(0, space), { status, result: inColumnOrder(result, columns) }]);
    } catch {
      // Not ours to read: the waiter re-reads the row instead.
      entries.push([line.slice(0, space), null]);
    }
  }
  return entries;
}

/**
 * One LISTEN connection per process, fanning Postgres notifications out to in-process waiters
 * (run_wait_result, log streams). Notifications carry job ids, and completions the small outcomes
 * they recorded; otherwise waiters re-read the row, so a missed or duplicated notification never
 * yields a wrong answer, only a later one. On reconnect, every waiter is poked so it re-reads
 * what it may have missed.
 */
export class JobEvents {
  private client: pg.Client | null = null;
  private readonly listeners = new Map<string, Map<string, Set<Listener>>>();
  private connecting: Promise<void> | null = null;
  private closed = false;
  private readonly databaseUrl: string;

  constructor(databaseUrl: string) {
    this.databaseUrl = databaseUrl;
  }

  async start(): Promise<void> {
    if (this.client) return;
    this.connecting ??= this.connect();
    await this.connecting;
  }

  private async connect(): Promise<void> {
    const client = createClient(this.databaseUrl, { application_name: "millrace-events" });
    client.on("notification", (message) => {
      for (const [jobId, outcome] of parseNotification(message.payload ?? ""))
        this.emit(message.channel, jobId, outcome);
    });
    client.on("error", () => this.reconnect(client));
    client.on("end", () => this.reconnect(client));
    await client.connect();
    await client.query(`LISTEN ${JOB_DONE_CHANNEL}; LISTEN ${JOB_LOG_CHANNEL}`);
    this.client = client;
    this.connecting = null;
  }

  private reconnect(dead: pg.Client): void {
    if (this.closed || this.client !== dead) return;
    this.client = null;
    const retry = (): void => {
      if (this.closed) return;
      this.connect()
        .then(() => this.pokeAll())
        .catch(() => setTimeout(retry, 1000));
    };
    setTimeout(retry, 200);
  }

  private pokeAll(): void {
    for (const [channel, byJob] of this.listeners)
      for (const jobId of byJob.keys()) this.emit(channel, jobId, null);
  }

  private emit(channel: string, jobId: string, outcome: NotifiedOutcome | null): void {
    for (const listener of this.listeners.get(channel)?.get(jobId) ?? []) listener(jobId, outcome);
  }

  /** Calls `listener` whenever the job's channel fires; returns the unsubscribe function. */
  on(
    channel: typeof JOB_DONE_CHANNEL | typeof JOB_LOG_CHANNEL,
    jobId: string,
    listener: Listener,
  ): () => void {
    let byJob = this.listeners.get(channel);
    if (!byJob) this.listeners.set(channel, (byJob = new Map()));
    let set = byJob.get(jobId);
    if (!set) byJob.set(jobId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) byJob.delete(jobId);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
