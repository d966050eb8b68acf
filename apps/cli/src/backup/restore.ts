// `millrace backup restore`: replaces the database's content with a backup made by createBackup.
//
// 1. Pauses claiming: takes the advisory lock workers check before each claim (CLAIM_PAUSE_LOCK,
//    see apps/worker/src/claim-pause.ts) and waits until every worker has seen it.
// 2. In ONE transaction: drops the public and pgboss schemas, replays the migrations the backup's
//    database had applied (the schema it was dumped from), loads every table's rows, sets the
//    sequences, and compares each table's row count with the manifest. Any error or count that
//    differs rolls the whole transaction back: the database is then exactly as before.
// 3. Applies the migrations newer than the backup (`prisma migrate deploy`, as npm start does).
// 4. Recreates pg-boss's schema and queues and dispatches the queued (and running) jobs again
//    (flow runs aside: the flow engine advances them, see redispatchQueuedJobs).
// 5. Releases the pause.
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { createGunzip } from "node:zlib";
import type pg from "pg";
import { CliError, EXIT } from "../exit-codes.ts";
import { BACKUP_FORMAT, BACKUP_VERSION, manifestPathFor, type Manifest } from "./create.ts";
import { connect, connectError, databaseName, quoteIdent, repoRoot } from "./database.ts";

/**
 * The advisory lock a restore holds while workers must not claim (CLAIM_PAUSE_LOCK_SQL in
 * packages/core/src/jobs/claim.ts, which the CLI does not load).
 */
export const CLAIM_PAUSE_LOCK_SQL = "hashtext('millrace-claim-pause')";
/** Workers look at the lock at most this often (CLAIM_PAUSE_CHECK_MS there) — waited twice over. */
const WORKERS_SEE_PAUSE_MS = 1000;
const INSERT_BATCH_ROWS = 500;
const INSERT_BATCH_BYTES = 4 * 1024 * 1024;

// Prisma's own bookkeeping table, as `prisma migrate deploy` creates it.
const PRISMA_MIGRATIONS_DDL = `CREATE TABLE "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export interface RestoreResult {
  file: string;
  database: string;
  tables: number;
  rows: number;
  /** Per table: rows in the manifest and rows after the restore (equal, or the restore failed). */
  counts: Record<string, { expected: number; restored: number }>;
  /** Migrations newer than the backup, applied after its data. */
  migrationsApplied: string[];
  /** Jobs queued or running at backup time, dispatched to the workers again. */
  jobsRedispatched: number;
  durationMs: number;
}

function lines(file: string): AsyncIterableIterator<string> {
  const input = fs.createReadStream(file).pipe(createGunzip());
  return readline.createInterface({ input, crlfDelay: Infinity })[Symbol.asyncIterator]();
}

function invalidBackup(file: string, why: string): CliError {
  return new CliError(
    `${file} is not a Millrace backup: ${why}`,
    EXIT.INVALID,
    "pass a file written by `millrace backup create`",
  );
}

/** The backup's manifest: the one beside it when present, else the copy in the dump's header. */
export async function readBackupManifest(file: string): Promise<Manifest> {
  if (!fs.existsSync(file))
    throw new CliError(
      `no such backup: ${file}`,
      EXIT.NOT_FOUND,
      "check the path (`ls` the folder you backed up to)",
    );
  let header: { format?: string; version?: number; manifest?: Manifest };
  const iterator = lines(file);
  try {
    const first = await iterator.next();
    header = JSON.parse(first.done ? "{}" : first.value) as typeof header;
  } catch (error) {
    throw invalidBackup(file, (error as Error).message);
  } finally {
    await iterator.return?.();
  }
  if (header.format !== BACKUP_FORMAT || !header.manifest)
    throw invalidBackup(file, "no millrace-backup header");
  if (header.version !== BACKUP_VERSION)
    throw invalidBackup(file, `format version ${header.version}, this CLI reads ${BACKUP_VERSION}`);
  const beside = manifestPathFor(file);
  if (!fs.existsSync(beside)) return header.manifest;
  const manifest = JSON.parse(fs.readFileSync(beside, "utf8")) as Manifest;
  if (JSON.stringify(manifest.tables) !== JSON.stringify(header.manifest.tables))
    throw invalidBackup(file, `its manifest ${beside} does not match the dump (another backup's?)`);
  return manifest;
}

