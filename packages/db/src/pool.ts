import { createHash } from "node:crypto";
import pg from "pg";
import { clientClassFor } from "./hosts.ts";

// Postgres `bigint` (OID 20) as a JS number: our counters stay far below 2^53.
pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export function createPool(
  databaseUrl: string,
  options: { max?: number; applicationName?: string; asyncCommit?: boolean } = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    // A multi-host DATABASE_URL connects to the writable primary among its hosts (hosts.ts).
    Client: clientClassFor(databaseUrl),
    max: options.max ?? 10,
    application_name: options.applicationName ?? "millrace",
    // Prisma stores DateTime as `timestamp` (no zone) in UTC; raw SQL that writes now() into those
    // columns must agree, whatever the server's own time zone.
    options: `-c timezone=UTC${options.asyncCommit ? " -c synchronous_commit=off" : ""}`,
  });
  // An idle client losing its connection (database restart, failover) must not crash the process;
  // the pool drops it and the next query opens a fresh one.
  pool.on("error", () => {});
  return pool;
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
