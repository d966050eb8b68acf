import os from "node:os";
import { pingWorkers as pingWorkerSlots, type SlotPing, type ZombieSettings } from "@millrace/core";
import type { Pool } from "@millrace/db";
import type { Occupancy } from "./occupancy.ts";

export interface SlotState {
  name: string;
  currentJobId: string | null;
  jobsExecuted: number;
  occupancy: Occupancy;
}

/** A slot's heartbeat as core's pingWorkers (and an agent's ping request) takes it. */
export function slotPing(slot: SlotState): SlotPing {
  return {
    name: slot.name,
    currentJobId: slot.currentJobId,
    jobsExecuted: slot.jobsExecuted,
    occupancy15s: slot.occupancy.rate(15),
    occupancy5m: slot.occupancy.rate(300),
    occupancy30m: slot.occupancy.rate(1800),
  };
}

/** The worker_ping rows of this process's slots (see core's pingWorkers), and the zombie settings. */
export async function pingWorkers(
  pool: Pool,
  group: string,
  tags: readonly string[],
  slots: readonly SlotState[],
  version: string,
  sandbox: string,
): Promise<{ zombie: ZombieSettings | null }> {
  return pingWorkerSlots(pool, {
    group,
    tags,
    host: os.hostname(),
    memoryBytes: process.memoryUsage().rss,
    version,
    sandbox,
    slots: slots.map(slotPing),
  });
}
