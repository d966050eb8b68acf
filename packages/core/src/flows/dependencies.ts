// Windmill's jobs/run/flow_dependencies_async: what `wmill generate-metadata` and `wmill flow
// generate-locks` call for a flow folder. The answer is a job id; the job's result is
// `{ updated_flow_value }`: the flow value with each inline (rawscript) step's `lock` filled,
// nested steps (loop bodies, branches) and the failure and preprocessor modules included. Each
// step gets the lock a script of its language and code would get (jobs/run/dependencies_async):
// the worker's resolution of its requirements, or "" when it declares none.
import { RequirementsError } from "@millrace/runtime";
import { DEPENDENCY_TAG } from "../dependencies/index.ts";
import { checkRequirements } from "../dependencies/locks.ts";
import { AppError, invalidInput } from "../errors.ts";
import { enqueueJob, type EnqueueInput } from "../jobs/enqueue.ts";
import { jobBounds, MAX_ARGS_BYTES, type JobsContext } from "../jobs/run.ts";
import { parsePath } from "../paths.ts";
import { requirePermission } from "../permissions.ts";
import { MAX_SCRIPT_BYTES } from "../scripts.ts";
import type { Membership } from "../membership.ts";
import { formatPath, parseOpenFlow, type FlowValue, type RawScript } from "./format.ts";
import { flowSteps } from "./validate.ts";

/** The job kind that computes a flow's locks (Windmill's `flowdependencies`). */
export const FLOW_DEPENDENCIES_KIND = "flowdependencies";

export interface FlowDependenciesInput {
  flow_value: unknown;
  path: string;
}

/** One inline step of a flow value, as the same object (setting its `lock` updates the value). */
export interface InlineStep {
  id: string;
  /** Where it is, e.g. `modules[1].value.modules[0]`. */
  at: string;
  value: RawScript;
}

/**
 * Every rawscript step of a flow value (one that parseOpenFlow accepts), nested ones included,
 * in document order.
 */
export function inlineSteps(value: FlowValue): InlineStep[] {
  return flowSteps({ summary: "", value })
    .filter((step) => step.module.value.type === "rawscript")
    .map((step) => ({
      id: step.module.id,
      at: formatPath(step.path.slice(1)),
      value: step.module.value as RawScript,
    }));
}

/**
 * Starts the job that locks a flow's inline steps. When no step declares requirements, the
 * job is a `noop` one whose result is already the answer (every lock ""); otherwise a
 * `flowdependencies` job that a worker of the dependency tag runs (apps/worker
 * job-flow-dependencies.ts). Computing locks installs packages: allowed to those who may preview.
 */
export async function runFlowDependencies(
  ctx: JobsContext,
  membership: Membership,
  input: FlowDependenciesInput,
): Promise<string> {
  requirePermission(membership, "job.preview");
  try {
    parsePath(input.path);
  } catch {
    throw invalidInput("path", "must be a path such as u/<user>/<name> or f/<folder>/<name>");
  }
  if (JSON.stringify(input.flow_value ?? null).length > MAX_ARGS_BYTES) {
    throw invalidInput("flow_value", `larger than ${MAX_ARGS_BYTES / 1024 / 1024} MB`);
  }
  try {
    parseOpenFlow({ summary: "", value: input.flow_value });
  } catch (error) {
    if (error instanceof AppError && error.field) {
      throw invalidInput(error.field.replace(/^value/, "flow_value"), error.message);
    }
    throw error;
  }
  // The value as sent (fields Millrace does not know pass through), which parseOpenFlow accepted.
  const value = structuredClone(input.flow_value) as FlowValue;
  let needsWorker = false;
  for (const step of inlineSteps(value)) {
    const field = `flow_value.${step.at}.value.content`;
    if (Buffer.byteLength(step.value.content) > MAX_SCRIPT_BYTES) {
      throw invalidInput(field, `Step ${step.id}: at most ${MAX_SCRIPT_BYTES / 1024} KiB`);
    }
    try {
      if (checkRequirements(step.value.language, step.value.content)) needsWorker = true;
    } catch (error) {
      if (error instanceof AppError || error instanceof RequirementsError) {
        throw invalidInput(field, `Step ${step.id}: ${error.message}`);
      }
      throw error;
    }
    step.value.lock = "";
  }
  const { principal } = membership;
  const workspaceId = membership.workspace.id;
  const job: EnqueueInput = {
    workspaceId,
    kind: needsWorker ? FLOW_DEPENDENCIES_KIND : "noop",
    scriptPath: input.path,
    scriptHash: null,
    // A flow's job has no language of its own (as a flow run's).
    language: "flow" as EnqueueInput["language"],
    content: "",
    args: needsWorker ? { flow_value: input.flow_value } : { updated_flow_value: value },
    argOrder: [],
    tag: DEPENDENCY_TAG,
    priority: 100,
    scheduledFor: null,
    timeoutSecs: Math.min(ctx.limits.defaultTimeoutSecs, ctx.limits.maxTimeoutSecs),
    memoryLimitMb: null,
    concurrency: null,
    retry: null,
    createdBy: principal.username,
    permissionedAs: `u/${principal.username}`,
    boundedBy: jobBounds(principal, null),
    audit: {
      actor: principal,
      entry: {
        workspaceId,
        operation: "jobs.run.flow_dependencies",
        resource: input.path,
        parameters: { steps: inlineSteps(value).length },
      },
    },
  };
  return enqueueJob(ctx.pool, ctx.boss, job);
}
