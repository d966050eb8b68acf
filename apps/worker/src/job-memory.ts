import os from "node:os";

// Jobs whose script sets no memory limit still get one, so that one job cannot take the host's
// memory from every other job and from the worker itself: together the slots' shares stay under
// this part of the machine's (or its container's) memory.
export const JOB_MEMORY_SHARE = 0.75;
/** The default never goes below this (an interpreter with a few libraries needs about as much). */
export const MIN_DEFAULT_JOB_MEMORY_MB = 256;

/** The memory this process may use: its cgroup's limit when it has one below the machine's. */
export function machineMemoryBytes(): number {
  const total = os.totalmem();
  const constrained = process.constrainedMemory();
  return constrained > 0 && constrained < total ? constrained : total;
}

/** Each slot's share of JOB_MEMORY_SHARE of the memory, in MB. */
export function defaultJobMemoryMb(slots: number, memoryBytes = machineMemoryBytes()): number {
  const share = Math.floor((memoryBytes * JOB_MEMORY_SHARE) / slots / (1024 * 1024));
  return Math.max(MIN_DEFAULT_JOB_MEMORY_MB, share);
}

/**
 * The limit of jobs that set none: JOB_MEMORY_LIMIT_MB when given (0: none, on purpose), else
 * the slot's share.
 */
export function jobMemoryDefault(configuredMb: number | undefined, slots: number): number | null {
  if (configuredMb === undefined) return defaultJobMemoryMb(slots);
  return configuredMb === 0 ? null : configuredMb;
}
