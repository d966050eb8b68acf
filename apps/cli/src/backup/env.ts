// The environment the backup commands read: the same variables scripts/start.ts reads to find the
// database (DATABASE_URL, else the embedded PostgreSQL in .data/pg on EMBEDDED_PG_PORT).
const env = process.env;

/** DATABASE_URL_DIRECT: where a backup or restore goes when DATABASE_URL is behind PgBouncer. */
export function directDatabaseUrlFromEnv(): string | null {
  return env.DATABASE_URL_DIRECT?.trim() || null;
}

export function databaseUrlFromEnv(): string | null {
  return env.DATABASE_URL?.trim() || null;
}

/** EMBEDDED_PG_PORT when set (start.ts's default, 5488, is kept beside the data in .data/pg.json). */
export function embeddedPortFromEnv(): number | null {
  const raw = env.EMBEDDED_PG_PORT?.trim();
  if (!raw) return null;
  const port = Number(raw);
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : null;
}
