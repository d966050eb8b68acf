// The one entry point: `npm start`. MODE=standalone (default) runs a server and workers, on an
// embedded PostgreSQL when DATABASE_URL is unset; MODE=server and MODE=worker run one part against
// an existing PostgreSQL so that any number of them can share it; MODE=agent runs an agent worker
// (no database: BASE_INTERNAL_URL and AGENT_TOKEN); MODE=pool starts and stops worker processes
// of the groups in POOL_GROUPS as the autoscaler decides (lib/worker-pool.ts).
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureAdminsWorkspace, ensureFirstSuperadmin } from "@millrace/core";
import { assertNodeVersion } from "@millrace/core/config";
import {
  clusterRoom,
  connectionBudget,
  createDb,
  directConnections,
  createPool,
  isTransactionPooled,
  parseMultiHostUrl,
  roomProblem,
} from "@millrace/db";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "@millrace/db/embedded";
import { migrateDeploy } from "@millrace/db/migrate";
import { loadLauncherEnv } from "./lib/launcher-env.ts";
import { startManaged, startWatchdog, stopManaged, waitForHttp, type Managed } from "./lib/processes.ts";
import { webBuildIsStale } from "./lib/web-build.ts";
import { startWorkerPool, type WorkerPool } from "./lib/worker-pool.ts";

assertNodeVersion();
const env = loadLauncherEnv();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dataDir = path.join(root, ".data");
const require = createRequire(import.meta.url);
const log = (message: string) => console.log(`[millrace] ${message}`);

const runsServer = env.MODE === "standalone" || env.MODE === "server";
const runsWorkers = env.MODE === "standalone" || env.MODE === "worker";
// A worker alone is usually given only where it reaches a server (BASE_INTERNAL_URL): that is
// then also the URL its jobs see as BASE_URL, not a localhost where no server runs.
const baseUrl =
  env.BASE_URL ??
  (env.MODE === "worker" || env.MODE === "pool" ? env.BASE_INTERNAL_URL : undefined) ??
  `http://localhost:${env.PORT}`;
const numWorkers = env.NUM_WORKERS ?? (env.MODE === "standalone" ? "2" : "1");

let embedded: EmbeddedDatabase | null = null;
const children: Managed[] = [];
let workerPool: WorkerPool | null = null;
// Stops every process started here if this one ends without doing so itself (SIGKILL, its group
// killed): the children run in groups of their own, which no signal to this one reaches.
const watchdog = startWatchdog();
function startChild(...args: Parameters<typeof startManaged>): Managed {
  const managed = startManaged(...args);
  // A worker puts its running jobs back in the queue before it stops (WORKER_GRACE_PERIOD).
  if (managed.child.pid) watchdog.guard("group", managed.child.pid, "SIGTERM", 45_000);
  return managed;
}
let stopping = false;

async function shutdown(code: number): Promise<never> {
  if (stopping) return new Promise(() => {});
  stopping = true;
  log("stopping…");
  await Promise.all([
    ...children.map((child) => stopManaged(child, 40_000)),
    workerPool?.stop().catch((error: Error) => log(`worker pool: ${error.message}`)),
  ]);
  if (embedded) await embedded.stop().catch((error: Error) => log(`embedded PostgreSQL: ${error.message}`));
  log("stopped");
  process.exit(code);
}
process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));
// `npm start` ends on a SIGTERM to its own pid without passing it on: this process, orphaned,
// stops too rather than run unsupervised.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void shutdown(0);
}, 500).unref();

interface Login {
  email: string;
  password: string;
}

/**
 * The first superadmin: from SUPERADMIN_EMAIL/PASSWORD, else generated once and kept in .data/.
 * `generated`: the password was made here, so printing it tells nobody anything they were not
 * meant to learn; a password from the environment is never printed (logs are collected, shared
 * and kept far longer than an operator's environment).
 */
function initialLogin(): Login & { generated: boolean } {
  if (env.SUPERADMIN_EMAIL && env.SUPERADMIN_PASSWORD) {
    return { email: env.SUPERADMIN_EMAIL, password: env.SUPERADMIN_PASSWORD, generated: false };
  }
  const file = path.join(dataDir, "initial-login.json");
  if (fs.existsSync(file))
    return { ...(JSON.parse(fs.readFileSync(file, "utf8")) as Login), generated: true };
  const login = { email: "admin@millrace.local", password: randomBytes(12).toString("base64url") };
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(login), { mode: 0o600 });
  return { ...login, generated: true };
}

