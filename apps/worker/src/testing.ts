// Starts a real worker process for integration tests and stops it (and its job processes) after.
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const main = path.join(path.dirname(fileURLToPath(import.meta.url)), "main.ts");

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
  let output = "";
  const child = spawn(process.execPath, [main], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: os.tmpdir(),
      DATABASE_URL: databaseUrl,
      NUM_WORKERS: "1",
      JOB_DIR: path.join(os.tmpdir(), `millrace-test-jobs-${process.pid}`),
      WORKER_GRACE_PERIOD: "5",
      ...env,
    },
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
