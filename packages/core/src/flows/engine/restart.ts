// Windmill's restartFlowAtStep (jobs/restart/f/{id}): a NEW run of a finished flow run's flow
// value and arguments that starts at a top-level step. The steps before it are not run again:
// their results are taken from the original run and seed the new run's flow_status (the root
// frame's `results` and `previous`, their status entries marked Success with the original step
// jobs), so `results.<id>` and `previous_result` read exactly what the original run produced.
import { AppError, invalidInput, notFound } from "../../errors.ts";
import { getJob, isFinished } from "../../jobs/queries.ts";
import type { JobsContext } from "../../jobs/run.ts";
import { requirePermission } from "../../permissions.ts";
import type { Membership } from "../../membership.ts";
import type { FlowModule, FlowValue } from "../format.ts";
import { getFlow } from "../store.ts";
import { flowSteps } from "../validate.ts";
import { flowVersion } from "../versions.ts";
import { initialState, type FlowState, type StepStatus } from "./machine.ts";
import { startFlow } from "./run.ts";
import { normalizeFlowValue } from "../normalize.ts";

export interface RestartFlowInput {
  step_id: string;
  branch_or_iteration_n?: number | null;
  flow_version?: number | null;
  /** Windmill's restart inside a loop, branch or sub-flow: not supported (refused when not empty). */
  nested_path?: unknown[] | null;
}

type StepJob = { id: string; status: string; result: unknown };

function errorOf(result: unknown): unknown {
  const error = (result as { error?: unknown } | null)?.error;
  return error ?? { name: "Error", message: JSON.stringify(result) };
}

/**
 * The result each top-level step before `index` had in the original run, by step id: from the
 * engine's frames when the run kept them (a failed run) or the results a finished run keeps of
 * its sequential loops and branches, else from the step's job(s) (a step job's result, a
 * sub-flow's or parallel loop's child flow jobs), or from the step itself (skipped: null, mocked:
 * its mock, identity: the result before it). A step whose result the run did not keep (a
 * sequential loop or branch of a run recorded before runs kept them) is refused, naming it.
 */
async function originalResults(
  ctx: JobsContext,
  workspaceId: string,
  jobId: string,
  modules: FlowModule[],
  index: number,
  state: Partial<FlowState> | null,
  args: Record<string, unknown>,
): Promise<{ results: Record<string, unknown>; statuses: StepStatus[] }> {
  const kept: Record<string, unknown> = {};
  for (const frame of state?._engine?.stack ?? []) Object.assign(kept, frame.results ?? {});
  Object.assign(kept, state?._engine?.results ?? {});
  const statusById = new Map((state?.modules ?? []).map((status) => [status.id, status]));
  const wanted = modules.slice(0, index);
  const jobIds = wanted.flatMap((module) => {
    const status = statusById.get(module.id);
    return [...(status?.job ? [status.job] : []), ...(status?.flow_jobs ?? [])];
  });
  const jobs = new Map<string, StepJob>();
  if (jobIds.length > 0) {
    const { rows } = await ctx.pool.query<StepJob>(
      "SELECT id, status, result FROM job WHERE workspace_id = $1 AND id = ANY($2::uuid[])",
      [workspaceId, jobIds],
    );
    for (const row of rows) jobs.set(row.id, row);
  }
  const results: Record<string, unknown> = {};
  const statuses: StepStatus[] = [];
  let previous: unknown = args;
  for (const module of wanted) {
    const status = statusById.get(module.id);
    if (status?.type !== "Success") {
      throw invalidInput(
        "step_id",
        `step ${module.id} did not complete in job ${jobId}: restart at ${module.id} or a step before it`,
      );
    }
    let result: unknown;
    const value = module.value;
    const notKept = () =>
      invalidInput(
        "step_id",
        `job ${jobId} did not keep the result of step ${module.id} (${value.type}): restart at ${module.id} or a step before it`,
      );
    if (module.id in kept) result = kept[module.id];
    else if (status.skipped) result = null;
    else if (module.mock?.enabled) result = module.mock.return_value ?? null;
    else if (value.type === "identity") result = previous;
    else if (value.type === "rawscript" || value.type === "script" || value.type === "flow") {
      const job = status.job ? jobs.get(status.job) : undefined;
      if (!job) throw notKept();
      if (job.status === "success") result = job.result;
      else if (module.continue_on_error) result = { error: errorOf(job.result) };
      else throw notKept();
    } else if (
      (value.type === "forloopflow" || value.type === "branchall") &&
      value.parallel &&
      status.flow_jobs
    ) {
      // Child flow jobs are started in iteration (branch) order.
      result = status.flow_jobs.map((id) => {
        const job = jobs.get(id);
        if (!job) throw notKept();
        return job.status === "success" ? job.result : { error: errorOf(job.result) };
      });
    } else {
      throw notKept();
    }
    results[module.id] = result;
    previous = result;
    statuses.push({ ...status, type: "Success" });
  }
  return { results, statuses };
}

