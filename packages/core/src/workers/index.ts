export {
  assertTagAllowed,
  availableTags,
  customTagAllows,
  formatCustomTag,
  invalidateCustomTagsCache,
  isTagAllowed,
  loadCustomTags,
  parseCustomTag,
  parseCustomTags,
  CUSTOM_TAGS_SETTING,
  type CustomTag,
} from "./custom-tags.ts";
export { getCustomTagsSetting, listCustomTags, type ListCustomTagsInput } from "./available-tags.ts";
export {
  deleteWorkerGroupConfig,
  effectiveWorkerTags,
  getWorkerGroupConfig,
  listWorkerGroupConfigs,
  loadWorkerGroupConfig,
  parseWorkerGroupConfig,
  updateWorkerGroupConfig,
  validateWorkerGroupName,
  WORKER_CONFIG_CHANNEL,
  WORKER_GROUP_NAME,
  type WorkerGroupConfig,
  type WorkerGroupConfigRow,
} from "./group-config.ts";
export {
  runtimeDirsEnv,
  runtimeDirsSchema,
  workerSizeSchema,
  type RuntimeDirsEnv,
} from "./runtime-config.ts";
export {
  listWorkers,
  queueCounts,
  queueStats,
  DEFAULT_PING_SINCE_SECS,
  type ListWorkersInput,
  type QueueStat,
  type WorkerPingView,
} from "./workers-list.ts";
export { pingWorkers, type SlotPing, type WorkerPingInput } from "./ping.ts";
export {
  recordWorkerScriptEnd,
  recordWorkerScriptStart,
  WORKER_SCRIPT_TIMEOUT_SECS,
  WORKER_SCRIPTS_WORKSPACE,
  type WorkerScriptKind,
  type WorkerScriptOutcome,
} from "./worker-scripts.ts";
