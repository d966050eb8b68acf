import type { JobWithLogs } from "@millrace/core";
import type { Job, Script } from "@millrace/db";
import { z } from "zod";

// Windmill's REST shapes (types from the windmill-client package), built from our rows.

export function windmillScript(script: Script, options: { withContent?: boolean } = {}) {
  return {
    workspace_id: script.workspaceId,
    hash: script.hash,
    path: script.path,
    parent_hashes: script.parentHash ? [script.parentHash] : [],
    summary: script.summary,
    description: script.description,
    ...(options.withContent === false ? {} : { content: script.content }),
    created_by: script.createdBy,
    created_at: script.createdAt.toISOString(),
    archived: script.archived,
    // What the deployer sent when it sent one (see Script.declaredSchema), else the inferred one.
    schema: script.declaredSchema ?? script.schema,
    deleted: false,
    is_template: false,
    extra_perms: {},
    lock: script.lock ?? undefined,
    language: script.language,
    kind: "script",
    starred: false,
    tag: script.tag ?? undefined,
    timeout: script.timeoutSecs ?? undefined,
    priority: script.priority ?? undefined,
    concurrent_limit: script.concurrentLimit ?? undefined,
    concurrency_time_window_s: script.concurrencyTimeWindowS ?? undefined,
    concurrency_key: script.concurrencyKey ?? undefined,
    retry: script.retry ?? undefined,
    memory_limit_mb: script.memoryLimitMb ?? undefined,
    has_preprocessor: false,
    // Compared by `wmill sync push` to decide whether a script is up to date.
    ws_error_handler_muted: false,
  };
}

// Our job kinds under Windmill's names (`noop` jobs are Windmill's `identity` jobs).
const JOB_KINDS: Record<string, string> = {
  script: "script",
  preview: "preview",
  noop: "identity",
  dependency: "dependencies",
};

// Jobs whose code is their own (not a deployed script's): Windmill answers it as `raw_code`.
const RAW_CODE_KINDS = new Set(["preview", "flowscript"]);

// Millrace's trigger kinds that Windmill's JobTriggerKind also has.
const WINDMILL_TRIGGER_KINDS = new Set(["webhook", "schedule"]);

function isFlowJob(job: Job): boolean {
  return job.kind === "flow" || job.kind === "flowpreview";
}

function jobKind(job: Job): string {
  return JOB_KINDS[job.kind] ?? job.kind;
}

/**
 * Windmill's Job (QueuedJob or CompletedJob). `email` is the address of the user who started it
 * (creatorEmails in core); `created_by` their username.
 */
export function windmillJob(job: JobWithLogs | (Job & { logs?: string }), email: string) {
  const finished = job.status === "success" || job.status === "failure" || job.status === "canceled";
  const common = {
    workspace_id: job.workspaceId,
    id: job.id,
    parent_job: job.parentJobId ?? undefined,
    created_by: job.createdBy,
    created_at: job.createdAt.toISOString(),
    started_at: job.startedAt?.toISOString(),
    script_path: job.scriptPath ?? undefined,
    script_hash: job.scriptHash ?? undefined,
    args: job.args,
    logs: job.logs,
    ...(RAW_CODE_KINDS.has(job.kind) && job.content !== null ? { raw_code: job.content } : {}),
    canceled: job.status === "canceled" || !!job.canceledBy,
    canceled_by: job.canceledBy ?? undefined,
    canceled_reason: job.cancelReason ?? undefined,
    job_kind: jobKind(job),
    permissioned_as: job.permissionedAs,
    is_flow_step: !!job.parentJobId,
    language: isFlowJob(job) ? undefined : job.language,
    ...(isFlowJob(job)
      ? { raw_flow: job.rawFlow ?? undefined, flow_status: job.flowStatus ?? undefined }
      : {}),
    ...(job.flowStepId ? { flow_step_id: job.flowStepId } : {}),
    schedule_path: job.schedulePath ?? undefined,
    ...(job.triggerKind && WINDMILL_TRIGGER_KINDS.has(job.triggerKind)
      ? { trigger_kind: job.triggerKind }
      : {}),
    email,
    visible_to_owner: true,
    tag: job.tag,
    priority: job.priority || undefined,
    worker: job.workerName ?? undefined,
  };
  if (!finished) {
    return {
      type: "QueuedJob" as const,
      ...common,
      scheduled_for: job.scheduledFor.toISOString(),
      running: job.status === "running",
    };
  }
  const started = job.startedAt ?? job.createdAt;
  return {
    type: "CompletedJob" as const,
    ...common,
    started_at: started.toISOString(),
    completed_at: job.completedAt?.toISOString(),
    duration_ms: job.completedAt ? job.completedAt.getTime() - started.getTime() : 0,
    success: job.status === "success",
    result: job.result,
    is_skipped: false,
  };
}

const jobCommonShape = {
  workspace_id: z.string(),
  id: z.string(),
  parent_job: z.string().optional(),
  created_by: z.string(),
  created_at: z.string(),
  started_at: z.string().optional(),
  script_path: z.string().optional(),
  script_hash: z.string().optional(),
  args: z.unknown(),
  logs: z.string().optional(),
  raw_code: z.string().optional(),
  canceled: z.boolean(),
  canceled_by: z.string().optional(),
  canceled_reason: z.string().optional(),
  job_kind: z.string(),
  permissioned_as: z.string(),
  is_flow_step: z.boolean(),
  language: z.string().optional(),
  raw_flow: z.unknown().optional(),
  flow_status: z.unknown().optional(),
  flow_step_id: z.string().optional(),
  schedule_path: z.string().optional(),
  trigger_kind: z.string().optional(),
  email: z.string(),
  visible_to_owner: z.boolean(),
  tag: z.string(),
  priority: z.number().optional(),
  worker: z.string().optional(),
};

/** windmill-client's Job: a QueuedJob (queued or running) or a CompletedJob. */
export const windmillJobShape = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("QueuedJob"),
    ...jobCommonShape,
    scheduled_for: z.string(),
    running: z.boolean(),
  }),
  z.object({
    type: z.literal("CompletedJob"),
    ...jobCommonShape,
    started_at: z.string(),
    completed_at: z.string().optional(),
    duration_ms: z.number(),
    success: z.boolean(),
    result: z.unknown(),
    is_skipped: z.boolean(),
  }),
]);
