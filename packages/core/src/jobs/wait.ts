import { prepared } from "@millrace/db";
import { AppError, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../workspaces.ts";
import { JOB_DONE_CHANNEL } from "./events.ts";
import type { JobsContext } from "./run.ts";

export interface FinishedJob {
  status: "success" | "failure" | "canceled";
  result: unknown;
}

/**
 * Calls `read` until it returns a value (the job finished) or the timeout passes: woken by the
 * job's NOTIFY, re-reading every 2 s as a safety net, so a missed notification only delays the
 * answer. `read` returns null while the job is not finished.
 */
export async function waitUntilFinished<T>(
  ctx: JobsContext,
  id: string,
  timeoutMs: number,
  read: () => Promise<T | null>,
): Promise<T> {
  let wake: () => void = () => {};
  const unsubscribe = ctx.events.on(JOB_DONE_CHANNEL, id, () => wake());
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const finished = await read();
      if (finished !== null) return finished;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new AppError(
          "LIMIT_EXCEEDED",
          `timed out after ${Math.round(timeoutMs / 1000)} s waiting for job ${id}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 2000));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    unsubscribe();
  }
}

/** The outcome of a job of the caller's workspace, once finished (run_wait_result's hot path). */
export async function waitForResult(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  timeoutMs: number,
): Promise<FinishedJob> {
  requirePermission(membership, "job.read");
  return waitUntilFinished(ctx, id, timeoutMs, async () => {
    const { rows } = await ctx.pool.query<{ status: string; result: unknown }>(
      prepared("SELECT status, result FROM job WHERE id = $1 AND workspace_id = $2", [
        id,
        membership.workspace.id,
      ]),
    );
    const row = rows[0];
    if (!row) throw notFound(`job ${id}`);
    if (row.status === "success" || row.status === "failure" || row.status === "canceled") {
      return { status: row.status, result: row.result };
    }
    return null;
  });
}
