export {
  deleteOldFleetSamples,
  FLEET_SAMPLE_RETENTION_SECS,
  latestFleetSample,
  sampleFleet,
  type FleetSample,
  type QueueSampleRow,
  type WorkerGroupSampleRow,
} from "./sample.ts";
