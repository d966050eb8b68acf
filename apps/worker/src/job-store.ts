// What running a job reads and writes besides the job itself, behind one interface so that the
// same executor (run-job.ts: sandbox, limits, dependencies, masking) serves both kinds of worker:
// a database worker reads the database (dbJobStore); an agent worker, which has no database
// access, gets the same answers from the server's HTTP API (agent/agent-store.ts).
import { appendJobLog, resolveJobArgs, type ClaimedJob, type Keyring } from "@millrace/core";
import { createDb, type Db, type Pool } from "@millrace/db";

export interface JobStore {
  /** Appends output to a running job's log. */
  appendLog(jobId: string, text: string): Promise<void>;
  /** The job's args with top-level `$var:`/`$res:` resolved; each secret revealed is reported. */
  resolveArgs(job: ClaimedJob, onSecretRevealed: (value: string) => void): Promise<Record<string, unknown>>;
  /** The lock of a script version whose job was enqueued before the lock existed. */
  lockOfVersion(job: Pick<ClaimedJob, "workspaceId" | "scriptHash">): Promise<string>;
  /** The root job of the flow run of a same_worker flow's step (its `./shared` folder), else null. */
  sharedFlowRoot(job: ClaimedJob): Promise<string | null>;
}

// A flow's steps come one after another: its answer is asked again and again. Runs are few.
const MAX_CACHED = 1000;

export function dbJobStore(pool: Pool, secrets: Keyring): JobStore {
  // Resolving references goes through core's authorization, which takes a Prisma client too;
  // made only when a job has references to resolve.
  let db: Db | null = null;
  const byParent = new Map<string, { root: string; same: boolean }>();
  return {
    appendLog: (jobId, text) => appendJobLog(pool, jobId, text),
    resolveArgs: (job, onSecretRevealed) =>
      resolveJobArgs(
        { pool, db: (db ??= createDb(pool)), secrets, onSecretRevealed },
        job.workspaceId,
        job.permissionedAs,
        job.args,
        job,
      ),
    async lockOfVersion(job) {
      const { rows } = await pool.query<{ lock: string | null; lock_error: string | null }>(
        "SELECT lock, lock_error FROM script WHERE workspace_id = $1 AND hash = $2",
        [job.workspaceId, job.scriptHash],
      );
      const row = rows[0];
      if (row?.lock) return row.lock;
      if (row?.lock_error) throw new Error(`dependencies could not be installed: ${row.lock_error}`);
      throw new Error(
        "dependencies are still being installed: this version's dependency job has not finished (see its `dependency` job)",
      );
    },
    async sharedFlowRoot(job) {
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
      return known.same ? known.root : null;
    },
  };
}
