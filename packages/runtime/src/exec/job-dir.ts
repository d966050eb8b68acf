import { chmodSync, chownSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { jobUser } from "./sandbox.ts";

// Job ids become folder names: no separators, no leading dot (which keeps them apart from the
// worker's own dot-folders), so a crafted id cannot escape or clobber workRoot.
const JOB_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const preparedRoots = new Set<string>();

/** A fresh folder for the job, owned by the job user, its siblings out of its reach. */
export function createJobDir(workRoot: string, jobId: string): string {
  if (!JOB_ID.test(jobId)) throw new TypeError(`invalid job id for a folder name: ${JSON.stringify(jobId)}`);
  const root = path.resolve(workRoot);
  const dir = path.join(root, jobId);
  const user = jobUser();
  if (!preparedRoots.has(root)) {
    mkdirSync(root, { recursive: true, mode: 0o700 });
    // A job running as another user must reach its own folder, without listing its siblings.
    if (user) {
      chmodSync(root, 0o711);
      assertReachable(path.dirname(root), root);
    }
    preparedRoots.add(root);
  }
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") removeJobDir(dir);
    else if (code === "ENOENT") mkdirSync(root, { recursive: true, mode: user ? 0o711 : 0o700 });
    else throw err;
    mkdirSync(dir, { mode: 0o700 });
  }
  if (user) chownSync(dir, user.uid, user.gid);
  return dir;
}

/**
 * The `./shared` folder of a same_worker flow run (`<root job id>.shared` beside the job folders):
 * created by its first step, kept for the next ones; the worker's sweep of stale job folders
 * removes it once the run is over.
 */
export function sharedFlowDir(workRoot: string, rootJobId: string): string {
  if (!JOB_ID.test(rootJobId)) throw new TypeError(`invalid job id: ${JSON.stringify(rootJobId)}`);
  const root = path.resolve(workRoot);
  const dir = path.join(root, `${rootJobId}.shared`);
  const user = jobUser();
  mkdirSync(root, { recursive: true, mode: user ? 0o711 : 0o700 });
  try {
    mkdirSync(dir, { mode: 0o700 });
    if (user) chownSync(dir, user.uid, user.gid);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return dir;
}

export function removeJobDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // A script may have removed permissions on its own folders: restore them and try once more.
    try {
      restorePermissions(dir);
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Leave it: the next run with this id starts by removing it again.
    }
  }
}

const removing = new Map<string, Promise<void>>();

/**
 * Removes a finished job's folder in the background: its outcome need not wait for the ~0.3–1 ms
 * of unlinking on the worker's event loop. A job that reuses the folder's path (a retry keeps its
 * job id) waits for the removal first (`jobDirRemoved`), which starts once `after` resolved (the
 * job's processes are killed).
 */
export function removeJobDirSoon(dir: string, after: Promise<void> = Promise.resolve()): void {
  const removal = after
    .then(() => rm(dir, { recursive: true, force: true }))
    .catch(() => removeJobDir(dir))
    .finally(() => {
      if (removing.get(dir) === removal) removing.delete(dir);
    });
  removing.set(dir, removal);
}

/** Resolves once `dir` (or, without it, every folder being removed) is gone. */
export async function jobDirRemoved(dir?: string): Promise<void> {
  if (dir) await removing.get(dir);
  else await Promise.all(removing.values());
}

function restorePermissions(dir: string): void {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) restorePermissions(path.join(dir, entry.name));
  }
}

/** Every folder above the work root must let others through, or no job could reach its folder. */
function assertReachable(dir: string, root: string): void {
  for (let current = dir; ; current = path.dirname(current)) {
    if ((statSync(current).mode & 0o001) === 0) {
      throw new Error(
        `jobs run as an unprivileged user and cannot reach ${root}: ${current} is not searchable by others (chmod o+x, or choose another JOB_DIR)`,
      );
    }
    if (path.dirname(current) === current) return;
  }
}
