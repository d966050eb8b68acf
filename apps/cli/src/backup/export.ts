// The readable half of a backup: each workspace's sync files (the same files `wmill sync pull` and
// git sync write: scripts, flows, schedules, variables with secrets still encrypted…), in
// `<backup>.workspaces/<workspace id>/`, to diff, grep or push to git. The dump is what restore
// reads; this export is read in its own snapshot, just after the dump's.
import fs from "node:fs";
import path from "node:path";

export interface WorkspaceExport {
  dir: string;
  workspaces: { id: string; files: number }[];
  /** Workspaces whose export failed (the backup itself is complete without them). */
  failed: { id: string; error: string }[];
}

export function exportDirFor(file: string): string {
  return `${file}.workspaces`;
}

export async function exportWorkspaces(url: string, file: string): Promise<WorkspaceExport> {
  const { createDb, createPool } = await import("@millrace/db");
  const core = await import("@millrace/core");
  const { snapshotToFiles } = await import("@millrace/sync");
  const dir = exportDirFor(file);
  fs.rmSync(dir, { recursive: true, force: true });
  const pool = createPool(url, { max: 2, applicationName: "millrace-backup-export" });
  const result: WorkspaceExport = { dir, workspaces: [], failed: [] };
  try {
    const ctx = { pool, db: createDb(pool) };
    const { rows } = await pool.query<{ id: string }>(
      "SELECT id FROM workspace WHERE NOT deleted ORDER BY id",
    );
    for (const { id } of rows) {
      try {
        const membership = await core.requireMembership(ctx as never, core.SUPERADMIN_SECRET_PRINCIPAL, id);
        const files = snapshotToFiles(await core.exportWorkspaceSnapshot(ctx as never, membership));
        const root = path.join(dir, id);
        for (const [name, content] of files) {
          const target = path.join(root, name);
          if (!target.startsWith(`${root}${path.sep}`)) throw new Error(`unsafe file name ${name}`);
          fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
          fs.writeFileSync(target, content, { mode: 0o600 });
        }
        result.workspaces.push({ id, files: files.size });
      } catch (error) {
        result.failed.push({ id, error: (error as Error).message });
      }
    }
  } finally {
    await pool.end();
  }
  return result;
}
