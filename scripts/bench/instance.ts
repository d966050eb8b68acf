import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { withDatabase } from "@millrace/db/pool";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "@millrace/db/embedded";

export interface BenchInstance {
  baseUrl: string;
  databaseUrl: string;
  /** The PostgreSQL server's admin URL (a second instance can share the server). */
  adminUrl: string;
  secret: string;
  /**
   * A sign-in token of the instance's superadmin user: runs as a user carry a job token, as most
   * real runs do (SUPERADMIN_SECRET is not a user, so its jobs get none).
   */
  userToken: string;
  stop(): Promise<void>;
}

/**
 * A standalone Millrace on its own embedded PostgreSQL and port (or on DATABASE_URL's server, in
 * a fresh database), exactly as `npm start` runs it.
 */
export async function startBenchInstance(
  root: string,
  options: BenchInstanceOptions,
): Promise<BenchInstance> {
  let server: EmbeddedDatabase | null = null;

  let adminUrl = options.adminUrl ?? process.env.DATABASE_URL;
  if (!adminUrl) {
    server = await startEmbeddedPostgres(path.join(root, ".data/bench-pg"), {
      port: Number(process.env.BENCH_PG_PORT ?? 5491),
      database: "postgres",
    });
    adminUrl = server.url;
  }
  try {
    return await launch(root, options, adminUrl, server);
  } catch (error) {
    // A failed start (build error, port taken) must not leave the embedded PostgreSQL running.
    await server?.stop();
    throw error;
  }
}

export interface BenchInstanceOptions {
  numWorkers: number;
  port: number;
  /** Default millrace_bench (dropped and created afresh). */
  database?: string;
  /** Another instance's PostgreSQL server (left running on stop). */
  adminUrl?: string;
}

async function launch(
  root: string,
  options: BenchInstanceOptions,
  adminUrl: string,
  server: EmbeddedDatabase | null,
): Promise<BenchInstance> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const database = options.database ?? "millrace_bench";
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, database);
  const secret = "bench-superadmin-secret-0123456789";
  const baseUrl = `http://127.0.0.1:${options.port}`;
  let output = "";
  const launcher: ChildProcess = spawn(process.execPath, [path.join(root, "scripts/start.ts")], {
    cwd: root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,

      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl,
      PORT: String(options.port),
      BASE_URL: baseUrl,
      NUM_WORKERS: String(options.numWorkers),
      SUPERADMIN_SECRET: secret,
      SUPERADMIN_EMAIL: "bench@example.com",
      SUPERADMIN_PASSWORD: "bench-password-1",
      // For profiling: `BENCH_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=…" npm run bench -- cpu`.
      ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
    },
  });
  launcher.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  launcher.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => launcher.on("exit", () => resolve()));
  const deadline = Date.now() + 300_000;
  while (!output.includes("serving tags")) {
    if (launcher.exitCode !== null || Date.now() > deadline) {
      if (launcher.exitCode === null) process.kill(-launcher.pid!, "SIGKILL");
      throw new Error(`Millrace did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const login = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com", password: "bench-password-1" }),
  });
  if (!login.ok) throw new Error(`could not sign in as the bench user: ${await login.text()}`);
  const userToken = await login.text();
  return {
    baseUrl,
    databaseUrl,
    adminUrl,
    secret,
    userToken,
    async stop() {
      try {
        process.kill(-launcher.pid!, "SIGINT");
      } catch {
        // gone
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
      await server?.stop();
    },
  };
}
