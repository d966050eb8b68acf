import pg from "pg";
import { JOB_QUEUED_CHANNEL } from "@millrace/core";

/**
 * Wakes idle claim loops when a job is queued on one of their tags (LISTEN/NOTIFY), instead of
 * polling: an idle worker starts a job a few ms after it is sent. A counter lets a loop detect a
 * notification that arrived while it was busy checking the queue, so none is lost.
 */
export class WakeSignal {
  private generation = 0;
  private waiters = new Set<() => void>();
  private client: pg.Client | null = null;
  private closed = false;
  private readonly databaseUrl: string;
  private readonly tags: ReadonlySet<string>;

  constructor(databaseUrl: string, tags: readonly string[]) {
    this.databaseUrl = databaseUrl;
    this.tags = new Set(tags);
  }

  async start(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: "millrace-worker-wake",
    });
    client.on("notification", (message) => {
      if (message.payload && this.tags.has(message.payload)) this.wakeAll();
    });
    const onLost = () => {
      if (this.closed || this.client !== client) return;
      this.client = null;
      // Reconnect; until then the loops' periodic re-check keeps jobs flowing.
      setTimeout(() => this.start().then(() => this.wakeAll(), onLost), 1000);
    };
    client.on("error", onLost);
    client.on("end", onLost);
    await client.connect();
    await client.query(`LISTEN ${JOB_QUEUED_CHANNEL}`);
    this.client = client;
  }

  current(): number {
    return this.generation;
  }

  wakeAll(): void {
    this.generation++;
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  /** Resolves on the next notification after `seen`, or after `timeoutMs`. */
  wait(seen: number, timeoutMs: number): Promise<void> {
    if (this.generation !== seen || this.closed) return Promise.resolve();
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

  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
