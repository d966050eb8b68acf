import type { Pool } from "@millrace/db";

export interface RetentionOptions {
  /** Finished jobs older than this (by completion time) are deleted. */
  retentionSecs: number;
  batchSize?: number;
  /** Pause between batches, so that the queue's own statements get the database in between. */
  pauseMs?: number;
  signal?: AbortSignal;
}

/**
 * Deletes finished jobs (and their logs, by cascade) completed more than `retentionSecs` ago, in
 * small batches. Each batch locks its rows with SKIP LOCKED, so it never waits on a row a worker
 * or a cancel holds, and it never touches a queued or running job. Returns how many it deleted.
 */
export async function deleteExpiredJobs(pool: Pool, options: RetentionOptions): Promise<number> {
  const { retentionSecs, batchSize = 1000, pauseMs = 50, signal } = options;
  if (!Number.isFinite(retentionSecs) || retentionSecs <= 0) {
    throw new RangeError(`retentionSecs must be a positive number, got ${retentionSecs}`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RangeError(`batchSize must be a positive whole number, got ${batchSize}`);
  }
  let deleted = 0;
  while (!signal?.aborted) {
    // The outer status test is a second wall: whatever the subquery saw, a live job is never deleted.
    const { rowCount } = await pool.query(
      `DELETE FROM job
        WHERE id IN (SELECT id FROM job
                      WHERE status IN ('success', 'failure', 'canceled')
                        AND completed_at < now() - make_interval(secs => $1)
                      ORDER BY completed_at
                      LIMIT $2
                      FOR UPDATE SKIP LOCKED)
          AND status IN ('success', 'failure', 'canceled')`,
      [retentionSecs, batchSize],
    );
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < batchSize) break;
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  return deleted;
}
