export {
  deleteOldFleetSamples,
  FLEET_SAMPLE_RETENTION_SECS,
  latestFleetSample,
  sampleFleet,
  type FleetSample,
  type QueueSampleRow,
  type WorkerGroupSampleRow,
} from "./sample.ts";
export {
  fleetHistory,
  HISTORY_POINTS,
  HISTORY_WINDOWS_MINUTES,
  MAX_SERIES,
  type FleetHistory,
  type GroupOccupancyPoint,
  type HistoryWindowMinutes,
  type TagQueuePoint,
  type ThroughputPoint,
} from "./history.ts";
export { LOAD_PROFILE_HOURS, loadProfile, type LoadProfile, type TagLoad } from "./load-profile.ts";
export * from "./model.ts";
