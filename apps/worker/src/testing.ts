// Starts a real worker process for integration tests and stops it (and its job processes) after.
import { spawn, type ChildProcess } from "node:child_process";
import type http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const main = path.join(path.dirname(fileURLToPath(import.meta.url)), "main.ts");
const agentMain = path.join(path.dirname(fileURLToPath(import.meta.url)), "agent", "main.ts");

export interface TestWorker {
  process: ChildProcess;
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process group is gone. */
  stop(graceMs?: number): Promise<void>;
  kill9(): Promise<void>;
}

export async function startTestWorker(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<TestWorker> {
  return startWorkerProcess(main, {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: os.tmpdir(),
    DATABASE_URL: databaseUrl,
    NUM_WORKERS: "1",
    JOB_DIR: path.join(os.tmpdir(), `millrace-test-jobs-${process.pid}`),
    WORKER_GRACE_PERIOD: "5",
    ...env,
  });
}

/**
 * An agent worker process (MODE=agent) for `baseUrl` with `token`: its environment is exactly
 * `env` plus these, and never holds DATABASE_URL (asserted: the point of an agent).
 */
export async function startTestAgent(
  baseUrl: string,
  token: string,
  env: Record<string, string> = {},
): Promise<TestWorker & { env: Record<string, string> }> {
  const full = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: os.tmpdir(),
    BASE_INTERNAL_URL: baseUrl,
    AGENT_TOKEN: token,
    NUM_WORKERS: "1",
    JOB_DIR: path.join(os.tmpdir(), `millrace-test-agent-jobs-${process.pid}`),
    WORKER_GRACE_PERIOD: "5",
    ...env,
  };
  if ("DATABASE_URL" in full) throw new Error("an agent worker's environment must not hold DATABASE_URL");
  return { ...(await startWorkerProcess(agentMain, full)), env: full };
}

async function startWorkerProcess(script: string, env: Record<string, string>): Promise<TestWorker> {
  let output = "";
  const child = spawn(process.execPath, [script], {
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  // Ready once it has announced the tags it serves.
  const deadline = Date.now() + 20_000;
  while (!output.includes("serving tags")) {
    if (child.exitCode !== null) throw new Error(`worker exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`worker did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  return {
    process: child,
    output: () => output,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalGroup("SIGTERM");
      const timer = setTimeout(() => signalGroup("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
      signalGroup("SIGKILL");
    },
    async kill9() {
      signalGroup("SIGKILL");
      await exited;
    },
  };
}

export interface TestApi {
  url: string;
  close(): Promise<void>;
}

/**
 * The web app's REST router (the one Next serves under /api) on a plain Node HTTP server, on the
 * test database: where jobs' WM_TOKEN calls land in worker tests. The web app reads its settings
 * from the environment, hence the two variables set here.
 */
export async function startTestApi(databaseUrl: string, secretKey: string): Promise<TestApi> {
  process.env.DATABASE_URL = databaseUrl;
  process.env.MILLRACE_SECRET_KEY = secretKey;
  // A computed specifier keeps the web app (and Next's global types) out of the worker's typecheck.
  const web = (file: string) => new URL(`../../web/server/${file}`, import.meta.url).href;
  const { handleRest } = (await import(web("rest/handler.ts"))) as {
    handleRest: (request: Request) => Promise<Response>;
  };
  const { getServices } = (await import(web("services.ts"))) as {
    getServices: () => Promise<{
      boss: { stop(options: object): Promise<void> };
      events: { close(): Promise<void> };
      pool: { end(): Promise<void> };
    }>;
  };
  const { serveFetchHandler } = (await import(web("rest/testing/node-server.ts"))) as {
    serveFetchHandler: (
      handle: (request: Request) => Promise<Response>,
    ) => Promise<{ server: http.Server; url: string }>;
  };
  const { server, url } = await serveFetchHandler(handleRest);
  return {
    url,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      const started = await getServices();
      await started.boss.stop({ graceful: false, close: true, timeout: 2000 }).catch(() => {});
      await started.events.close();
      await started.pool.end();
    },
  };
}

export interface TestServer {
  url: string;
  pid: number;
  output(): string;
  stop(): Promise<void>;
}

/**
 * A server process of its own (the web app's REST router, tRPC and /metrics, without the UI):
 * rest-process.ts. With `SERVER_BACKGROUND: "true"` it also competes for leadership and runs the
 * leader's tasks (zombie monitor, fleet sampler, retention).
 */
export async function startTestServer(env: Record<string, string>): Promise<TestServer> {
  const web = new URL("../../web/server/rest/testing/index.ts", import.meta.url).href;
  const { startRestProcess } = (await import(web)) as {
    startRestProcess: (env: Record<string, string>) => Promise<TestServer>;
  };
  return startRestProcess(env);
}

/** A TCP port free on 127.0.0.1 right now (for a child process to listen on). */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
