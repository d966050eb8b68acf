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
  ALERT_QUEUE_WAIT_SETTING,
  ALERT_SCRIPT_SETTING,
  ALERT_WEBHOOK_URL_SETTING,
  ALERT_WORKER_OFFLINE_SETTING,
} from "./alert-settings.ts";
export {
  evaluateFleetAlerts,
  getAlertSettings,
  listInstanceAlerts,
  saveAlertSettings,
  type AlertSettingsInput,
  readAlertSettings,
  type AlertChanges,
  type AlertKind,
  type AlertSettings,
  type InstanceAlertView,
} from "./alerts.ts";
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
export { kedaQueryInput, renderKedaQuery, type KedaQueryInput } from "./keda-query.ts";
