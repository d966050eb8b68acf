// MODE=pool: the `local` autoscaling integration. One pool per machine hosts the worker groups
// named in POOL_GROUPS and keeps as many worker processes of each running as the autoscaler
// decided (autoscaling_state, written by the leader), at most POOL_MAX_WORKERS in all. It learns
// a change from a NOTIFY on the autoscaling channel, and polls as well in case one was missed.
// A worker it stops gets SIGTERM: it stops claiming, lets its running job finish (or puts it back
// in the queue after WORKER_GRACE_PERIOD) and leaves the workers list, as any worker does.
import path from "node:path";
import pg from "pg";
import { AUTOSCALING_CHANNEL, readDesiredWorkers } from "@millrace/core";
import { createClient, createPool } from "@millrace/db";
import { startManaged, stopManaged, type Managed } from "./processes.ts";

/** Poll this often even when no NOTIFY comes (a dropped LISTEN connection, a missed message). */
const POLL_MS = 5000;
/** SIGKILL a stopping worker this long after its grace period (it had its chance). */
const STOP_MARGIN_MS = 15_000;

export interface WorkerPoolOptions {
  root: string;
  databaseUrl: string;
  groups: string[];
  maxWorkers: number;
  /** The environment of every worker process (DATABASE_URL, BASE_URL, secrets…). */
  workerEnv: NodeJS.ProcessEnv;
  /** Seconds a stopping worker lets its job finish (the workers' WORKER_GRACE_PERIOD). */
  graceSecs: number;
  log(message: string): void;
  /** Each started worker, so the caller's watchdog can guard it. */
  onStart?(managed: Managed): void;
}

export interface WorkerPool {
  /** Running (not stopping) workers per group. */
  counts(): Record<string, number>;
  /** Stops every worker gracefully and the pool's connections. */
  stop(): Promise<void>;
}

export async function startWorkerPool(options: WorkerPoolOptions): Promise<WorkerPool> {
  const { groups, log } = options;
  const pool = createPool(options.databaseUrl, { max: 2, applicationName: "millrace-pool" });
  const running = new Map<string, Managed[]>(groups.map((group) => [group, []]));
  const stopping = new Set<Promise<void>>();
  let closed = false;
  let sequence = 0;
  let reconciling: Promise<void> = Promise.resolve();

  const startWorker = (group: string) => {
    const name = `worker-${group}-${++sequence}`;
    const managed = startManaged(
      name,
      process.execPath,
      [path.join(options.root, "apps/worker/src/main.ts")],
      {
        cwd: options.root,
        // One slot per process: the autoscaler counts workers, and a stopped process takes only
        // its own job with it.
        env: { ...options.workerEnv, WORKER_GROUP: group, NUM_WORKERS: "1" },
      },
    );
    options.onStart?.(managed);
    void managed.exited.then((code) => {
      const list = running.get(group)!;
      if (!list.includes(managed)) return;
      // Died on its own: forget it, and the next pass starts a replacement.
      list.splice(list.indexOf(managed), 1);
      if (!closed) log(`${name} exited unexpectedly (code ${code}); replacing it`);
      schedule();
    });
    running.get(group)!.push(managed);
  };

  const stopWorker = (group: string) => {
    // The newest first: the oldest have warm caches and are most likely idle-safe alike.
    const managed = running.get(group)!.pop()!;
    const done = stopManaged(managed, options.graceSecs * 1000 + STOP_MARGIN_MS).then(() => {
      stopping.delete(done);
      log(`${managed.name} stopped`);
    });
    stopping.add(done);
  };

  const reconcile = async () => {
    if (closed) return;
    const desired = await readDesiredWorkers(pool, groups);
    // The cap is shared: groups are served in POOL_GROUPS order.
    let budget = options.maxWorkers;
    for (const group of groups) {
      const want = Math.min(desired.get(group) ?? 0, budget);
      budget -= want;
      const list = running.get(group)!;
      if (list.length !== want) log(`group ${group}: ${list.length} → ${want} worker(s)`);
      while (list.length > want) stopWorker(group);
      while (list.length < want) startWorker(group);
    }
  };

  // Passes never overlap: each waits for the previous one.
  const schedule = () => {
    reconciling = reconciling
      .then(reconcile)
      .catch((error: Error) => log(`could not read the desired worker counts: ${error.message}`));
    return reconciling;
  };

  let listener: pg.Client | null = null;
  const listen = async () => {
    // createClient: the primary of a multi-host URL, DATABASE_URL_DIRECT behind PgBouncer.
    const client = createClient(options.databaseUrl, { application_name: "millrace-pool-listen" });
    client.on("notification", (message) => {
      if (groups.includes(message.payload ?? "")) void schedule();
    });
    // A lost connection is replaced at the next poll; the poll keeps the pool right meanwhile.
    client.on("error", () => {
      if (listener === client) listener = null;
    });
    await client.connect();
    await client.query(`LISTEN ${AUTOSCALING_CHANNEL}`);
    listener = client;
  };
  const poll = setInterval(() => {
    if (!listener && !closed) void listen().catch(() => {});
    void schedule();
  }, POLL_MS);

  await listen().catch((error: Error) =>
    log(`LISTEN failed (polling every ${POLL_MS / 1000} s): ${error.message}`),
  );
  await schedule();
  log(`hosting worker group(s) ${groups.join(", ")}, at most ${options.maxWorkers} worker(s)`);

  return {
    counts: () => Object.fromEntries([...running].map(([group, list]) => [group, list.length])),
    async stop() {
      closed = true;
      clearInterval(poll);
      await reconciling;
      for (const group of groups) while (running.get(group)!.length > 0) stopWorker(group);
      await Promise.all(stopping);
      await listener?.end().catch(() => {});
      await pool.end();
    },
  };
}
