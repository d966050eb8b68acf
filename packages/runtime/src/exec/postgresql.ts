// The one exception to "no database in runtime": this is the user's own database (a resource passed
// as an argument), never Millrace's.
// eslint-disable-next-line no-restricted-imports
import pg from "pg";
import { inferSqlSchema, sqlArguments } from "../schema/sql.ts";
import type { ExecuteOutcome, ExecuteRequest } from "./request.ts";
import { splitSqlStatements } from "./sql-statements.ts";
import type { SqlStatement } from "./sql-statements.ts";

const JSON_TYPES = /^jsonb?$/i;
const CONNECT_TIMEOUT_MS = 10_000;
// Result types returned as text: pg would turn date and timestamp (without zone) into a Date in
// the worker's time zone, shifting the value.
const TEXT_RESULT_OIDS = new Set([1082, 1114]);
const INT8_OID = 20;

interface Param {
  name: string;
  type: string | undefined;
}

/** The `database` argument: a `postgresql` resource, already resolved from `$res:` by the worker. */
interface PgResource {
  host?: unknown;
  port?: unknown;
  user?: unknown;
  password?: unknown;
  dbname?: unknown;
  sslmode?: unknown;
  root_certificate_pem?: unknown;
}

class ScriptError extends Error {
  override name = "ExecutionErr";
}

/** The declared arguments by position; the raw PostgreSQL type matters here (it becomes a cast). */
function declaredParams(content: string): Map<number, Param> {
  return new Map(
    sqlArguments(content).map((arg) => [arg.position, { name: arg.name, type: arg.type ?? undefined }]),
  );
}

function argValue(req: ExecuteRequest, param: Param, defaults: Record<string, unknown>): unknown {
  const value = Object.hasOwn(req.args, param.name) ? req.args[param.name] : defaults[param.name];
  if (value === undefined || value === null) return null;
  // A JSON argument is sent as JSON text even when it is an array (pg would make it a PG array).
  if (param.type && JSON_TYPES.test(param.type.trim())) return JSON.stringify(value);
  return value;
}

/**
 * Renumbers a statement's placeholders from $1 (PostgreSQL wants every parameter up to the highest
 * one used in each statement) and casts each to its declared type, so that `SELECT $1` returns an
 * integer for `-- $1 n (int)` instead of text.
 */
function bindStatement(
  statement: SqlStatement,
  params: Map<number, Param>,
  values: (n: number) => unknown,
): { text: string; values: unknown[] } {
  const local = new Map<number, number>();
  const bound: unknown[] = [];
  let text = "";
  let at = 0;
  for (const placeholder of statement.params) {
    const param = params.get(placeholder.n);
    if (!param) {
      throw new ScriptError(
        `the script uses $${placeholder.n} but does not declare it: add a line \`-- $${placeholder.n} name (type)\``,
      );
    }
    let k = local.get(placeholder.n);
    if (k === undefined) {
      k = bound.push(values(placeholder.n));
      local.set(placeholder.n, k);
    }
    text += statement.text.slice(at, placeholder.start) + (param.type ? `($${k}::${param.type})` : `$${k}`);
    at = placeholder.end;
  }
  return { text: text + statement.text.slice(at), values: bound };
}

function resourceOf(req: ExecuteRequest): PgResource {
  const database = req.args.database;
  if (database === null || typeof database !== "object" || Array.isArray(database)) {
    throw new ScriptError(
      "a postgresql script needs a `database` argument: a resource of type postgresql ($res:<path>)",
    );
  }
  return database as PgResource;
}

const text = (value: unknown): string | undefined =>
  value === undefined || value === null || value === "" ? undefined : String(value);

type SslChoice = false | { rejectUnauthorized: boolean; ca?: string; checkServerIdentity?: () => undefined };

/** libpq's sslmode, with `prefer` (its default) meaning: TLS when the server offers it. */
function sslOptions(resource: PgResource): { ssl: SslChoice; fallback: boolean } {
  const mode = text(resource.sslmode) ?? "prefer";
  const ca = text(resource.root_certificate_pem);
  switch (mode) {
    case "disable":
      return { ssl: false, fallback: false };
    case "allow":
    case "prefer":
      return { ssl: { rejectUnauthorized: false }, fallback: true };
    case "require":
      return { ssl: { rejectUnauthorized: false }, fallback: false };
    case "verify-ca":
      return {
        ssl: { rejectUnauthorized: true, ...(ca ? { ca } : {}), checkServerIdentity: () => undefined },
        fallback: false,
      };
    case "verify-full":
      return { ssl: { rejectUnauthorized: true, ...(ca ? { ca } : {}) }, fallback: false };
    default:
      throw new ScriptError(`unknown sslmode ${JSON.stringify(mode)} in the database resource`);
  }
}

// Servers known to refuse TLS, so that `prefer` does not pay a refused handshake per job.
const plainServers = new Set<string>();

const typeParsers = {
  getTypeParser(oid: number, format?: string): (value: string) => unknown {
    if (TEXT_RESULT_OIDS.has(oid)) return (value) => value;
    if (oid === INT8_OID) {
      return (value) => {
        const n = Number(value);
        return Number.isSafeInteger(n) ? n : value;
      };
    }
    return pg.types.getTypeParser(oid, format as "text");
  },
};

