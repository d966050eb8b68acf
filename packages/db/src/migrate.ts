import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "./hosts.ts";
import { sessionUrl } from "./pgbouncer.ts";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const migrationsDir = path.join(repoRoot, "prisma", "migrations");

export function migrationNames(): string[] {
  if (!fs.existsSync(migrationsDir)) return [];
  return fs
    .readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** Migrations in prisma/migrations that the database has not finished applying. */
export async function pendingMigrations(databaseUrl: string): Promise<string[]> {
  const client = createClient(databaseUrl);
  await client.connect();
  try {
    const table = await client.query("SELECT to_regclass('public._prisma_migrations') AS t");
    if (!table.rows[0]?.t) return migrationNames();
    const applied = await client.query<{ migration_name: string }>(
      "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
    );
    const done = new Set(applied.rows.map((row) => row.migration_name));
    return migrationNames().filter((name) => !done.has(name));
  } finally {
    await client.end();
  }
}

/**
 * Applies the committed migrations with `prisma migrate deploy`. Prisma takes an advisory lock,
 * so servers starting together apply each migration once. The CLI costs ~10 s here (wasm schema
 * engine), so it only runs when a migration is actually pending.
 */
export async function migrateDeploy(databaseUrl: string): Promise<{ applied: string[] }> {
  const pending = await pendingMigrations(databaseUrl);
  if (pending.length === 0) return { applied: [] };
  const prismaCli = createRequire(import.meta.url).resolve("prisma/build/index.js");
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [prismaCli, "migrate", "deploy"], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? repoRoot,
        // Prisma's migration lock is a session advisory lock: never through transaction pooling.
        DATABASE_URL: sessionUrl(databaseUrl),
        PRISMA_HIDE_UPDATE_MESSAGE: "1",
        CHECKPOINT_DISABLE: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    child.on("error", reject);
    child.on("exit", resolve);
  });
  if (code !== 0) throw new Error(`prisma migrate deploy failed:\n${output.join("")}`);
  return { applied: pending };
}
