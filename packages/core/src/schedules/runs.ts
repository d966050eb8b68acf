import { authorizePath } from "../access.ts";
import type { CoreContext } from "../context.ts";
import { AppError, notFound } from "../errors.ts";
import { parsePath } from "../paths.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";

export interface ScheduleRun {
  id: string;
  status: "queued" | "running" | "success" | "failure" | "canceled";
  /** The tick the job was started for. */
  scheduledFor: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

export const MAX_SCHEDULE_RUNS = 100;

/**
 * The latest jobs of one schedule or of several (newest first, `limit` per schedule): ids,
 * statuses and times only, never args or results (the run page applies its own access rules).
 */
export async function listScheduleRuns(
  ctx: CoreContext,
  membership: Membership,
  paths: string[],
  limit = 20,
): Promise<Map<string, ScheduleRun[]>> {
  requirePermission(membership, "schedule.read");
  for (const path of paths) {
    parsePath(path);
    await authorizePath(ctx, membership, path, "read").catch((error: unknown) => {
      throw error instanceof AppError && error.code === "NOT_FOUND" ? notFound(`schedule ${path}`) : error;
    });
  }
  const runs = new Map<string, ScheduleRun[]>(paths.map((path) => [path, []]));
  if (paths.length === 0) return runs;
  const { rows } = await ctx.pool.query<{
    schedule_path: string;
    id: string;
    status: ScheduleRun["status"];
    scheduled_for: Date;
    started_at: Date | null;
    completed_at: Date | null;
  }>(
    `SELECT p.path AS schedule_path, j.id, j.status::text AS status,
            j.scheduled_for AT TIME ZONE 'UTC' AS scheduled_for, j.started_at AT TIME ZONE 'UTC' AS started_at,
            j.completed_at AT TIME ZONE 'UTC' AS completed_at
       FROM unnest($2::text[]) AS p(path)
       CROSS JOIN LATERAL (
         SELECT id, status, scheduled_for, started_at, completed_at, created_at FROM job
          WHERE workspace_id = $1 AND schedule_path = p.path
          ORDER BY created_at DESC LIMIT $3) AS j
      ORDER BY p.path, j.created_at DESC`,
    [membership.workspace.id, paths, Math.min(Math.max(limit, 1), MAX_SCHEDULE_RUNS)],
  );
  for (const row of rows) {
    runs.get(row.schedule_path)!.push({
      id: row.id,
      status: row.status,
      scheduledFor: row.scheduled_for,
      startedAt: row.started_at,
      completedAt: row.completed_at,
    });
  }
  return runs;
}
