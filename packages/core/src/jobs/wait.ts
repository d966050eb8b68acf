import { prepared } from "@millrace/db";
import { AppError, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import { JOB_DONE_CHANNEL, type NotifiedOutcome } from "./events.ts";
import type { JobsContext } from "./run.ts";
import { inColumnOrder } from "./result-columns.ts";

export type FinishedJob = NotifiedOutcome;

/**
 * Calls `read` until it returns a value (the job finished) or the timeout passes: woken by the
 * job's NOTIFY, re-reading every 2 s as a safety net, so a missed notification only delays the
 * answer. `read` returns null while the job is not finished. A notification that carries the
 * job's outcome is answered with `fromNotification` instead of a read, when given.
 */
export async function waitUntilFinished<T>(
  ctx: JobsContext,
  id: string,
  timeoutMs: number,
  read: () => Promise<T | null>,
  fromNotification?: (outcome: NotifiedOutcome) => T,
): Promise<T> {
  // A notification that arrives while a read is in flight is kept: that read may have seen the
  // job still running.
  const notice: { received: boolean; outcome: NotifiedOutcome | null; wake: (() => void) | null } = {
    received: false,
    outcome: null,
    wake: null,
  };
  const unsubscribe = ctx.events.on(JOB_DONE_CHANNEL, id, (_, outcome) => {
    notice.received = true;
    notice.outcome = outcome;
    notice.wake?.();
  });
  // Listening before the first read: a completion after it cannot go unnoticed. (Unreachable, the
  // database fails the read too, or the re-reads below carry on.)
  await ctx.events.listening(JOB_DONE_CHANNEL).catch(() => {});
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      notice.received = false;
      const finished = await read();
      if (finished !== null) return finished;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new AppError(
          "LIMIT_EXCEEDED",
          `timed out after ${Math.round(timeoutMs / 1000)} s waiting for job ${id}`,
        );
      }
      if (!notice.received) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 2000));
          notice.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        notice.wake = null;
      }
      // The first read found the job in the caller's workspace: its outcome may be answered as is.
      if (notice.received && notice.outcome && fromNotification) return fromNotification(notice.outcome);
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
  return waitUntilFinished(
    ctx,
    id,
    timeoutMs,
    async () => {
      const { rows } = await ctx.pool.query<{
        status: string;
        result: unknown;
        result_columns: string[] | null;
      }>(
        prepared("SELECT status, result, result_columns FROM job WHERE id = $1 AND workspace_id = $2", [
          id,
          membership.workspace.id,
        ]),
      );
      const row = rows[0];
      if (!row) throw notFound(`job ${id}`);
      if (row.status === "success" || row.status === "failure" || row.status === "canceled") {
        return { status: row.status, result: inColumnOrder(row.result, row.result_columns) };
      }
      return null;
    },
    (outcome) => outcome,
  );
}
