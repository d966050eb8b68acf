export { startBoss, ensureQueue, type Boss } from "./boss.ts";
export { enqueueJob, JOB_QUEUED_CHANNEL, type EnqueueInput, type JobKind } from "./enqueue.ts";
export { JobEvents, JOB_DONE_CHANNEL, JOB_LOG_CHANNEL } from "./events.ts";
export {
  appendJobLog,
  claimJob,
  completeJob,
  nextDueTag,
  type ClaimedJob,
  type JobOutcome,
} from "./claim.ts";
export {
  runScriptByPath,
  runPreview,
  MAX_ARGS_BYTES,
  type JobLimits,
  type JobsContext,
  type RunOptions,
  type PreviewInput,
} from "./run.ts";
export { cancelJob, JOB_CANCEL_CHANNEL, type CancelResult } from "./cancel.ts";
export { getJob, waitForJob, listJobs, isFinished, type JobWithLogs, type ListJobsInput } from "./queries.ts";
export { resolveTag, tagForRunnable, validateTag } from "./tags.ts";
