// Starts rest-process.ts for integration tests and stops it after.
import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "rest-process.ts");

export interface RestProcess {
  url: string;
  /** The process's pid (its memory, read by benchmarks from /proc). */
  pid: number;
  output(): string;
  stop(): Promise<void>;
}

export async function startRestProcess(env: Record<string, string>): Promise<RestProcess> {
  let output = "";
  const child = spawn(process.execPath, [script], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: os.tmpdir(), NODE_ENV: "production", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const deadline = Date.now() + 20_000;
  let match: RegExpExecArray | null;
  while (!(match = /listening (\S+)/.exec(output))) {
    if (child.exitCode !== null) throw new Error(`REST server exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`REST server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: match[1]!,
    pid: child.pid!,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
