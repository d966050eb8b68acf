import { createPool, isTransactionPooled, parseMultiHostUrl, POOL_DEFAULTS } from "@millrace/db";
import { PgBoss } from "pg-boss";

export type Boss = PgBoss;

/**
 * One pg-boss instance per process. pg-boss keeps its own schema (`pgboss`) and migrates it under
 * an advisory lock, so any process may start first. Maintenance runs in servers only: workers
 * only send, fetch and complete.
 */
export async function startBoss(
  databaseUrl: string,
  role: "server" | "worker",
  options: { max?: number } = {},
): Promise<PgBoss> {
  const max = options.max ?? POOL_DEFAULTS[role].queue;
  const applicationName = `millrace-${role}-boss`;
  // pg-boss's own pool reads only single-host URLs and prepares nothing it knows of PgBouncer:
  // a multi-host or transaction-pooled URL goes through ours, which follows the primary
  // (packages/db hosts.ts) and sends no named statement (pgbouncer.ts).
  const pool =
    parseMultiHostUrl(databaseUrl) || isTransactionPooled(databaseUrl)
      ? createPool(databaseUrl, { max, applicationName })
      : null;
  const boss = new PgBoss({
    ...(pool
      ? { db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values) } }
      : { connectionString: databaseUrl, max, application_name: applicationName }),
    supervise: role === "server",
    schedule: false,
    migrate: true,
  });
  boss.on("error", (error: Error) => console.error(`[pg-boss] ${error.message}`));
  if (pool) boss.on("stopped", () => void pool.end().catch(() => {}));
  await boss.start();
  return boss;
}

const knownQueues = new WeakMap<PgBoss, Set<string>>();

/**
 * Each tag is a pg-boss queue; create it the first time this process sees the tag. Each queue
 * gets a table of its own (`partition`): in pg-boss's shared table, a queue's fetch walks the
 * finished jobs of every other queue still kept there, and the drain rate of a fresh tag fell
 * from ~4,500 to ~500 jobs/s here after 20,000 jobs of other tags.
 */
export async function ensureQueue(boss: PgBoss, tag: string): Promise<void> {
  let known = knownQueues.get(boss);
  if (!known) knownQueues.set(boss, (known = new Set()));
  if (known.has(tag)) return;
  if (!(await boss.getQueue(tag))) {
    try {
      await boss.createQueue(tag, { policy: "standard", retryLimit: 0, partition: true });
    } catch (error) {
      // Another process created it between our check and our create.
      if (!(await boss.getQueue(tag))) throw error;
    }
  }
  known.add(tag);
}
