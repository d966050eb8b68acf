import type { ClaimedJob } from "@millrace/core";
import type { RunJobDeps } from "./run-job.ts";

/**
 * What a job needs to call Millrace back: the environment its script sees (WM_TOKEN, …) and its
 * arguments with `$res:`/`$var:` references resolved.
 */
export async function prepareCallback(
  deps: RunJobDeps,
  job: ClaimedJob,
): Promise<{ env: Record<string, string>; args: Record<string, unknown> }> {
  return {
    env: {
      WM_WORKSPACE: job.workspaceId,
      WM_JOB_ID: job.id,
      WM_JOB_PATH: job.scriptPath ?? "",
      WM_PERMISSIONED_AS: job.permissionedAs,
      WM_USERNAME: job.createdBy,
      WM_BASE_URL: deps.baseUrl,
      BASE_URL: deps.baseUrl,
      BASE_INTERNAL_URL: deps.baseInternalUrl,
    },
    args: job.args,
  };
}