/** The sign-in line of the start banner: a password only when it was generated here. */
function signInLine(login: (Login & { generated: boolean }) | null): string {
  if (!login) return "sign in with the superadmin account you created earlier";
  if (!login.generated) return `sign in as ${login.email} with the password from SUPERADMIN_PASSWORD`;
  return `sign in as ${login.email} / ${login.password}`;
}

/**
 * The instance key that wraps the workspace keys of secret variables. Standalone generates one
 * into .data/ (kept with the data it protects, which is fine on a laptop but not for production);
 * servers and workers sharing a database must all be given the same MILLRACE_SECRET_KEY.
 */
function instanceSecretKey(): string | undefined {
  if (env.MILLRACE_SECRET_KEY) return env.MILLRACE_SECRET_KEY;
  if (env.MODE !== "standalone") {
    // MODE=server refuses to start without it (launcher-env.ts); a worker still runs jobs.
    log("warning: MILLRACE_SECRET_KEY is not set: this worker cannot read secret variables");
    return undefined;
  }
  const file = path.join(dataDir, "secret-key");
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600 });
  }
  log(
    "warning: MILLRACE_SECRET_KEY is not set: using the key generated in .data/secret-key. " +
      "Set MILLRACE_SECRET_KEY (and keep it safe, apart from the database) for production; " +
      "secrets cannot be read without it.",
  );
  return fs.readFileSync(file, "utf8").trim();
}

/** The host(s) a URL names, for a log line (never its password). */
function databaseHosts(url: string): string {
  const multi = parseMultiHostUrl(url);
  return multi ? multi.hosts.map((h) => `${h.host}:${h.port}`).join(",") : new URL(url).host;
}

