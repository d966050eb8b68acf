// Test helper: the real `millrace` CLI as a child process, with a clean environment (no config or
// token of the machine leaks in: HOME and MILLRACE_CONFIG point at a fresh folder).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const main = path.join(path.dirname(fileURLToPath(import.meta.url)), "main.ts");
const root = path.resolve(path.dirname(main), "../../..");

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-cli-home-"));
  const started = performance.now();
  return new Promise<CliRun>((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        MILLRACE_CONFIG: path.join(home, "config.json"),
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code) =>
      resolve({ code, stdout, stderr, ms: Math.round(performance.now() - started) }),
    );
  }).finally(() => fs.rmSync(home, { recursive: true, force: true }));
}
