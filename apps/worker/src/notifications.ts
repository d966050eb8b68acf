import type pg from "pg";
import { createClient } from "@millrace/db";

type Handler = (payload: string) => void;

/**
 * The worker's one LISTEN connection: queued jobs (wake idle slots), cancel requests and worker
 * group config changes. If it drops, it reconnects and calls `onReconnect` so callers can re-read
 * what they may have missed; until then the periodic re-checks keep everything moving.
 *
 * Besides its fixed channels it follows a set that changes (`follow`): the channels of the tags the
 * worker serves now, each announcing jobs queued on one tag (see queuedChannel).
 */
export class Notifications {
  private client: pg.Client | null = null;
  private closed = false;
  private readonly handlers = new Map<string, Handler>();
  private readonly databaseUrl: string;
  private readonly onReconnect: () => void;
  private followed = new Map<string, Handler>();
  // LISTEN and UNLISTEN of followed channels, one change after the other.
  private changing: Promise<void> = Promise.resolve();

  constructor(databaseUrl: string, handlers: Record<string, Handler>, onReconnect: () => void) {
    this.databaseUrl = databaseUrl;
    for (const [channel, handler] of Object.entries(handlers)) this.handlers.set(channel, handler);
    this.onReconnect = onReconnect;
  }

  async start(): Promise<void> {
    const client = createClient(this.databaseUrl, { application_name: "millrace-worker-listen" });
    client.on("notification", (message) =>
      (this.handlers.get(message.channel) ?? this.followed.get(message.channel))?.(message.payload ?? ""),
    );
    const lost = () => {
      if (this.closed || this.client !== client) return;
      this.client = null;
      const retry = () => {
        if (this.closed) return;
        this.start().then(this.onReconnect, () => setTimeout(retry, 1000));
      };
      setTimeout(retry, 500);
    };
    client.on("error", lost);
    client.on("end", lost);
    await client.connect();
    for (const channel of [...this.handlers.keys(), ...this.followed.keys()])
      await client.query(`LISTEN ${channel}`);
    this.client = client;
  }

  /**
   * Listens on exactly `channels` (besides the fixed ones) from now on, each with its handler.
   * Channels are identifiers made by this process (see queuedChannel), never user text.
   */
  follow(channels: Map<string, Handler>): Promise<void> {
    const change = this.changing.then(async () => {
      const before = this.followed;
      this.followed = channels;
      const client = this.client;
      // Not connected: start() listens on the new set.
      if (!client) return;
      for (const channel of channels.keys())
        if (!before.has(channel)) await client.query(`LISTEN ${channel}`);
      for (const channel of before.keys())
        if (!channels.has(channel)) await client.query(`UNLISTEN ${channel}`);
    });
    // A failed change is made whole by the reconnect, which listens on the current set.
    this.changing = change.catch(() => {});
    return change;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}

/**
 * Lets idle claim loops sleep until a job is queued on one of their tags. The generation counter
 * catches a notification that arrived while the loop was busy checking the queue.
 */
export class WakeSignal {
  private generation = 0;
  private waiters = new Set<() => void>();

  current(): number {
    return this.generation;
  }

  wakeAll(): void {
    this.generation++;
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  /** Resolves on the next wake-up after `seen`, or after `timeoutMs`. */
  wait(seen: number, timeoutMs: number): Promise<void> {
    if (this.generation !== seen) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
    });
  }
}
