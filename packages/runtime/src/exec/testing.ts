import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";
import { bunStartEnv } from "./bun-stub.ts";
import { executeJob } from "./execute.ts";
import type { ExecuteOutcome, ExecuteRequest } from "./execute.ts";
import { resolvedInterpreters } from "./interpreters.ts";
import { ProcessLauncher } from "./launcher.ts";
import { detectSandbox } from "./sandbox.ts";
import { WarmSandboxes, type WarmSandboxSpec } from "./warm-sandbox.ts";

/** A scratch workRoot removed when the test file ends. */
export function scratchDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "millrace-runtime-test-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface TestRun {
  outcome: ExecuteOutcome;
  logs: string;
  chunks: string[];
  ms: number;
  jobDir: string;
}

export async function run(
  workRoot: string,
  request: Partial<ExecuteRequest> & Pick<ExecuteRequest, "language" | "content">,
): Promise<TestRun> {
  const chunks: string[] = [];
  const jobId = request.jobId ?? randomUUID();
  const started = performance.now();
  const outcome = await executeJob({
    jobId,
    args: {},
    argOrder: [],
    env: {},
    workRoot,
    timeoutMs: 20_000,
    onLog: (chunk) => chunks.push(chunk),
    ...request,
  });
  return {
    outcome,
    logs: chunks.join(""),
    chunks,
    ms: performance.now() - started,
    jobDir: path.join(workRoot, jobId),
  };
}

/** The sandbox spec of a job of `language` without dependencies, whose variables are `env`. */
export function plainSpec(
  language: "bash" | "python3" | "bun" | "deno",
  network = true,
  env: Record<string, string> = {},
): WarmSandboxSpec {
  const bin = resolvedInterpreters();
  return {
    network,
    executables: [bin[language], bin.node],
    readOnlyPaths: [],
    ...(language === "bun" ? { startEnv: bunStartEnv(env) } : {}),
  };
}

/** Fills the pool for `spec` and waits until a sandbox of it is ready. */
export async function warmUp(warm: WarmSandboxes, spec: WarmSandboxSpec): Promise<void> {
  warm.replenish(spec);
  const deadline = Date.now() + 10_000;
  while (warm.available(spec) === 0) {
    if (Date.now() > deadline) throw new Error("no warm sandbox after 10 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A process launcher and a pool of warm sandboxes (one per spec) in `workRoot`, closed after the file. */
export function launcherWithWarmPool(workRoot: string): { launcher: ProcessLauncher; pool: WarmSandboxes } {
  const launcher = new ProcessLauncher();
  const sandbox = detectSandbox();
  const pool = new WarmSandboxes({
    workRoot,
    bwrap: sandbox.kind === "bubblewrap" ? sandbox.path : "/usr/bin/bwrap",
    launcher,
    perSpec: 1,
  });
  after(async () => {
    pool.close();
    await launcher.close();
  });
  return { launcher, pool };
}
