// What the browser's flow editor and flow run view need besides the store and the engine:
// testing one step alone (its inputs evaluated in the expression sandbox from the editor's test
// input and the last test run's results, then run as a preview job or as its script), and a flow
// run with its step jobs, for the run view's graph.
import { randomInt } from "node:crypto";
import type { Job } from "@millrace/db";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { getJob } from "../jobs/queries.ts";
import { inColumnOrder } from "../jobs/result-columns.ts";
import { runPreview, runScriptByPath, type JobsContext } from "../jobs/run.ts";
import type { Membership } from "../membership.ts";
import { ExpressionError, evaluateTransforms, type ExpressionEnv } from "./expressions.ts";
import { flowModuleSchema, formatPath, type FlowModule } from "./format.ts";
import { getResumeUrls, resumeSuspendedJob } from "./engine/approvals.ts";
import type { FlowState } from "./engine/machine.ts";

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
      resultColumns: true,
    },
  });
  return {
    job,
    steps: steps.map(({ resultColumns, ...step }) => ({
      ...step,
      result: inColumnOrder(step.result, resultColumns),
    })),
  };
}

/** The approval a flow run waits for, as its run page shows it, and what the caller may do. */
export interface FlowApproval {
  /** The job whose resume URLs approve the step (the step's job, or the flow's for an identity step). */
  job: string;
  step: string;
  required: number;
  deadline: string;
  approvers: { approver: string; cancel: boolean }[];
  canApprove: boolean;
  canCancel: boolean;
  /** Why the caller may not approve, as a sentence, when they may not. */
  reason: string | null;
}

/**
 * The suspended step a running flow waits on, with the approvals it has so far and whether the
 * caller may approve or cancel it (the rules resumeSuspendedJob applies: self-approval, groups,
 * hide_cancel). Null when the flow waits for no approval.
 */
export async function flowApproval(
  ctx: JobsContext,
  membership: Membership,
  flow: Pick<Job, "id" | "status" | "createdBy" | "flowStatus">,
): Promise<FlowApproval | null> {
  const suspended = (flow.flowStatus as Partial<FlowState> | null)?._engine?.suspended;
  if (flow.status !== "running" || !suspended) return null;
  const { rows } = await ctx.pool.query<{ approver: string; is_cancel: boolean }>(
    "SELECT approver, is_cancel FROM flow_resume WHERE job_id = $1 AND flow_job_id = $2 ORDER BY created_at, resume_id",
    [suspended.job, flow.id],
  );
  const username = membership.principal.username;
  let reason: string | null = null;
  if (suspended.self_approval_disabled && username === flow.createdBy) {
    reason = "You started this flow, and its approvers must be someone else.";
  } else if (suspended.groups) {
    const member = await ctx.pool.query(
      "SELECT 1 FROM group_member WHERE workspace_id = $1 AND group_name = ANY($2::text[]) AND user_id = $3 LIMIT 1",
      [membership.workspace.id, suspended.groups, membership.principal.userId],
    );
    if (member.rows.length === 0)
      reason = `Only members of ${suspended.groups.join(", ")} may approve this step.`;
  }
  return {
    job: suspended.job,
    step: suspended.step,
    required: suspended.required,
    deadline: suspended.deadline,
    approvers: rows.map((row) => ({ approver: row.approver, cancel: row.is_cancel })),
    canApprove: reason === null,
    canCancel: reason === null && !suspended.hide_cancel,
    reason,
  };
}

/**
 * Approves (or cancels) the step a flow run waits on, as the signed-in caller: the same path as a
 * signed resume URL (getResumeUrls, then resumeSuspendedJob with the caller's membership), so
 * the step's rules and the audit log apply alike.
 */
export async function decideFlowApproval(
  ctx: JobsContext,
  membership: Membership,
  input: { flowJobId: string; cancel: boolean; baseUrl: string; instanceKey: string },
): Promise<string> {
  const { job } = await getFlowRun(ctx, membership, input.flowJobId);
  const approval = await flowApproval(ctx, membership, job);
  if (!approval) throw new AppError("CONFLICT", `flow ${input.flowJobId} is not waiting for an approval`);
  const resumeId = randomInt(1, 2 ** 32);
  const urls = await getResumeUrls(ctx, membership, {
    jobId: approval.job,
    resumeId,
    approver: null,
    baseUrl: input.baseUrl,
    instanceKey: input.instanceKey,
  });
  const signature = new URL(urls.resume).pathname.split("/").pop() ?? "";
  return resumeSuspendedJob(ctx, {
    workspaceId: membership.workspace.id,
    jobId: approval.job,
    resumeId,
    signature,
    approver: null,
    payload: {},
    cancel: input.cancel,
    membership,
    instanceKey: input.instanceKey,
  });
}