/** Rows in the database's tables, _prisma_migrations aside (an empty Millrace database has none). */
async function userRows(client: pg.Client): Promise<number> {
  const tables = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> '_prisma_migrations'`,
  );
  let total = 0;
  for (const { name } of tables.rows) {
    const count = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM ${quoteIdent(name)} LIMIT 1) t`,
    );
    total += Number(count.rows[0]!.n);
  }
  return total;
}

/** Connects, creating the database first when it does not exist (restoring after a DROP DATABASE). */
async function connectOrCreate(url: string, log: (line: string) => void): Promise<pg.Client> {
  try {
    return await connect(url);
  } catch (error) {
    if (!(error instanceof CliError) || error.exitCode !== EXIT.NOT_FOUND) throw error;
  }
  const maintenance = new URL(url);
  maintenance.pathname = "/postgres";
  const admin = await connect(maintenance.toString());
  try {
    await admin.query(`CREATE DATABASE ${quoteIdent(databaseName(url))}`);
    log(`created the database ${databaseName(url)}`);
  } catch (error) {
    throw connectError(error, url);
  } finally {
    await admin.end();
  }
  return connect(url);
}

export async function restoreBackup(options: {
  url: string;
  file: string;
  yes: boolean;
  log: (line: string) => void;
  onRows: (done: number, total: number) => void;
}): Promise<RestoreResult> {
  const { url, file, log } = options;
  const started = performance.now();
  const manifest = await readBackupManifest(file);
  const { migrationNames, migrateDeploy, pendingMigrations } = await import("@millrace/db/migrate");
  const known = new Set(migrationNames());
  const unknown = manifest.migrations.filter((name) => !known.has(name));
  if (unknown.length > 0)
    throw new CliError(
      `the backup was made by a newer Millrace: migration(s) ${unknown.join(", ")} are not in this checkout`,
      EXIT.INVALID,
      "update this checkout (git pull) to the version that made the backup or a later one",
    );

  const client = await connectOrCreate(url, log);
  try {
    const existing = await userRows(client);
    if (existing > 0 && !options.yes)
      throw new CliError(
        `the database ${databaseName(url)} is not empty: the restore would replace everything in it`,
        EXIT.NEEDS_CONFIRMATION,
        "run again with --yes to replace it (make a `millrace backup create` of it first if unsure)",
      );

    // 1. No worker claims a job from here on (running jobs finish; their results may be lost).
    await client.query(`SELECT pg_advisory_lock(${CLAIM_PAUSE_LOCK_SQL})`);
    log("workers paused claiming jobs");
    await new Promise((resolve) => setTimeout(resolve, WORKERS_SEE_PAUSE_MS));

    // 2. Schema at the backup's migration, its rows, its sequences, checked counts: all or nothing.
    const total = Object.values(manifest.tables).reduce((sum, n) => sum + n, 0);
    const counts: RestoreResult["counts"] = {};
    let rows = 0;
    await client.query("BEGIN");
    try {
      await client.query("DROP SCHEMA IF EXISTS pgboss CASCADE");
      await client.query("DROP SCHEMA IF EXISTS public CASCADE");
      await client.query("CREATE SCHEMA public");
      await client.query(PRISMA_MIGRATIONS_DDL);
      log(`replaying the backup's ${manifest.migrations.length} migrations`);
      for (const name of manifest.migrations) {
        await client.query(
          fs.readFileSync(path.join(repoRoot, "prisma", "migrations", name, "migration.sql"), "utf8"),
        );
      }
      // Foreign keys and triggers off while loading (superuser only; elsewhere rows load in
      // dependency order, which is enough for the schema's foreign keys).
      await client.query("SAVEPOINT replica");
      await client
        .query("SET LOCAL session_replication_role = replica")
        .catch(() => client.query("ROLLBACK TO SAVEPOINT replica"));
      log(`loading ${total} rows into ${Object.keys(manifest.tables).length} tables`);
      options.onRows(0, total);
      rows = await loadRows(client, file, manifest, (done) => options.onRows(done, total));
      for (const [sequence, value] of Object.entries(manifest.sequences)) {
        await client.query("SELECT setval($1::regclass, $2, true)", [quoteIdent(sequence), value]);
      }
      const differing: string[] = [];
      for (const [table, expected] of Object.entries(manifest.tables)) {
        const result = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteIdent(table)}`);
        const restored = Number(result.rows[0]!.n);
        counts[table] = { expected, restored };
        if (restored !== expected) differing.push(`${table}: ${restored} rows, the backup had ${expected}`);
      }
      if (differing.length > 0)
        throw new CliError(
          `the restored row counts differ from the backup's manifest (${differing.join("; ")})`,
          EXIT.FAILED,
          "nothing was changed (the restore was rolled back); check the backup file is complete",
        );
      await client.query("COMMIT");
      log("row counts match the manifest: committed");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      if (error instanceof CliError) throw error;
      throw new CliError(
        `restore failed, nothing was changed (rolled back): ${(error as Error).message}`,
        EXIT.FAILED,
        "check the backup file and that the database user may drop and create schemas",
      );
    }

    // 3. Migrations newer than the backup.
    const pending = await pendingMigrations(url);
    if (pending.length > 0)
      log(`applying ${pending.length} migration(s) newer than the backup (prisma migrate deploy)`);
    const { applied } = await migrateDeploy(url);

    // 4. pg-boss only mirrors the queue: rebuild it from the restored jobs.
    log("rebuilding the job queue (pg-boss)");
    const jobsRedispatched = await redispatchQueuedJobs(url, manifest.queues);

    return {
      file,
      database: databaseName(url),
      tables: Object.keys(manifest.tables).length,
      rows,
      counts,
      migrationsApplied: applied,
      jobsRedispatched,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    // 5. Ending the session releases the pause (and anything else it held).
    await client.end().catch(() => {});
  }
}

