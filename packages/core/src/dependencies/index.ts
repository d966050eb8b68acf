export { attachLocks, checkRequirements, LOCK_HOLD_MS } from "./locks.ts";
export { settleDependencyJobs } from "./settle.ts";
export { enqueueDependencyJob, DEPENDENCY_TAG, type DeployedVersion } from "./deploy.ts";
export {
  dedicatedTag,
  invalidateDedicatedTagsCache,
  loadDedicatedTags,
  parseDedicatedTarget,
  routeToDedicatedWorkers,
} from "./dedicated.ts";
