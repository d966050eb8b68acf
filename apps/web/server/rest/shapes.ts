import type { JobWithLogs } from "@millrace/core";
import type { Job, Script } from "@millrace/db";

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
const JOB_KINDS: Record<string, string> = { script: "script", preview: "preview", noop: "identity" };

function isFlowJob(job: Job): boolean {
  return job.kind === "flow" || job.kind === "flowpreview";
}

function jobKind(job: Job): string {
  return JOB_KINDS[job.kind] ?? job.kind;
}

export function windmillJob(job: JobWithLogs | (Job & { logs?: string })) {
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
    email: job.createdBy,
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
