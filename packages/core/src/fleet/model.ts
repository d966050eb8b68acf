// The fleet's pure modules, for the browser (`@millrace/core/fleet-model`): the sizing simulator
// runs client-side as the operator types. Nothing here may import the database or Node APIs.
export {
  DEFAULT_AUTOSCALE,
  MAX_SIMULATED_JOBS,
  MAX_SIMULATED_WORKERS,
  simulate,
  type ArrivalMode,
  type AutoscalePolicy,
  type SimulationInput,
  type SimulationPoint,
  type SimulationResult,
  type SimulationSummary,
  type WorkerPolicy,
} from "./simulator.ts";
export { meanDuration, type DurationDistribution } from "./random.ts";
export { PEAK_HEADROOM, recommendWorkers, type SizingInput, type SizingRecommendation } from "./sizing.ts";
export {
  jobMemoryLimitMb,
  MAX_WORKER_SIZE_MB,
  MIN_WORKER_SIZE_MB,
  WORKER_SIZE_NAMES,
  WORKER_SIZES,
  workerComputeUnits,
  workerMemoryMb,
  type WorkerSize,
  type WorkerSizeName,
} from "./worker-sizes.ts";
