import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { withDatabase } from "@millrace/db/pool";
import { startEmbeddedPostgres } from "@millrace/db/embedded";
import { E2E_ADMIN, E2E_BASE_URL, E2E_PG_PORT, E2E_PORT, E2E_SUPERADMIN_SECRET } from "./instance.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Starts PostgreSQL and a standalone Millrace; returns the teardown that stops both. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const server = await startEmbeddedPostgres(path.join(root, ".data/e2e-pg"), {
    port: E2E_PG_PORT,
    database: "postgres",
  });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query("DROP DATABASE IF EXISTS millrace_e2e WITH (FORCE)");
  await admin.query("CREATE DATABASE millrace_e2e");
  await admin.end();

  let output = "";
  const launcher = spawn(process.execPath, [path.join(root, "scripts/start.ts")], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      MODE: "standalone",
      DATABASE_URL: withDatabase(server.url, "millrace_e2e"),
      PORT: String(E2E_PORT),
      BASE_URL: E2E_BASE_URL,
      NUM_WORKERS: "2",
      // The Workers page's charts read the leader's samples: take one a second, not every 15 s.
      FLEET_SAMPLE_SECS: "1",
      // The Workers page's autoscaling table shows the leader's decisions: one every 2 s.
      AUTOSCALING_INTERVAL_SECS: "2",
      SUPERADMIN_EMAIL: E2E_ADMIN.email,
      SUPERADMIN_PASSWORD: E2E_ADMIN.password,
      SUPERADMIN_SECRET: E2E_SUPERADMIN_SECRET,
      WORKER_SECRET_FOR_TEST: "worker-only-secret",
    },
  });
  launcher.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  launcher.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => launcher.on("exit", () => resolve()));

  const deadline = Date.now() + 240_000;
  while (!output.includes("Millrace is running at")) {
    if (launcher.exitCode !== null || Date.now() > deadline) {
      await server.stop();
      throw new Error(`Millrace did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // Workers announce their tags once they are ready to claim.
  while (!output.includes("serving tags") && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  // What the launcher printed at start, for the tests that check what its log shows.
  fs.writeFileSync(path.join(root, ".data/e2e-launcher.log"), output);

  return async () => {
    try {
      process.kill(-launcher.pid!, "SIGINT");
    } catch {
      // already gone
    }
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
    try {
      process.kill(-launcher.pid!, "SIGKILL");
    } catch {
      // stopped cleanly
    }
    await server.stop();
  };
}
