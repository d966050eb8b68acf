import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";
import { executeJob } from "./execute.ts";
import type { ExecuteOutcome, ExecuteRequest } from "./execute.ts";

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