async function connect(resource: PgResource, timeoutMs: number): Promise<pg.Client> {
  const { ssl, fallback } = sslOptions(resource);
  const host = text(resource.host) ?? "localhost";
  const port = Number(resource.port ?? 5432);
  const key = `${host}:${port}`;
  const open = async (useSsl: SslChoice) => {
    const client = new pg.Client({
      host,
      port,
      user: text(resource.user),
      password: text(resource.password) ?? "",
      database: text(resource.dbname),
      ssl: useSsl,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // Server-side backstop for the job timeout, in case the worker dies mid-query.
      statement_timeout: Math.max(1, Math.min(Math.round(timeoutMs), 2 ** 31 - 1)),
      application_name: "millrace-job",
      types: typeParsers,
    });
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    return client;
  };
  if (ssl && fallback && plainServers.has(key)) return open(false);
  try {
    return await open(ssl);
  } catch (error) {
    if (!(ssl && fallback && /does not support SSL/i.test((error as Error).message))) throw error;
    plainServers.add(key);
    return open(false);
  }
}

/** Asks the server to cancel the statement running on `client` (pg_cancel_backend from a 2nd connection). */
async function cancelRunning(resource: PgResource, client: pg.Client): Promise<void> {
  const pid = (client as unknown as { processID: number | null }).processID;
  if (!pid) return;
  const other = await connect(resource, CONNECT_TIMEOUT_MS);
  try {
    await other.query("SELECT pg_cancel_backend($1)", [pid]);
  } finally {
    await other.end().catch(() => {});
  }
}

function pgFailure(error: unknown): ExecuteOutcome {
  const e = error as Error & { code?: string; position?: string; detail?: string; hint?: string };
  const message = [e.message, e.detail && `DETAIL: ${e.detail}`, e.hint && `HINT: ${e.hint}`]
    .filter(Boolean)
    .join("\n");
  const name = e instanceof ScriptError ? e.name : e.code ? `PostgresError ${e.code}` : "ExecutionErr";
  return { status: "failure", error: { name, message } };
}

/**
 * Runs a SQL script against the `database` resource argument: one statement at a time (each in
 * autocommit unless the script opens a transaction), `$n` bound from the arguments declared by
 * `-- $n name (type)` comments. The result is the rows of the last statement.
 */
export async function executePostgresql(req: ExecuteRequest): Promise<ExecuteOutcome> {
  let resource: PgResource;
  let params: Map<number, Param>;
  let statements: SqlStatement[];
  let defaults: Record<string, unknown> = {};
  try {
    resource = resourceOf(req);
    statements = splitSqlStatements(req.content);
    try {
      params = declaredParams(req.content);
      const schema = inferSqlSchema(req.content);
      defaults = Object.fromEntries(
        Object.entries(schema.properties).map(([name, property]) => [name, property.default]),
      );
    } catch (error) {
      throw new ScriptError((error as Error).message);
    }
  } catch (error) {
    return pgFailure(error);
  }
  const valueOf = (n: number) => argValue(req, params.get(n) as Param, defaults);

  let client: pg.Client;
  try {
    client = await connect(resource, req.timeoutMs);
  } catch (error) {
    if (req.signal?.aborted) return { status: "canceled" };
    return pgFailure(error);
  }
  let stopped: "timeout" | "canceled" | null = null;
  const stop = (why: "timeout" | "canceled") => {
    if (stopped) return;
    stopped = why;
    cancelRunning(resource, client).catch(() => client.end().catch(() => {}));
  };
  const timer = setTimeout(() => stop("timeout"), Math.max(0, Math.min(req.timeoutMs, 2 ** 31 - 1)));
  const onAbort = () => stop("canceled");
  req.signal?.addEventListener("abort", onAbort, { once: true });
  client.on("notice", (notice) => {
    try {
      req.onLog(`${notice.severity ?? "NOTICE"}: ${notice.message}\n`);
    } catch {
      // a failing log consumer must not fail the job
    }
  });
  client.on("error", () => {
    // Reported by the failing query; without a listener a dropped connection would crash the worker.
  });
  try {
    let rows: unknown[] = [];
    for (const statement of statements) {
      if (stopped) break;
      const bound = bindStatement(statement, params, valueOf);
      const result = await client.query(bound.text, bound.values);
      // A statement like `SET` returns no rows; the last statement's rows are the result.
      rows = Array.isArray(result)
        ? ((result.at(-1) as pg.QueryResult | undefined)?.rows ?? [])
        : result.rows;
    }
    if (stopped === "canceled") return { status: "canceled" };
    if (stopped === "timeout") return timeoutFailure(req.timeoutMs);
    return { status: "success", result: rows };
  } catch (error) {
    if (stopped === "canceled") return { status: "canceled" };
    if (stopped === "timeout" || (error as { code?: string }).code === "57014") {
      if (stopped !== null || /statement timeout/.test((error as Error).message))
        return timeoutFailure(req.timeoutMs);
    }
    return pgFailure(error);
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener("abort", onAbort);
    await client.end().catch(() => {});
  }
}

function timeoutFailure(timeoutMs: number): ExecuteOutcome {
  return {
    status: "failure",
    error: {
      name: "TimeoutError",
      message: `Job exceeded the timeout of ${Math.round(timeoutMs) / 1000} seconds`,
    },
  };
}