/**
 * Starts a new run of flow run `id` at its top-level step `step_id` (Windmill's restartFlowAtStep):
 * same flow value (or the deployed version `flow_version` of the same path) and arguments; the
 * steps before `step_id` keep the original run's results and are not run again. Only finished,
 * top-level flow runs; a step inside a loop or branch, and a loop iteration or branch
 * (`branch_or_iteration_n` > 0), are refused (400 naming the field). The new run is the caller's,
 * as a run by path (or a preview) would be.
 */
export async function restartFlowAtStep(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  input: RestartFlowInput,
): Promise<string> {
  const original = await getJob(ctx, membership, id, { withLogs: false });
  if (original.kind !== "flow" && original.kind !== "flowpreview") {
    throw invalidInput("id", `job ${id} is not a flow run (it is a ${original.kind} job)`);
  }
  requirePermission(membership, original.kind === "flow" ? "job.run" : "job.preview");
  if (original.parentJobId) {
    throw invalidInput("id", `job ${id} is part of the flow run ${original.parentJobId}: restart that one`);
  }
  if (!isFinished(original)) {
    throw new AppError(
      "INVALID_INPUT",
      `job ${id} is still ${original.status}: only a finished flow run can be restarted`,
      "id",
    );
  }
  const path = original.scriptPath;
  const { principal } = membership;
  if (principal.pathScope && principal.pathScope !== path) {
    throw new AppError("FORBIDDEN", `this token may only run ${principal.pathScope}`);
  }
  // A deployed flow's run: the caller must still be allowed to run that flow.
  if (original.kind === "flow" && path) {
    const flow = await getFlow(ctx, membership, path);
    if (flow.archived) throw notFound(`flow ${path}`);
  }
  let value = original.rawFlow as FlowValue | null;
  let versionId: number | null = original.scriptHash ? Number(original.scriptHash) : null;
  if (input.flow_version !== undefined && input.flow_version !== null) {
    const version = await flowVersion(ctx, membership, String(input.flow_version));
    if (version.path !== path) {
      throw invalidInput(
        "flow_version",
        `flow version ${input.flow_version} is not a version of ${path ?? "this flow"}`,
      );
    }
    value = normalizeFlowValue(version.value);
    versionId = version.version_id;
  }
  if (!value || !Array.isArray(value.modules)) throw invalidInput("id", `job ${id} has no flow value`);

  const index = value.modules.findIndex((module) => module.id === input.step_id);
  if (index < 0) {
    const nested = flowSteps({ summary: "", value }).find((step) => step.module.id === input.step_id);
    const where = nested?.path[1];
    const outer = typeof nested?.path[2] === "number" ? value.modules[nested.path[2]]?.id : undefined;
    throw invalidInput(
      "step_id",
      nested
        ? where === "modules" && outer
          ? `step ${input.step_id} is inside the loop or branch step ${outer}: restarting inside a loop or branch is not supported, restart at ${outer}`
          : `step ${input.step_id} is the flow's ${String(where)}: restart at a top-level step`
        : `the flow has no step ${input.step_id}`,
    );
  }
  if (input.nested_path && input.nested_path.length > 0) {
    throw invalidInput(
      "nested_path",
      `restarting inside step ${input.step_id} (a loop, branch or sub-flow) is not supported: restart at ${input.step_id} itself`,
    );
  }
  if (input.branch_or_iteration_n) {
    throw invalidInput(
      "branch_or_iteration_n",
      `restarting step ${input.step_id} at an iteration or branch is not supported: leave it out to run the whole step again`,
    );
  }

  const args = (original.args ?? {}) as Record<string, unknown>;
  const { results, statuses } = await originalResults(
    ctx,
    membership.workspace.id,
    id,
    value.modules,
    index,
    original.flowStatus as Partial<FlowState> | null,
    args,
  );
  const previous = index === 0 ? args : results[value.modules[index - 1]!.id];
  const state = initialState(value, args, { results, previous });
  state._engine.stack[0]!.index = index;
  state.step = index;
  statuses.forEach((status, i) => (state.modules[i] = status));

  return startFlow(ctx, membership, {
    kind: original.kind,
    path,
    versionId,
    value,
    args,
    state,
    audit: {
      operation: "jobs.restart.flow",
      parameters: { restarted_from: id, step_id: input.step_id },
    },
  });
}