async function loadRows(
  client: pg.Client,
  file: string,
  manifest: Manifest,
  onRows: (done: number) => void,
): Promise<number> {
  let table: string | null = null;
  let batch: string[] = [];
  let bytes = 0;
  let done = 0;
  let header = true;
  const identity = new Set(
    (
      await client.query<{ name: string }>(
        `SELECT DISTINCT c.relname AS name FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
           JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'public' AND a.attidentity = 'a' AND NOT a.attisdropped`,
      )
    ).rows.map((row) => row.name),
  );
  const flush = async (): Promise<void> => {
    if (!table || batch.length === 0) return;
    const target = quoteIdent(table);
    const overriding = identity.has(table) ? " OVERRIDING SYSTEM VALUE" : "";
    await client.query(
      `INSERT INTO ${target}${overriding} SELECT * FROM json_populate_recordset(NULL::${target}, $1::json)`,
      [`[${batch.join(",")}]`],
    );
    done += batch.length;
    onRows(done);
    batch = [];
    bytes = 0;
  };
  for await (const line of lines(file)) {
    if (header) {
      header = false;
      continue;
    }
    if (line.startsWith('{"table":')) {
      const marker = JSON.parse(line) as { table?: unknown; rows?: unknown };
      if (
        typeof marker.table === "string" &&
        typeof marker.rows === "number" &&
        Object.keys(marker).length === 2
      ) {
        await flush();
        if (!(marker.table in manifest.tables))
          throw new Error(`table ${marker.table} is not in the manifest`);
        table = marker.table;
        continue;
      }
    }
    if (!table) throw new Error("rows before any table marker");
    batch.push(line);
    bytes += line.length;
    if (batch.length >= INSERT_BATCH_ROWS || bytes >= INSERT_BATCH_BYTES) await flush();
  }
  await flush();
  return done;
}

async function redispatchQueuedJobs(url: string, queues: string[]): Promise<number> {
  const { startBoss, ensureQueue, redispatchJob } = await import("@millrace/core");
  const { createPool, withTransaction } = await import("@millrace/db");
  const boss = await startBoss(url, "worker");
  const pool = createPool(url, { max: 2, applicationName: "millrace-restore" });
  try {
    for (const queue of queues) await ensureQueue(boss, queue);
    const { rows } = await pool.query<{
      id: string;
      tag: string;
      priority: number;
      timeout_secs: number | null;
      scheduled_for: Date;
    }>(
      // Flow runs have no dispatch: the flow engine advances them from their stored state (a flow
      // waiting for an approval stays waiting). Their steps are jobs like any other.
      `SELECT id, tag, priority, timeout_secs, scheduled_for FROM job
        WHERE status IN ('queued', 'running') AND kind NOT IN ('flow', 'flowpreview') ORDER BY created_at`,
    );
    for (const job of rows) {
      await withTransaction(pool, (tx) =>
        redispatchJob(
          tx,
          boss,
          { id: job.id, tag: job.tag, priority: job.priority, timeoutSecs: job.timeout_secs ?? 0 },
          job.scheduled_for,
        ),
      );
    }
    return rows.length;
  } finally {
    await boss.stop({ graceful: false }).catch(() => {});
    await pool.end();
  }
}
