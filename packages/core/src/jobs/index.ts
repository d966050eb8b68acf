export { startBoss, ensureQueue, type Boss } from "./boss.ts";
export {
  enqueueJob,
  enqueueJobs,
  enqueueCopies,
  noopJob,
  redispatchJob,
  queuedChannel,
  type EnqueueInput,
  type EnqueueOptions,
  type JobKind,
  type RetryPolicy,
} from "./enqueue.ts";
export { JobEvents, JOB_CANCEL_CHANNEL, JOB_DONE_CHANNEL, JOB_LOG_CHANNEL } from "./events.ts";
export {
  appendJobLog,
  appendLogs,
  claimJobs,
  CLAIM_PAUSE_LOCK_SQL,
  releaseClaimedJobs,
  nextDueTag,
  MAX_JOB_LOG_CHARS,
  type ClaimedJob,
} from "./claim.ts";
export { completeJobs, retryDelaySecs, type Completion, type JobError, type JobOutcome } from "./complete.ts";
export {
  checkScriptLimits,
  checkedPriority,
  checkedTimeout,
  resolveConcurrencyKey,
  type ScriptLimitsInput,
} from "./limits.ts";
export {
  runScriptByPath,
  runPreview,
  MAX_ARGS_BYTES,
  type JobLimits,
  type JobsContext,
  type RunOptions,
  type PreviewInput,
} from "./run.ts";
export { cancelJob, type CancelResult } from "./cancel.ts";
export { getJob, waitForJob, listJobs, isFinished, type JobWithLogs, type ListJobsInput } from "./queries.ts";
export { resolveTag, tagForRunnable, validateTag } from "./tags.ts";
export {
  getJobUpdate,
  streamJobUpdates,
  MAX_UPDATE_LOG_CHARS,
  type JobUpdate,
  type StreamOptions,
} from "./log-stream.ts";
export {
  parseJobListQuery,
  parseDateTime,
  isJobId,
  JOB_LIST_PARAMS,
  checkJobListParams,
  JOB_STATUSES,
  DEFAULT_JOBS_PER_PAGE,
  MAX_JOBS_PER_PAGE,
  type JobListQuery,
  type ValueFilter,
} from "./queries.ts";
export { deleteExpiredJobs, type RetentionOptions } from "../maintenance/retention.ts";
export { waitForResult, type FinishedJob } from "./wait.ts";
export {
  countCompletedJobsByTag,
  databaseClock,
  DEFAULT_TAG_COUNT_HORIZON_SECS,
  type TagCount,
} from "./tag-counts.ts";
export { runScriptByHash } from "./run.ts";
export { addBatchJobs, MAX_BATCH_JOBS, type BatchRequest } from "./batch.ts";
export {
  getResultMaybe,
  getJobLogs,
  getRootJobId,
  jobLineage,
  setJobProgress,
  getJobProgress,
  queuePosition,
  jobScheduledFor,
  rerunJobs,
  creatorEmails,
  type ResultMaybe,
  type RerunOptions,
} from "./client-api.ts";
export * from "./transfer.ts";
