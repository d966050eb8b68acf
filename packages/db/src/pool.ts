import { createHash } from "node:crypto";
import pg from "pg";
import { clientClassFor } from "./hosts.ts";
import { isTransactionPooled, withoutPgbouncerParam } from "./pgbouncer.ts";

// Postgres `bigint` (OID 20) as a JS number: our counters stay far below 2^53.
pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export function createPool(
  databaseUrl: string,
  options: { max?: number; applicationName?: string; asyncCommit?: boolean } = {},
): pg.Pool {
  const pooled = isTransactionPooled(databaseUrl);
  const url = withoutPgbouncerParam(databaseUrl);
  const pool = new pg.Pool({
    connectionString: url,
    // A multi-host DATABASE_URL connects to the writable primary among its hosts (hosts.ts).
    Client: pooled ? unpreparedClient(clientClassFor(url)) : clientClassFor(url),
    max: options.max ?? 10,
    application_name: options.applicationName ?? "millrace",
    // Prisma stores DateTime as `timestamp` (no zone) in UTC; raw SQL that writes now() into those
    // columns must agree, whatever the server's own time zone. Through PgBouncer no startup
    // `options` pass (it refuses them): its database entry sets timezone=UTC, checked at start.
    ...(pooled
      ? {}
      : { options: `-c timezone=UTC${options.asyncCommit ? " -c synchronous_commit=off" : ""}` }),
  });
  // An idle client losing its connection (database restart, failover) must not crash the process;
  // the pool drops it and the next query opens a fresh one.
  pool.on("error", () => {});
  return pool;
}

/**
 * A Client that sends every query unnamed. Behind PgBouncer in transaction mode a statement
 * prepared under a name on one server connection is unknown on the next ("prepared statement
 * does not exist"): `prepared()` configs lose their name and are planned each time instead.
 */
function unpreparedClient(Base: typeof pg.Client): typeof pg.Client {
  return class UnpreparedClient extends Base {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override query(config: any, ...rest: any[]): any {
      if (config && typeof config === "object" && typeof config.submit !== "function" && config.name) {
        const { name: _name, ...unnamed } = config;
        return (super.query as (...args: unknown[]) => unknown)(unnamed, ...rest);
      }
      return (super.query as (...args: unknown[]) => unknown)(config, ...rest);
    }
  } as typeof pg.Client;
}

/** Runs `work` inside one transaction on one connection, rolling back on any error. */
export async function withTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** A URL naming the same server as `url` but another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

const preparedNames = new Map<string, string>();

/**
 * A query config that runs `text` as a named prepared statement: each connection plans it once
 * and reuses the plan. For the statements on a job's path (claim, enqueue, completion, auth),
 * whose planning cost 1–2 ms each on a 2-core VM, more than their execution. The name is a hash
 * of the text, so a changed statement is a new one. Never for `SELECT *`: a prepared statement
 * whose result columns change under it (a migration) fails instead of being replanned.
 */
export function prepared(text: string, values: unknown[]): { name: string; text: string; values: unknown[] } {
  let name = preparedNames.get(text);
  if (!name) {
    name = `millrace_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
    // Bounded: pg-boss inlines queue names, so its statements vary with the tags a process sees.
    if (preparedNames.size < 1000) preparedNames.set(text, name);
  }
  return { name, text, values };
}
