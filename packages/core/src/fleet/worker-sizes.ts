// Worker sizes (seed 004, "Worker memory sizing"): the one definition that a worker group's config
// (`worker_size`), the worker enforcing it on jobs and the sizing simulator all read. Pure: the
// browser runs the simulator.
//
// | size     | memory | compute units |
// | small    | 1 GB   | 0.5           |
// | standard | 2 GB   | 1             |
// | large    | 4 GB   | 2             |
// An explicit size in MB is also accepted; its compute units follow the seed's bands (up to 1 GB:
// 0.5, up to 2 GB: 1, above: 2, "capped at 2 CU regardless of actual memory").

export const WORKER_SIZES = {
  small: { memoryMb: 1024, computeUnits: 0.5 },
  standard: { memoryMb: 2048, computeUnits: 1 },
  large: { memoryMb: 4096, computeUnits: 2 },
} as const;

export type WorkerSizeName = keyof typeof WORKER_SIZES;
/** A named size, or memory per worker in MB. */
export type WorkerSize = WorkerSizeName | number;

export const WORKER_SIZE_NAMES = Object.keys(WORKER_SIZES) as WorkerSizeName[];
/** Explicit sizes: from what one interpreter with a few libraries needs to a large machine. */
export const MIN_WORKER_SIZE_MB = 256;
export const MAX_WORKER_SIZE_MB = 1024 * 1024;

/** Memory of one worker (one job slot), in MB. */
export function workerMemoryMb(size: WorkerSize): number {
  return typeof size === "number" ? size : WORKER_SIZES[size].memoryMb;
}

/** The seed's compute units of a worker of this size. */
export function workerComputeUnits(size: WorkerSize): number {
  const memoryMb = workerMemoryMb(size);
  if (memoryMb <= WORKER_SIZES.small.memoryMb) return WORKER_SIZES.small.computeUnits;
  if (memoryMb <= WORKER_SIZES.standard.memoryMb) return WORKER_SIZES.standard.computeUnits;
  return WORKER_SIZES.large.computeUnits;
}

/**
 * The memory limit a job of a sized group runs with: the group's size, or the job's own limit
 * when it asks for less. A job cannot ask for more than its worker has. Without a group size, the
 * job's limit, else the worker's default.
 */
export function jobMemoryLimitMb(
  jobMb: number | null,
  groupSize: WorkerSize | null | undefined,
  workerDefaultMb: number | null,
): number | null {
  if (groupSize === null || groupSize === undefined) return jobMb ?? workerDefaultMb;
  const sizeMb = workerMemoryMb(groupSize);
  return jobMb !== null && jobMb < sizeMb ? jobMb : sizeMb;
}
