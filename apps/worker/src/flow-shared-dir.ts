// Windmill's `same_worker: true` flows give every step the same `./shared` folder: a file one
// step writes there is read by the next. Millrace's steps are separate jobs, so the folder is one
// per flow run on this machine (JOB_DIR/<root job id>.shared), linked into each step's folder.
// Steps of the run that land on a worker of another machine do not see it (see
// docs/compatibility.md). The stale-folder sweep removes it once the run is over.
import type { ClaimedJob } from "@millrace/core";
import type { Pool } from "@millrace/db";
import { sharedFlowDir } from "@millrace/runtime";

// A flow's steps come one after another: its answer is asked again and again. Runs are few.
const MAX_CACHED = 1000;
const byParent = new Map<string, { root: string; same: boolean }>();

/** The `./shared` folder of a flow step whose run is same_worker; null for any other job. */
export async function flowSharedDir(pool: Pool, jobDir: string, job: ClaimedJob): Promise<string | null> {
  if (!job.parentJobId) return null;
  let known = byParent.get(job.parentJobId);
  if (!known) {
    const { rows } = await pool.query<{ root: string; same: boolean }>(
      `SELECT r.id::text AS root, COALESCE(r.raw_flow->>'same_worker' = 'true', false) AS same
         FROM job p JOIN job r ON r.id = COALESCE(p.root_job_id, p.id)
        WHERE p.id = $1`,
      [job.parentJobId],
    );
    if (!rows[0]) return null;
    known = rows[0];
    if (byParent.size >= MAX_CACHED) byParent.delete(byParent.keys().next().value!);
    byParent.set(job.parentJobId, known);
  }
  return known.same ? sharedFlowDir(jobDir, known.root) : null;
}
