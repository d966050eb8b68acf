import os from "node:os";
import type { Pool } from "@millrace/db";

export interface SlotState {
  name: string;
  currentJobId: string | null;
  jobsExecuted: number;
}

export const PING_INTERVAL_MS = 5000;

/** Upserts one worker_ping row per slot: what the workers list and the zombie monitor read. */
export async function pingWorkers(
  pool: Pool,
  group: string,
  tags: readonly string[],
  slots: readonly SlotState[],
): Promise<void> {
  const memory = process.memoryUsage().rss;
  for (const slot of slots) {
    await pool.query(
      `INSERT INTO worker_ping (name, worker_group, tags, host, current_job_id, jobs_executed, memory_bytes, last_ping_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now())
       ON CONFLICT (name) DO UPDATE SET worker_group = EXCLUDED.worker_group, tags = EXCLUDED.tags,
         host = EXCLUDED.host, current_job_id = EXCLUDED.current_job_id,
         jobs_executed = EXCLUDED.jobs_executed, memory_bytes = EXCLUDED.memory_bytes, last_ping_at = now()`,
      [slot.name, group, tags, os.hostname(), slot.currentJobId, slot.jobsExecuted, memory],
    );
  }
}
