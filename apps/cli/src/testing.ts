// Test helpers: the real `millrace` CLI as a child process, with a clean environment (no config or
// token of the machine leaks in: HOME and MILLRACE_CONFIG point at a fresh folder); and the real
// `wmill` (npm windmill-cli 1.819, Apache-2.0) likewise, against a live Millrace.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";

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

const WMILL_CLI = fileURLToPath(new URL("../../../node_modules/windmill-cli/esm/main.js", import.meta.url));

export interface WmillRun {
  code: number | null;
  /** stdout and stderr as they came, colors stripped. */
  output: string;
  stdout: string;
}

/**
 * Runs wmill in `cwd` with `home` as its HOME (asynchronously: the tests serve the REST router
 * in this very process). `instance` adds the flags naming the instance, so no profile is needed.
 */
export function runWmill(
  args: string[],
  options: {
    cwd: string;
    home: string;
    instance?: { url: string; token: string; workspace: string };
    env?: Record<string, string>;
  },
): Promise<WmillRun> {
  const { instance } = options;
  const flags = instance
    ? ["--base-url", `${instance.url}/`, "--token", instance.token, "--workspace", instance.workspace]
    : [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WMILL_CLI, ...args, ...flags], {
      cwd: options.cwd,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: options.home,
        WMILL_CONFIG_DIR: path.join(options.home, ".config"),
        NO_COLOR: "1",
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ code, output: stripVTControlCharacters(output), stdout: stripVTControlCharacters(stdout) }),
    );
  });
}
