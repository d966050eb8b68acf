import type { Pool } from "@millrace/db";
import type { Language } from "@millrace/runtime";
import type { Boss } from "../jobs/boss.ts";
import { enqueueJob } from "../jobs/enqueue.ts";
import type { JobLimits } from "../jobs/limits.ts";

export const DEPENDENCY_TAG = "dependency";

export interface DeployedVersion {
  workspaceId: string;
  hash: string;
  path: string;
  language: string;
  content: string;
  createdBy: string;
}

/**
 * Enqueues the job that resolves a new version's dependencies (kind `dependency`, tag
 * `dependency`); its completion writes the version's lock. Should the enqueue itself fail, the
 * version is marked as failed rather than left waiting for a job that does not exist.
 */
export async function enqueueDependencyJob(
  ctx: { pool: Pool; boss: Boss; limits: JobLimits },
  version: DeployedVersion,
): Promise<string> {
  try {
    return await enqueueJob(ctx.pool, ctx.boss, {
      workspaceId: version.workspaceId,
      kind: "dependency",
      scriptPath: version.path,
      scriptHash: version.hash,
      language: version.language as Language,
      content: version.content,
      args: {},
      argOrder: [],
      tag: DEPENDENCY_TAG,
      // Ahead of ordinary jobs on the same tag: runs of this version are waiting for it.
      priority: 100,
      scheduledFor: null,
      timeoutSecs: Math.min(ctx.limits.defaultTimeoutSecs, ctx.limits.maxTimeoutSecs),
      memoryLimitMb: null,
      concurrency: null,
      retry: null,
      createdBy: version.createdBy,
      permissionedAs: `u/${version.createdBy}`,
    });
  } catch (error) {
    await ctx.pool
      .query("UPDATE script SET lock_error = $3 WHERE workspace_id = $1 AND hash = $2", [
        version.workspaceId,
        version.hash,
        `could not enqueue the dependency job: ${(error as Error).message}`,
      ])
      .catch(() => {});
    throw error;
  }
}
