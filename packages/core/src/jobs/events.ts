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
 *
 * Per line, the result is turned into text once and the line is concatenated: measuring the
 * result and then building a jsonb array around it serialized every result twice, and ordering
 * the running sum by id sorted every batch; these were ~2 µs of a completion's ~15 µs per job
 * (EXPLAIN ANALYZE, 400 no-op jobs). The running sum needs no order: any grouping of the lines
 * into payloads under the limit will do. The status is an enum of plain words, safe to quote as
 * it is.
 */
export const NOTIFY_OUTCOMES = (cte: string, channel: string) =>
  `SELECT pg_notify(${channel}, string_agg(line, E'\\n'))
     FROM (SELECT line, floor(sum(octet_length(line) + 1) OVER (ROWS UNBOUNDED PRECEDING) / 6500) AS chunk
             FROM (SELECT CASE WHEN octet_length(result_text) <= ${NOTIFIED_RESULT_BYTES}
                          THEN id::text || ' ["' || status::text || '",' || result_text
                               || CASE WHEN cardinality(result_columns) > 0 THEN ',' || to_jsonb(result_columns)::text ELSE '' END
                               || ']'
                          ELSE id::text END AS line
                     FROM (SELECT id, status, result_columns, result::text AS result_text FROM ${cte}) AS outcomes) AS lines) AS chunked
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

type JobChannel = typeof JOB_DONE_CHANNEL | typeof JOB_LOG_CHANNEL;

// A channel nobody waits on any more stays listened this long: waiters that come one after the
// other (a client calling run_wait_result in a loop) do not pay a LISTEN each.
const UNLISTEN_AFTER_MS = 60_000;

/**
 * One LISTEN connection per process, fanning Postgres notifications out to in-process waiters
 * (run_wait_result, log streams). Notifications carry job ids, and completions the small outcomes
 * they recorded; otherwise waiters re-read the row, so a missed or duplicated notification never
 * yields a wrong answer, only a later one. On reconnect, every waiter is poked so it re-reads
 * what it may have missed.
 *
 * A channel is listened only while someone in the process waits on it (and a minute after).
 * PostgreSQL wakes every listening session of the database at every NOTIFY, and the session
 * passes the notification on: a server nobody waits on would otherwise be woken at every job's
 * completion and log flush of the whole instance, for nothing (~0.1 ms of CPU a wake-up on these
 * VMs, twice: its session and the server).
 */
export class JobEvents {
  private client: pg.Client | null = null;
  private readonly listeners = new Map<string, Map<string, Set<Listener>>>();
  private connecting: Promise<void> | null = null;
  private closed = false;
  private readonly databaseUrl: string;
  /** Channels the current connection listens on, or is being told to. */
  private readonly listened = new Map<JobChannel, Promise<void>>();
  private readonly unlistenTimers = new Map<JobChannel, NodeJS.Timeout>();
  private readonly unlistenAfterMs: number;

  constructor(databaseUrl: string, options: { unlistenAfterMs?: number } = {}) {
    this.databaseUrl = databaseUrl;
    this.unlistenAfterMs = options.unlistenAfterMs ?? UNLISTEN_AFTER_MS;
  }

  /** The channels the connection listens on, as PostgreSQL says (tests, diagnostics). */
  async channelsListened(): Promise<string[]> {
    await this.start();
    const { rows } = await this.client!.query<{ channel: string }>(
      "SELECT pg_listening_channels() AS channel ORDER BY 1",
    );
    return rows.map((row) => row.channel);
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
    try {
      await client.connect();
    } finally {
      this.connecting = null;
    }
    this.client = client;
    // Channels still waited on when a connection was lost.
    for (const [channel, byJob] of this.listeners)
      if (byJob.size > 0) void this.listening(channel as JobChannel).catch(() => {});
  }

  private reconnect(dead: pg.Client): void {
    if (this.closed || this.client !== dead) return;
    this.client = null;
    this.listened.clear();
    const retry = (): void => {
      if (this.closed) return;
      this.connect()
        .then(() => this.pokeAll())
        .catch(() => setTimeout(retry, 1000));
    };
    setTimeout(retry, 200);
  }

  /**
   * Resolves once the connection listens on `channel`: a waiter that reads the job's state after
   * this cannot miss the notification of a change that comes after its read. Rejects while the
   * database cannot be reached (the waiter's periodic re-reads carry on meanwhile).
   */
  async listening(channel: JobChannel): Promise<void> {
    const pending = this.unlistenTimers.get(channel);
    if (pending) {
      clearTimeout(pending);
      this.unlistenTimers.delete(channel);
    }
    await this.start();
    const client = this.client;
    if (!client) throw new Error("the job events connection is being re-established");
    let listened = this.listened.get(channel);
    if (!listened) {
      listened = client.query(`LISTEN ${channel}`).then(() => undefined);
      this.listened.set(channel, listened);
      listened.catch(() => {
        if (this.listened.get(channel) === listened) this.listened.delete(channel);
      });
    }
    await listened;
  }

  private unlistenLater(channel: JobChannel): void {
    if (this.unlistenTimers.has(channel) || this.closed) return;
    const timer = setTimeout(() => {
      this.unlistenTimers.delete(channel);
      if (this.listeners.get(channel)?.size || !this.listened.has(channel) || !this.client) return;
      this.listened.delete(channel);
      this.client.query(`UNLISTEN ${channel}`).catch(() => {});
    }, this.unlistenAfterMs);
    timer.unref();
    this.unlistenTimers.set(channel, timer);
  }

  private pokeAll(): void {
    for (const [channel, byJob] of this.listeners)
      for (const jobId of byJob.keys()) this.emit(channel, jobId, null);
  }

  private emit(channel: string, jobId: string, outcome: NotifiedOutcome | null): void {
    for (const listener of this.listeners.get(channel)?.get(jobId) ?? []) listener(jobId, outcome);
  }

  /**
   * Calls `listener` whenever the job's channel fires; returns the unsubscribe function. The
   * channel is listened from then on: `listening` says when (a waiter awaits it before its first
   * read).
   */
  on(channel: JobChannel, jobId: string, listener: Listener): () => void {
    let byJob = this.listeners.get(channel);
    if (!byJob) this.listeners.set(channel, (byJob = new Map()));
    let set = byJob.get(jobId);
    if (!set) byJob.set(jobId, (set = new Set()));
    set.add(listener);
    void this.listening(channel).catch(() => {});
    return () => {
      set.delete(listener);
      if (set.size === 0) byJob.delete(jobId);
      if (byJob.size === 0) this.unlistenLater(channel);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.unlistenTimers.values()) clearTimeout(timer);
    this.unlistenTimers.clear();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
