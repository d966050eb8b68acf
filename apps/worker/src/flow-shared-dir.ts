// Windmill's `same_worker: true` flows give every step the same `./shared` folder: a file one
// step writes there is read by the next. Millrace's steps are separate jobs, so the folder is one
// per flow run on this machine (JOB_DIR/<root job id>.shared), linked into each step's folder.
// Steps of the run that land on a worker of another machine do not see it (see
// docs/compatibility.md). The stale-folder sweep removes it once the run is over.
import type { ClaimedJob } from "@millrace/core";
import { sharedFlowDir } from "@millrace/runtime";
import type { JobStore } from "./job-store.ts";

/** The `./shared` folder of a flow step whose run is same_worker; null for any other job. */
export async function flowSharedDir(
  store: JobStore,
  jobDir: string,
  job: ClaimedJob,
): Promise<string | null> {
  const root = await store.sharedFlowRoot(job);
  return root ? sharedFlowDir(jobDir, root) : null;
}