/** A whole number from the environment the children read too (their own checks name bad values). */
function envCount(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/**
 * Prints how many connections the processes started here may open, and refuses to start when
 * the cluster's max_connections could never hold them (each process also checks, at its start,
 * that there is room beside what is in use then).
 */
async function checkConnectionBudget(databaseUrl: string): Promise<void> {
  const settings = { poolSize: envCount("DB_POOL_SIZE"), queuePoolSize: envCount("DB_QUEUE_POOL_SIZE") };
  const budgets = [
    ...(runsServer ? [connectionBudget("server", settings)] : []),
    ...(runsWorkers ? [connectionBudget("worker", settings)] : []),
    // MODE=pool: up to POOL_MAX_WORKERS worker processes of one slot each.
    ...(env.MODE === "pool"
      ? Array.from({ length: env.POOL_MAX_WORKERS }, () => connectionBudget("worker", settings))
      : []),
  ];
  const total = budgets.reduce((sum, budget) => sum + directConnections(databaseUrl, budget), 0);
  log(
    `database connections: up to ${total} (${budgets.map((b) => `${b.role} ${directConnections(databaseUrl, b)}`).join(", ")}; ` +
      (isTransactionPooled(databaseUrl)
        ? "sessions on DATABASE_URL_DIRECT; the pools' connections are PgBouncer's to share)"
        : "DB_POOL_SIZE and DB_QUEUE_POOL_SIZE set them)"),
  );
  const room = await clusterRoom(databaseUrl).catch(() => null);
  const problem = room && roomProblem(room, total, "this install", true);
  if (problem) {
    log(problem);
    await shutdown(1);
  }
}

/** MODE=agent: only the agent worker, which checks its own variables and reaches no database. */
function startAgent(): void {
  const agent = startChild("agent", process.execPath, [path.join(root, "apps/worker/src/agent/main.ts")], {
    cwd: root,
    env: { ...process.env, NODE_ENV: "production" },
  });
  children.push(agent);
  void agent.exited.then((code) => {
    if (stopping) return;
    log(`agent exited (code ${code}); stopping`);
    void shutdown(code === 0 ? 0 : 1);
  });
  log("agent worker starting; press Ctrl-C to stop");
}

async function main(): Promise<void> {
  if (env.MODE === "agent") return startAgent();
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    log("DATABASE_URL is not set: starting the embedded PostgreSQL (data in .data/pg)");
    embedded = await startEmbeddedPostgres(path.join(dataDir, "pg"), { port: env.EMBEDDED_PG_PORT });
    databaseUrl = embedded.url;
    // Fast shutdown (SIGINT), after the server and workers are gone.
    const pid = embedded.pid();
    if (pid) watchdog.guard("pid", pid, "SIGINT", 15_000);
  }

  await checkConnectionBudget(databaseUrl);

  let login: (Login & { generated: boolean }) | null = null;
  if (runsServer) {
    if (env.SKIP_MIGRATION) log("SKIP_MIGRATION=true: not applying migrations");
    else {
      const { applied } = await migrateDeploy(databaseUrl);
      log(applied.length ? `applied migrations: ${applied.join(", ")}` : "database schema is up to date");
    }
    const pool = createPool(databaseUrl, { max: 2, applicationName: "millrace-launcher" });
    try {
      login = initialLogin();
      const { created } = await ensureFirstSuperadmin({ db: createDb(pool), pool }, login);
      await ensureAdminsWorkspace({ pool });
      if (created) log(`created the first superadmin ${login.email}`);
      else if (!login.generated) login = null;
    } finally {
      await pool.end();
    }

    if (webBuildIsStale(root)) {
      log("building the web app (first start, or sources changed; about a minute)…");
      const build = startChild("build", process.execPath, [require.resolve("next/dist/bin/next"), "build"], {
        cwd: path.join(root, "apps/web"),
        env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
        quiet: true,
      });
      children.push(build);
      const code = await build.exited;
      children.splice(children.indexOf(build), 1);
      if (code !== 0) {
        log("the web build failed; run `npm run build` to see why");
        await shutdown(1);
      }
    }
  }

  const secretKey = instanceSecretKey();
  const childEnv = {
    ...process.env,
    ...(secretKey ? { MILLRACE_SECRET_KEY: secretKey } : {}),
    DATABASE_URL: databaseUrl,
    BASE_URL: baseUrl,
    NEXTAUTH_URL: baseUrl,
    NUM_WORKERS: numWorkers,
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
  };

  if (runsServer) {
    const server = startChild("server", process.execPath, [path.join(root, "apps/web/serve.ts")], {
      cwd: path.join(root, "apps/web"),
      env: { ...childEnv, PORT: String(env.PORT) },
    });
    children.push(server);
    await waitForHttp(
      `http://127.0.0.1:${env.PORT}/api/version`,
      120_000,
      () => server.child.exitCode === null,
    );
  }
  if (runsWorkers) {
    children.push(
      startChild("worker", process.execPath, [path.join(root, "apps/worker/src/main.ts")], {
        cwd: root,
        env: childEnv,
      }),
    );
  }

  if (env.MODE === "pool") {
    workerPool = await startWorkerPool({
      root,
      databaseUrl,
      groups: env.POOL_GROUPS,
      maxWorkers: env.POOL_MAX_WORKERS,
      workerEnv: { ...childEnv, WORKER_GRACE_PERIOD: String(env.WORKER_GRACE_PERIOD) },
      graceSecs: env.WORKER_GRACE_PERIOD,
      log: (message) => log(`pool: ${message}`),
      onStart: (managed) => {
        if (managed.child.pid)
          watchdog.guard("group", managed.child.pid, "SIGTERM", (env.WORKER_GRACE_PERIOD + 15) * 1000);
      },
    });
  }

  for (const child of children) {
    void child.exited.then((code) => {
      if (stopping) return;
      log(`${child.name} exited unexpectedly (code ${code}); stopping everything`);
      void shutdown(1);
    });
  }

  if (runsServer) {
    log(`Millrace is running at ${baseUrl}`);
    log(signInLine(login));
  } else if (env.MODE === "pool") {
    log(`worker pool running against ${databaseHosts(databaseUrl)}`);
  } else {
    log(`worker running (${numWorkers} slot(s)) against ${databaseHosts(databaseUrl)}`);
  }
  log("press Ctrl-C to stop");
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  await shutdown(1);
});
