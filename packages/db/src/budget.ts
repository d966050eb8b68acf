// How many PostgreSQL connections a Millrace process may open, part by part, so that an operator
// can size max_connections (or PgBouncer's pool) before the cluster refuses a connection under
// load. Each process prints its budget at start and checks that the cluster has room for it.
import { createClient } from "./hosts.ts";
import { isTransactionPooled } from "./pgbouncer.ts";

export type ProcessRole = "server" | "worker";

export interface BudgetSettings {
  /** DB_POOL_SIZE: the process's main pool (Prisma and raw SQL). */
  poolSize?: number;
  /** DB_QUEUE_POOL_SIZE: pg-boss's pool. */
  queuePoolSize?: number;
}

/** The defaults of DB_POOL_SIZE and DB_QUEUE_POOL_SIZE per role. */
export const POOL_DEFAULTS: Record<ProcessRole, { pool: number; queue: number }> = {
  server: { pool: 10, queue: 4 },
  worker: { pool: 6, queue: 2 },
};

/** A worker's pool for claims (asynchronous commit, see claimJobs): fixed, claims are short. */
export const WORKER_CLAIM_POOL_SIZE = 2;

export interface ConnectionBudget {
  role: ProcessRole;
  /** Connections per part, in the order they are printed. */
  /** `session`: a connection of its own (DATABASE_URL_DIRECT behind PgBouncer), not from a pool. */
  parts: { name: string; max: number; session?: true }[];
  total: number;
}

export function connectionBudget(role: ProcessRole, settings: BudgetSettings = {}): ConnectionBudget {
  const pool = settings.poolSize ?? POOL_DEFAULTS[role].pool;
  const queue = settings.queuePoolSize ?? POOL_DEFAULTS[role].queue;
  const parts =
    role === "server"
      ? [
          { name: "pool", max: pool },
          { name: "queue", max: queue },
          // Sessions of their own: LISTEN for job events, the leader lock, the schedules ticker.
          { name: "job events", max: 1, session: true as const },
          { name: "leader election", max: 1, session: true as const },
          { name: "schedules", max: 1, session: true as const },
        ]
      : [
          { name: "pool", max: pool },
          { name: "claims", max: WORKER_CLAIM_POOL_SIZE },
          { name: "queue", max: queue },
          // LISTEN for cancellations, config changes and secret reads.
          { name: "notifications", max: 1, session: true as const },
        ];
  return { role, parts, total: parts.reduce((sum, part) => sum + part.max, 0) };
}

/** `up to 17 database connections (pool 10, queue 4, …)`. */
export function describeBudget(budget: ConnectionBudget): string {
  return `up to ${budget.total} database connections (${budget.parts.map((p) => `${p.name} ${p.max}`).join(", ")})`;
}

export interface ClusterRoom {
  maxConnections: number;
  reserved: number;
  inUse: number;
  /** Connections a non-superuser can still open (superusers may also take the reserved ones). */
  free: number;
}

/** The cluster's max_connections and what is already taken, read with one short connection. */
export async function clusterRoom(databaseUrl: string): Promise<ClusterRoom> {
  const client = createClient(databaseUrl, { connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ max: number; reserved: number; in_use: number }>(
      `SELECT current_setting('max_connections')::int AS max,
              current_setting('superuser_reserved_connections')::int AS reserved,
              (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS in_use`,
    );
    const { max, reserved, in_use } = rows[0]!;
    return { maxConnections: max, reserved, inUse: in_use, free: Math.max(0, max - reserved - in_use) };
  } finally {
    await client.end();
  }
}

/**
 * Null when `needed` connections fit in the cluster; else the message naming the numbers. With
 * `whole: true` the question is whether they could ever fit (max_connections alone), for a
 * launcher that starts every process itself; else whether they fit beside what is in use now.
 */
export function roomProblem(room: ClusterRoom, needed: number, what: string, whole = false): string | null {
  const capacity = room.maxConnections - room.reserved;
  if (whole) {
    return needed <= capacity
      ? null
      : `${what} may open ${needed} database connections, but the cluster's max_connections is ${room.maxConnections} ` +
          `(${room.reserved} reserved for superusers): raise max_connections, lower DB_POOL_SIZE / DB_QUEUE_POOL_SIZE ` +
          `or NUM_WORKERS, or put PgBouncer in front`;
  }
  return needed <= room.free
    ? null
    : `${what} may open ${needed} database connections, but only ${room.free} of max_connections ${room.maxConnections} ` +
        `are free (${room.inUse} in use, ${room.reserved} reserved for superusers): under load it will be refused ` +
        `connections (answered 503). Raise max_connections, lower DB_POOL_SIZE / DB_QUEUE_POOL_SIZE, or put PgBouncer in front`;
}

/**
 * How many of `budget`'s connections reach PostgreSQL itself: all of them, except behind PgBouncer
 * in transaction mode, where the pools' connections are the pooler's to share out (its
 * default_pool_size and max_db_connections) and only the sessions of their own go direct.
 */
export function directConnections(databaseUrl: string, budget: ConnectionBudget): number {
  if (!isTransactionPooled(databaseUrl)) return budget.total;
  return budget.parts.filter((part) => part.session).reduce((sum, part) => sum + part.max, 0);
}

/**
 * Logs a warning when the cluster has no room now for `needed` more connections. A database that
 * does not answer is not this check's to report: the process starts and its pools retry.
 */
export async function warnIfNoRoom(
  databaseUrl: string,
  budget: ConnectionBudget,
  what: string,
  log: (message: string) => void,
): Promise<void> {
  const needed = directConnections(databaseUrl, budget);
  const room = await clusterRoom(databaseUrl).catch(() => null);
  const problem = room && roomProblem(room, needed, what);
  if (problem) log(`warning: ${problem}`);
}
