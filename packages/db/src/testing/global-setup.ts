// Global setup of `npm run test:int`: one PostgreSQL for the whole run (the embedded one unless
// DATABASE_URL names a server to use), and a template database migrated once, which every test
// file clones.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../embedded.ts";
import { migrateDeploy, migrationNames } from "../migrate.ts";
import { withDatabase } from "../pool.ts";
import { TEST_ADMIN_URL_VAR, TEST_TEMPLATE_VAR } from "./index.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
let embedded: EmbeddedDatabase | null = null;

function migrationsDigest(): string {
  const hash = createHash("sha256");
  for (const name of migrationNames()) {
    hash.update(name).update(fs.readFileSync(path.join(root, "prisma/migrations", name, "migration.sql")));
  }
  return hash.digest("hex").slice(0, 12);
}

export async function globalSetup(): Promise<void> {
  let admin = process.env.DATABASE_URL;
  if (!admin) {
    // MILLRACE_TEST_PG_PORT lets two test runs on one machine keep apart (each its own server and data).
    const port = Number(process.env.MILLRACE_TEST_PG_PORT ?? 5489);
    const dir = port === 5489 ? ".data/test-pg" : `.data/test-pg-${port}`;
    embedded = await startEmbeddedPostgres(path.join(root, dir), {
      port,
      database: "postgres",
    });
    admin = embedded.url;
  }
  try {
    await prepareTemplate(admin);
  } catch (error) {
    // No teardown follows a failed setup: the server must not outlive it.
    await globalTeardown();
    throw error;
  }
}

async function prepareTemplate(admin: string): Promise<void> {
  const template = `millrace_template_${migrationsDigest()}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [template]);
    if (exists.rowCount === 0) {
      // Build under a temporary name and rename when complete, so an interrupted run never leaves
      // a half-migrated template behind.
      const building = `${template}_building`;
      await client.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      await client.query(`CREATE DATABASE "${building}"`);
      await migrateDeploy(withDatabase(admin, building));
      await client.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`);
    }
    // Databases left by an interrupted earlier run.
    const stale = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'millrace_test_%'",
    );
    for (const row of stale.rows) await client.query(`DROP DATABASE IF EXISTS "${row.datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
  process.env[TEST_ADMIN_URL_VAR] = admin;
  process.env[TEST_TEMPLATE_VAR] = template;
}

export async function globalTeardown(): Promise<void> {
  if (embedded) await embedded.stop();
}
