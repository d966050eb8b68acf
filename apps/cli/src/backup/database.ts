// Which database the backup commands work on: DATABASE_URL when set, else the embedded PostgreSQL
// of `npm start` (.data/pg, credentials in .data/pg.json), started here when it is not running and
// stopped again afterwards. The backup commands talk to PostgreSQL directly, never over HTTP.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { CliError, EXIT } from "../exit-codes.ts";
import { databaseUrlFromEnv, directDatabaseUrlFromEnv, embeddedPortFromEnv } from "./env.ts";
import { DIRECT_URL_REQUIRED, isTransactionPooled } from "@millrace/db/pgbouncer";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");

export interface DatabaseTarget {
  url: string;
  /** `DATABASE_URL` or `embedded (.data/pg, port 5488)`, for messages. */
  label: string;
  /** Stops the embedded server when this command started it; otherwise nothing. */
  release(): Promise<void>;
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}

function connectionCode(error: unknown): string | undefined {
  return (error as { code?: string }).code;
}

/** Whether PostgreSQL answers at `url` (false when nothing listens there). */
async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on("error", () => {});
  try {
    await client.connect();
    return true;
  } catch (error) {
    const code = connectionCode(error);
    if (code === "ECONNREFUSED" || code === "ENOENT") return false;
    // Anything else (a missing database, a wrong password) means a server answered.
    if (code === "3D000") return true;
    throw error;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function resolveDatabase(log: (line: string) => void): Promise<DatabaseTarget> {
  const fromEnv = databaseUrlFromEnv();
  if (fromEnv) {
    // A backup reads in one snapshot and a restore holds the claim pause as a session lock:
    // behind PgBouncer in transaction mode both go to DATABASE_URL_DIRECT.
    if (isTransactionPooled(fromEnv)) {
      const direct = directDatabaseUrlFromEnv();
      if (!direct)
        throw new CliError(
          DIRECT_URL_REQUIRED,
          EXIT.USAGE,
          "set DATABASE_URL_DIRECT to a session connection",
        );
      return { url: direct, label: `DATABASE_URL_DIRECT (${redact(direct)})`, release: async () => {} };
    }
    return { url: fromEnv, label: `DATABASE_URL (${redact(fromEnv)})`, release: async () => {} };
  }

  const dataDir = path.join(repoRoot, ".data", "pg");
  const metaFile = `${dataDir}.json`;
  if (!fs.existsSync(path.join(dataDir, "PG_VERSION")) || !fs.existsSync(metaFile)) {
    throw new CliError(
      `no embedded database in ${dataDir} and DATABASE_URL is not set`,
      EXIT.NOT_FOUND,
      "run `npm start` once to create the embedded database, or set DATABASE_URL to your PostgreSQL",
    );
  }
  const meta = JSON.parse(fs.readFileSync(metaFile, "utf8")) as { port: number; password: string };
  const port = embeddedPortFromEnv() ?? meta.port;
  const url = `postgresql://postgres:${meta.password}@127.0.0.1:${port}/millrace`;
  const label = `embedded (.data/pg, port ${port})`;
  if (await answers(url)) return { url, label, release: async () => {} };

  log(`the embedded PostgreSQL is not running: starting it (${label})`);
  const { startEmbeddedPostgres } = await import("@millrace/db/embedded");
  let embedded;
  try {
    embedded = await startEmbeddedPostgres(dataDir, { port });
  } catch (error) {
    throw new CliError(
      `cannot start the embedded PostgreSQL: ${(error as Error).message}`,
      EXIT.UNREACHABLE,
      "stop whatever uses the port, or set DATABASE_URL",
    );
  }
  return {
    url,
    label,
    release: async () => {
      await embedded.stop();
      log("stopped the embedded PostgreSQL again");
    },
  };
}

/** A connected client, or a CliError saying why not (exit 7 when nothing answers). */
export async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    // Prisma stores DateTime as `timestamp` (no zone) in UTC; keep every read and write in UTC.
    options: "-c timezone=UTC",
  });
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw connectError(error, url);
  }
  return client;
}

export function connectError(error: unknown, url: string): CliError {
  const code = connectionCode(error);
  const message = (error as Error).message;
  if (code === "28P01" || code === "28000")
    return new CliError(
      `cannot sign in to ${redact(url)}: ${message}`,
      EXIT.UNAUTHORIZED,
      "check the user and password in DATABASE_URL",
    );
  if (code === "3D000")
    return new CliError(
      `${message} (${redact(url)})`,
      EXIT.NOT_FOUND,
      "create the database or fix DATABASE_URL",
    );
  return new CliError(
    `cannot reach PostgreSQL at ${redact(url)} (${code ?? message})`,
    EXIT.UNREACHABLE,
    "check that PostgreSQL runs and DATABASE_URL points at it (unset it to use the embedded one)",
  );
}

export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, "")) || "postgres";
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
