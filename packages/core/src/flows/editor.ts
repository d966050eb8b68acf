// What the browser's flow editor and flow run view need besides the store and the engine:
// testing one step alone (its inputs evaluated in the expression sandbox from the editor's test
// input and the last test run's results, then run as a preview job or as its script), and a flow
// run with its step jobs, for the run view's graph.
import type { Job } from "@millrace/db";
import { invalidInput, notFound } from "../errors.ts";
import { getJob } from "../jobs/queries.ts";
import { runPreview, runScriptByPath, type JobsContext } from "../jobs/run.ts";
import type { Membership } from "../workspaces.ts";
import { ExpressionError, evaluateTransforms, type ExpressionEnv } from "./expressions.ts";
import { flowModuleSchema, formatPath, type FlowModule } from "./format.ts";

export interface TestStepInput {
  /** The step as the editor has it (a FlowModule). */
  module: unknown;
  /** The flow's test input (`flow_input`). */
  flowInput?: Record<string, unknown>;
  /** The earlier steps' results from the last test run (`results.<id>`). */
  results?: Record<string, unknown>;
  previousResult?: unknown;
  /** Inside a loop: the iteration to test with (`flow_input.iter`). */
  iter?: { value: unknown; index: number };
}

/**
 * Runs one step of a flow alone: an inline step as a preview job of its code, a script step as a
 * run of its script, each with the step's inputs evaluated as the flow would. Other kinds of step
 * run other steps and are tested with the whole flow.
 */
export async function testFlowStep(
  ctx: JobsContext,
  membership: Membership,
  input: TestStepInput,
): Promise<{ id: string; args: Record<string, unknown> }> {
  const parsed = flowModuleSchema.safeParse(input.module);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalidInput(`module.${formatPath(issue.path)}`, issue.message);
  }
  const module: FlowModule = parsed.data;
  const value = module.value;
  if (value.type !== "rawscript" && value.type !== "script") {
    throw invalidInput(
      "module.value.type",
      `a ${value.type} step runs other steps: test it with the whole flow`,
    );
  }
  const env: ExpressionEnv = {
    flow_input: input.flowInput ?? {},
    results: input.results ?? {},
    previous_result: input.previousResult ?? null,
    ...(input.iter ? { iter: input.iter } : {}),
  };
  let args: Record<string, unknown>;
  try {
    args = await evaluateTransforms(value.input_transforms ?? {}, env);
  } catch (error) {
    if (error instanceof ExpressionError) {
      throw invalidInput(
        `module.value.input_transforms${error.input ? `.${error.input}` : ""}`,
        `step ${module.id}: ${error.message}`,
      );
    }
    throw error;
  }
  const id =
    value.type === "rawscript"
      ? await runPreview(ctx, membership, { language: value.language, content: value.content, args })
      : await runScriptByPath(ctx, membership, value.path, args);
  return { id, args };
}

/** Step jobs a flow run view reads at most. */
export const MAX_FLOW_RUN_STEPS = 2000;

export type FlowRunStepJob = Pick<
  Job,
  | "id"
  | "status"
  | "flowStepId"
  | "parentJobId"
  | "createdAt"
  | "startedAt"
  | "completedAt"
  | "args"
  | "result"
>;

/** A flow job and the jobs of its steps (nested ones included), oldest first. */
export async function getFlowRun(
  ctx: JobsContext,
  membership: Membership,
  id: string,
): Promise<{ job: Job; steps: FlowRunStepJob[] }> {
  const job = await getJob(ctx, membership, id, { withLogs: false });
  if (job.kind !== "flow" && job.kind !== "flowpreview") throw notFound(`flow run ${id}`);
  const steps = await ctx.db.job.findMany({
    where: { workspaceId: membership.workspace.id, OR: [{ parentJobId: id }, { rootJobId: id }] },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: MAX_FLOW_RUN_STEPS,
    select: {
      id: true,
      status: true,
      flowStepId: true,
      parentJobId: true,
      createdAt: true,
      startedAt: true,
      completedAt: true,
      args: true,
      result: true,
    },
  });
  return { job, steps };
}
