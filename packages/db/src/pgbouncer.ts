// PgBouncer in transaction mode (issue 38 item 1). A DATABASE_URL with `pgbouncer=true` (Prisma's
// spelling of the same promise) says that each transaction may run on another server connection:
// nothing that lives in a session may be relied on across statements. So, on such a URL:
// - pools send no named prepared statement (PgBouncer 1.18 forwards none: the next statement may
//   land where the name was never parsed) and no `options` startup parameter (1.18 refuses it);
//   the session time zone must then be UTC at the pooler (checked at start, sessionProblem);
// - what needs a session of its own (LISTEN, the leader's advisory lock, the schedules ticker,
//   migrations, the restore's claim pause) connects to DATABASE_URL_DIRECT instead: PostgreSQL
//   itself, or a PgBouncer database in session mode. Each process opens at most a few of those.

import pg from "pg";

const PGBOUNCER_PARAM = /([?&])pgbouncer=(true|1)(&|$)/i;

/** True when `url` reaches PgBouncer in transaction mode (`?pgbouncer=true`). */
export function isTransactionPooled(url: string): boolean {
  return PGBOUNCER_PARAM.test(url);
}

/** `url` without Millrace's `pgbouncer` parameter, which no PostgreSQL client understands. */
export function withoutPgbouncerParam(url: string): string {
  return url.replace(PGBOUNCER_PARAM, (_, before: string, _value: string, after: string) =>
    before === "?" ? (after === "&" ? "?" : "") : after,
  );
}

let configuredDirectUrl: string | undefined;

/**
 * Sets DATABASE_URL_DIRECT for this process: each process's env module calls it once it has
 * parsed its environment (the env schemas refuse a pooled DATABASE_URL without it).
 */
export function useDirectDatabaseUrl(url: string | undefined): void {
  configuredDirectUrl = url;
}

/**
 * The URL for a connection that keeps a session: `url` itself, or DATABASE_URL_DIRECT when `url`
 * is transaction-pooled, so that every session user (LISTEN, leader, ticker, migrations)
 * resolves it the same way.
 */
export function sessionUrl(url: string, direct: string | undefined = configuredDirectUrl): string {
  if (!isTransactionPooled(url)) return url;
  if (!direct) throw new Error(DIRECT_URL_REQUIRED);
  if (isTransactionPooled(direct))
    throw new Error("DATABASE_URL_DIRECT: must not be transaction-pooled (pgbouncer=true)");
  return direct;
}

export const DIRECT_URL_REQUIRED =
  "DATABASE_URL_DIRECT: is required when DATABASE_URL has pgbouncer=true (transaction pooling): " +
  "LISTEN, leader election and migrations need a session (PostgreSQL itself or a PgBouncer database in session mode)";

/**
 * Through PgBouncer the `-c timezone=UTC` startup option cannot pass: the session time zone is
 * whatever the pooler's database entry (`timezone=UTC`) or the database's default says. Raw SQL
 * writes now() into `timestamp` columns that Prisma reads as UTC, so any other zone would shift
 * every stored time: refuse to start rather than store wrong times.
 */
export async function assertPoolerSettings(url: string): Promise<void> {
  if (!isTransactionPooled(url)) return;
  const client = new pg.Client({
    connectionString: withoutPgbouncerParam(url),
    connectionTimeoutMillis: 5000,
  });
  try {
    await client.connect();
  } catch {
    return; // Not this check's to report: the pools retry, and routes answer 503 meanwhile.
  }
  try {
    const { rows } = await client.query<{ zone: string }>("SELECT current_setting('TimeZone') AS zone");
    const zone = rows[0]!.zone;
    if (!/^(UTC|Etc\/UTC|GMT|Etc\/GMT|UCT|Zulu)$/i.test(zone))
      throw new Error(
        `DATABASE_URL: through PgBouncer the session time zone is ${zone}, not UTC: add timezone=UTC to the ` +
          `database's line in pgbouncer.ini, or run ALTER DATABASE … SET timezone TO 'UTC'`,
      );
  } finally {
    await client.end().catch(() => {});
  }
}
