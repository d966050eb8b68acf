import { readdirSync } from "node:fs";
import path from "node:path";
import type { Pool } from "@millrace/db";
import { removeJobDir } from "@millrace/runtime";

// A job's folder, or an init or periodic script's (see init-scripts.ts), or a same_worker flow
// run's `./shared` (flow-shared-dir.ts): named after its job.
const JOB_FOLDER =
  /^(?:\.worker-script-)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\.shared)?$/;
// After the start, as a worker killed while its jobs ran leaves their folders until the zombie
// monitor (ZOMBIE_JOB_TIMEOUT) has ended or requeued those jobs.
const SWEEP_EVERY_MS = 10 * 60 * 1000;

/**
 * Removes the job folders in `jobDir` whose job this database knows and is not running: those of
 * a worker killed (kill -9, a crash) while its jobs ran, which it never removed. A job running on
 * another worker that shares `jobDir` is running, and keeps its folder. A folder whose job this
 * database does not know is another instance's (the default JOB_DIR is shared by every instance
 * on a host, and job ids are random UUIDs): it is never touched. One readdir and, when job folders
 * are found, one query. Returns the folders removed.
 */
export async function removeStaleJobFolders(pool: Pool, jobDir: string): Promise<string[]> {
  const folders = new Map<string, string>();
  try {
    for (const name of readdirSync(jobDir)) {
      const id = JOB_FOLDER.exec(name)?.[1];
      if (id) folders.set(name, id);
    }
  } catch {
    return [];
  }
  if (folders.size === 0) return [];
  const { rows } = await pool.query<{ id: string }>(
    "SELECT id::text AS id FROM job WHERE id = ANY($1::uuid[]) AND status <> 'running'",
    [[...new Set(folders.values())]],
  );
  const ended = new Set(rows.map((row) => row.id));
  const stale = [...folders].filter(([, id]) => ended.has(id)).map(([name]) => name);
  for (const name of stale) removeJobDir(path.join(jobDir, name));
  return stale;
}

/** Sweeps now and every 10 minutes; `log` says how many folders went. */
export function sweepStaleJobFolders(pool: Pool, jobDir: string, log: (message: string) => void): () => void {
  const sweep = () =>
    void removeStaleJobFolders(pool, path.resolve(jobDir)).then(
      (removed) => {
        if (removed.length > 0)
          log(`removed ${removed.length} job folder(s) left by a worker that was killed`);
      },
      () => {},
    );
  sweep();
  const timer = setInterval(sweep, SWEEP_EVERY_MS).unref();
  return () => clearInterval(timer);
}
