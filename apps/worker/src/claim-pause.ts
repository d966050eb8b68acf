import { CLAIM_PAUSE_LOCK_SQL } from "@millrace/core";
import type { Pool } from "@millrace/db";

// `millrace backup restore` holds this advisory lock (exclusively, for as long as it runs) to stop
// workers from claiming jobs: an advisory lock lives outside every table, so it survives the
// restore dropping and recreating them (a row in instance_setting would vanish with its table),
// and it is released by PostgreSQL itself if the restore dies.
// A free answer is trusted this long (one query per claim loop per half second at most); the
// restore waits longer than this after taking the lock.
export const CLAIM_PAUSE_CHECK_MS = 500;

export class ClaimPause {
  private readonly pool: Pool;
  private readonly log: (message: string) => void;
  private freeUntil = 0;
  private paused = false;

  constructor(pool: Pool, log: (message: string) => void) {
    this.pool = pool;
    this.log = log;
  }

  /** Whether a restore holds the pause. A shared try-lock taken and dropped in one statement. */
  async isPaused(): Promise<boolean> {
    if (performance.now() < this.freeUntil) return false;
    const { rows } = await this.pool.query<{ free: boolean }>(
      `SELECT pg_try_advisory_xact_lock_shared(${CLAIM_PAUSE_LOCK_SQL}) AS free`,
    );
    const paused = rows[0]?.free !== true;
    if (paused !== this.paused) {
      this.paused = paused;
      this.log(paused ? "claiming paused: a restore is running" : "claiming resumed");
    }
    if (!paused) this.freeUntil = performance.now() + CLAIM_PAUSE_CHECK_MS;
    return paused;
  }
}
