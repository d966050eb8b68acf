import type { ClaimedJob } from "@millrace/core";
import type { RunJobDeps } from "./run-job.ts";

/**
 * Makes the job's locked dependencies available: paths the sandbox must expose read-only and the
 * environment that points the interpreter at them.
 */
export async function prepareDependencies(
  _deps: RunJobDeps,
  _job: ClaimedJob,
): Promise<{ readOnlyPaths: string[]; env: Record<string, string> }> {
  return { readOnlyPaths: [], env: {} };
}
