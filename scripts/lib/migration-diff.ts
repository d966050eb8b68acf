import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { withDatabase } from "@millrace/db";
import { startEmbeddedPostgres } from "@millrace/db/embedded";
import { migrateDeploy } from "@millrace/db/migrate";

// With the wasm schema engine, Prisma's `migrate diff` only compares two schema files (no shadow
// database, no live database). Authoring diffs the schema at git HEAD with the working copy;
// checking builds one database from the migrations and one from the schema and compares catalogs.

// Even a file-to-file diff opens the adapter's connection, so every call gets a live database.
function prisma(root: string, args: string[], databaseUrl: string): string {
  const cli = createRequire(import.meta.url).resolve("prisma/build/index.js");
  return execFileSync(process.execPath, [cli, ...args], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** SQL from the schema committed at git HEAD (or from nothing) to the working copy's schema. */
export async function diffSinceHead(root: string): Promise<string> {
  let previous: string | null;
  try {
    previous = execFileSync("git", ["show", "HEAD:prisma/schema.prisma"], { cwd: root, encoding: "utf8" });
  } catch {
    previous = null;
  }
  const from = previous === null ? ["--from-empty"] : ["--from-schema-datamodel", writeTemp(previous)];
  const server = await scratchServer(root);
  try {
    return prisma(
      root,
      ["migrate", "diff", ...from, "--to-schema-datamodel", "prisma/schema.prisma", "--script"],
      server.url,
    );
  } finally {
    await server.stop();
  }
}

function scratchServer(root: string) {
  return startEmbeddedPostgres(path.join(root, ".data/migrate-pg"), { port: 5487, database: "postgres" });
}

function writeTemp(content: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-schema-"));
  const file = path.join(dir, "schema.prisma");
  fs.writeFileSync(file, content);
  return file;
}

const CATALOG_QUERY = `
  SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || udt_name || ' null=' || is_nullable
         || ' default=' || coalesce(column_default, '') AS line
    FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
  UNION ALL
  SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'
  UNION ALL
  SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> '_prisma_migrations'
  UNION ALL
  SELECT 'enum ' || t.typname || ' ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
    FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname
  ORDER BY 1`;

async function catalog(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ line: string }>(CATALOG_QUERY)).rows.map((row) => row.line);
  } finally {
    await client.end();
  }
}

/** Lines that differ between a database built from the migrations and one built from the schema. */
export async function migrationDrift(root: string): Promise<string[]> {
  const server = await scratchServer(root);
  try {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    for (const name of ["from_migrations", "from_schema"]) {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}`);
    }
    await admin.end();
    const fromMigrations = withDatabase(server.url, "from_migrations");
    const fromSchema = withDatabase(server.url, "from_schema");
    await migrateDeploy(fromMigrations);
    const sql = prisma(
      root,
      ["migrate", "diff", "--from-empty", "--to-schema-datamodel", "prisma/schema.prisma", "--script"],
      fromSchema,
    );
    const client = new pg.Client({ connectionString: fromSchema });
    await client.connect();
    await client.query(sql);
    // Indexes the schema cannot express (partial ones) are declared in SQL beside it.
    await client.query(fs.readFileSync(path.join(root, "prisma/partial-indexes.sql"), "utf8"));
    await client.end();
    const [a, b] = await Promise.all([catalog(fromMigrations), catalog(fromSchema)]);
    const setA = new Set(a);
    const setB = new Set(b);
    return [
      ...a.filter((line) => !setB.has(line)).map((line) => `only in migrations: ${line}`),
      ...b.filter((line) => !setA.has(line)).map((line) => `only in schema.prisma: ${line}`),
    ];
  } finally {
    await server.stop();
  }
}

export function isEmptyMigration(sql: string): boolean {
  return sql.split("\n").every((line) => !line.trim() || line.trim().startsWith("--"));
}
