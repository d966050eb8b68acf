// The flow engine's periodic part, run by the leader's maintenance loop beside the zombie
// monitor (apps/web/server/background.ts): what no completion triggers.
import type { Pool } from "@millrace/db";
import type { Boss } from "../../jobs/boss.ts";
import { timeOutSuspendedFlows } from "./approvals.ts";
import { startDueQueuedFlows } from "./run.ts";

export interface FlowSweep {
  /** Flow runs that waited for their concurrency limit (a time window passed) and started. */
  started: string[];
  /** Flows whose suspended step got no approval in time. */
  timedOut: string[];
}

export async function sweepFlows(pool: Pool, boss: Boss): Promise<FlowSweep> {
  const started = await startDueQueuedFlows(pool, boss);
  const timedOut = await timeOutSuspendedFlows(pool, boss);
  return { started, timedOut };
}
