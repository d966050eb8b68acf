// The flow engine's state machine. A flow job holds its progress in `flow_status` (a stack of
// frames, one per step list being run: the flow's own steps, a branch, a loop iteration) and
// advances, inside the caller's transaction, from one step job to the next: it records the
// finished step's result, evaluates what comes next (skip_if, input transforms, branch
// conditions, loop iterators, stop_after_if) and returns the one step job to enqueue, or the
// flow's outcome. It runs no code of its own and touches no database: `lookUpScript` is how it
// reads deployed scripts, so the caller decides in which transaction.
//
// Parallel loops and branches, and sub-flows, run as CHILD FLOW JOBS: the frame that reaches a
// `forloopflow`/`branchall` with `parallel: true`, or a `flow` step, keeps the machine's
// sequential stack as it is and records in `frame.children` the child flow jobs it waits for
// (job id → iteration/branch index), the next index not yet started and the results so far. A
// child flow job (kind flow, parent_job_id = this flow job) runs the loop body / branch / deployed
// flow with its own FlowMachine, seeded with this flow's `results`, `previous_result`, flow_input
// and `iter`; when it finishes, the transaction that finishes it advances this flow (run.ts
// `finish` → advanceFlows), exactly as a step job's completion does. At most `parallelism`
// children run at once; the others start as running ones finish. Results are kept by index, so
// they come back in iteration (branch) order whatever order the children finish in. A failed
// child is that iteration's result (`{ error }`) under skip_failures (skip_failure for a
// branch); otherwise the children still running are canceled and the error goes on as a
// step's error would. Everything else (sequential loops and branches) stays on the stack:
// a sequential loop costs no extra job.
import type { Language } from "@millrace/runtime";
import { ArgsError, inferSchema, validateArgs, type ArgSchema } from "@millrace/runtime";
import type { RetryPolicy } from "../../jobs/enqueue.ts";
import { chooseBranch, evaluateCondition, evaluateIterator, evaluateTransform } from "../conditions.ts";
import { ExpressionError, evaluateTransforms, type ExpressionEnv } from "../expressions.ts";
import type { FlowModule, FlowValue, InputTransform, Retry } from "../format.ts";
import { HUB_UNAVAILABLE, isHubPath } from "../validate.ts";

/** Windmill's FlowStatusModule, loosely: what the run pages show of each top-level step. */
export interface StepStatus {
  id: string;
  type: "WaitingForPriorSteps" | "InProgress" | "WaitingForEvents" | "Success" | "Failure";
  /** A suspended step: approvals received so far. */
  count?: number;
  job?: string;
  flow_jobs?: string[];
  iterator?: { index: number; itered_len: number };
  branch_chosen?: { type: "branch" | "default"; branch?: number };
  branchall?: { branch: number; len: number };
  skipped?: boolean;
}

type ListPath = (string | number)[];

interface Loop {
  kind: "branchone" | "branchall" | "forloop" | "whileloop";
  /** Iteration or branch number. */
  index: number;
  /** For-loop items. */
  items?: unknown[];
  /** Per-iteration (per-branch) results so far. */
  collected: unknown[];
}

/** The child flow jobs a frame waits for (parallel loop or branchall, sub-flow). */
interface Children {
  kind: "forloop" | "branchall" | "subflow";
  total: number;
  /** The next iteration (branch) not started yet. */
  next: number;
  /** Most children running at once. */
  parallelism: number;
  /** Child flow job id → its iteration (branch) index. */
  running: Record<string, number>;
  /** Results by index. */
  results: unknown[];
  done: number;
  /** For-loop items. */
  items?: unknown[];
  /** A sub-flow: the deployed flow's value, path and version, and its arguments. */
  subflow?: { value: FlowValue; path: string; versionId: number | null; args: Record<string, unknown> };
}

interface Frame {
  /** Where this frame's step list is in the flow value, e.g. ["modules"], ["failure_module"]. */
  path: ListPath;
  index: number;
  results: Record<string, unknown>;
  previous: unknown;
  iter?: { value: unknown; index: number };
  /** Set on a frame run for a branch or loop step of the frame below it. */
  loop?: Loop;
  /** Set while the step at `index` waits for child flow jobs. */
  children?: Children;
}

/** flow_status: Windmill's public fields plus the engine's own (`_engine`). */
export interface FlowState {
  step: number;
  modules: StepStatus[];
  failure_module: StepStatus & { parent_module?: string };
  /** Set when the run started with its preprocessor (a REST/webhook trigger). */
  preprocessor_module?: StepStatus;
  _engine: {
    stack: Frame[];
    /** The step job the flow waits for. */
    waiting: string | null;
    waiting_step: string | null;
    in_failure: boolean;
    /** The error that sent the flow to its failure step. */
    error?: unknown;
    /**
     * Once the run is over: the results of its top-level steps that have no job of their own
     * (sequential loops and branches), which a restart (restart.ts) cannot read from a job.
     */
    results?: Record<string, unknown>;
    /** A step's `sleep`: the next step job (or child flow) starts no earlier (ISO time). */
    sleep_until?: string;
    /** A step with `suspend` ended: the flow waits for its approvals (approvals.ts). */
    suspended?: Suspension;
    /** The approvals of the last suspended step: `resume`, `resumes`, `approvers` in expressions. */
    resume?: { resume: unknown; resumes: unknown[]; approvers: string[] };
    /** The trigger's event while the preprocessor runs (see TriggerEvent). */
    preprocess?: { event: TriggerEvent };
    /** What the preprocessor returned: the flow's arguments from then on (`flow_input`). */
    flow_input?: Record<string, unknown>;
  };
  /** `early_return`: the named step's result, recorded when it finished (run_wait_result answers it). */
  early_return?: { step: string; result: unknown };
}

/** A suspended step: what its approvals must satisfy, and its result until they arrive. */
export interface Suspension {
  /** The step job whose resume URLs approve it. */
  job: string;
  step: string;
  required: number;
  /** ISO time after which the sweeper times it out. */
  deadline: string;
  timeout: number;
  result: unknown;
  user_auth_required: boolean;
  self_approval_disabled: boolean;
  /** user_groups_required, evaluated when the step ended; null: any approver. */
  groups: string[] | null;
  continue_on_disapprove_timeout: boolean;
  hide_cancel: boolean;
}

/** An approval event of a suspended step (a row of flow_resume). */
export interface ResumeEvent {
  approver: string;
  value: unknown;
  cancel: boolean;
}

/**
 * What started a run whose flow has a preprocessor_module, in Windmill's shape (its docs'
 * preprocessor `event`): `{ kind: "webhook", body, raw_string, query, headers }`.
 */
export type TriggerEvent = { kind: string; body?: unknown; [key: string]: unknown };

/** Windmill's default approval timeout: 30 minutes. */
export const DEFAULT_SUSPEND_TIMEOUT_SECS = 1800;

/** What a child flow starts with: its parent's results, previous result and loop iteration. */
export interface FlowSeed {
  results: Record<string, unknown>;
  previous: unknown;
  iter?: { value: unknown; index: number };
}

/** A child flow job to start: a parallel iteration or branch, or a sub-flow. */
export interface ChildFlowRequest {
  stepId: string;
  index: number;
  value: FlowValue;
  args: Record<string, unknown>;
  /** A sub-flow: the deployed flow's path and version. */
  path: string | null;
  versionId: number | null;
  seed: FlowSeed | null;
  priority: number | null;
}

export interface StepJobRequest {
  stepId: string;
  kind: "script" | "flowscript";
  language: Language;
  content: string;
  args: Record<string, unknown>;
  argOrder: string[];
  /** Null: the language's default tag. */
  tag: string | null;
  scriptPath: string | null;
  scriptHash: string | null;
  retry: RetryPolicy | null;
  priority: number | null;
  timeoutSecs: number | null;
  memoryLimitMb: number | null;
  /** For a script step: the deployer of the version (bounds the job's rights). */
  author: string | null;
  lock: string | null | undefined;
  /** A rawscript step's own concurrency limit (Windmill's concurrent_limit / custom_concurrency_key). */
  concurrency: { key: string | null; limit: number; windowSecs: number } | null;
  /** The previous step's `sleep`: the job starts no earlier. */
  scheduledFor: Date | null;
}

export type Outcome = { status: "success" | "failure" | "canceled"; result: unknown };

export type Action =
  | { kind: "enqueue"; job: StepJobRequest }
  | { kind: "spawn"; flows: ChildFlowRequest[]; scheduledFor: Date | null }
  /** Children are still running: nothing to start, flow_status to save. */
  | { kind: "wait" }
  | { kind: "finish"; outcome: Outcome };

export interface DeployedScript {
  path: string;
  hash: string;
  language: string;
  content: string;
  tag: string | null;
  retry: unknown;
  priority: number | null;
  timeoutSecs: number | null;
  memoryLimitMb: number | null;
  createdBy: string;
  schema: { order?: string[] } | null;
  concurrentLimit?: number | null;
  concurrencyKey?: string | null;
  concurrencyTimeWindowS?: number | null;
}

export interface DeployedFlow {
  path: string;
  versionId: number | null;
  value: FlowValue;
  schema: Record<string, unknown> | null;
}

export interface MachineDeps {
  lookUpScript(path: string, hash: string | undefined): Promise<DeployedScript | null>;
  lookUpFlow?(path: string): Promise<DeployedFlow | null>;
  /** The approval events recorded so far for a step job (flow_resume). */
  resumeEvents?(jobId: string): Promise<ResumeEvent[]>;
  /** The flow job's own id: the job a suspended identity step's resume URLs name. */
  flowJobId?: string;
}

/** Iterations a while loop may run before the flow fails (a loop that never stops). */
export const MAX_WHILE_ITERATIONS = 1000;

export function initialState(
  value: FlowValue,
  args: Record<string, unknown>,
  seed: FlowSeed | null = null,
  sleepUntil: Date | null = null,
  event: TriggerEvent | null = null,
): FlowState {
  // Windmill runs the preprocessor only for runs a trigger (webhook, HTTP) started, before the
  // first step: what it returns becomes the flow's arguments.
  const preprocess = event !== null && seed === null && value.preprocessor_module !== undefined;
  const root: Frame = preprocess
    ? { path: ["preprocessor_module"], index: 0, results: {}, previous: args }
    : seed
      ? {
          path: ["modules"],
          index: 0,
          results: { ...seed.results },
          previous: seed.previous,
          ...(seed.iter ? { iter: seed.iter } : {}),
        }
      : { path: ["modules"], index: 0, results: {}, previous: args };
  return {
    step: 0,
    modules: value.modules.map((module) => ({ id: module.id, type: "WaitingForPriorSteps" })),
    failure_module: { id: value.failure_module?.id ?? "failure", type: "WaitingForPriorSteps" },
    ...(preprocess
      ? { preprocessor_module: { id: value.preprocessor_module!.id, type: "WaitingForPriorSteps" } }
      : {}),
    _engine: {
      stack: [root],
      waiting: null,
      waiting_step: null,
      in_failure: false,
      ...(sleepUntil ? { sleep_until: sleepUntil.toISOString() } : {}),
      ...(preprocess ? { preprocess: { event: event! } } : {}),
    },
  };
}

class StepFailure extends Error {
  readonly error: { name: string; message: string; [key: string]: unknown };
  constructor(error: { name: string; message: string; [key: string]: unknown }) {
    super(error.message);
    this.error = error;
  }
}

function moduleList(value: FlowValue, path: ListPath): FlowModule[] {
  if (path[0] === "failure_module") return value.failure_module ? [value.failure_module] : [];
  if (path[0] === "preprocessor_module") return value.preprocessor_module ? [value.preprocessor_module] : [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let node: any = value;
  for (const key of path) node = node?.[key];
  return Array.isArray(node) ? node : [];
}

/** Windmill's retry (attempts and seconds optional) as the job retry policy. */
function retryPolicy(retry: Retry | undefined): RetryPolicy | null {
  if (!retry) return null;
  const policy: RetryPolicy = {};
  if (retry.constant?.attempts) {
    policy.constant = { attempts: retry.constant.attempts, seconds: retry.constant.seconds ?? 0 };
  }
  if (retry.exponential?.attempts) {
    policy.exponential = {
      attempts: retry.exponential.attempts,
      multiplier: retry.exponential.multiplier ?? 1,
      seconds: retry.exponential.seconds ?? 1,
      ...(retry.exponential.random_factor ? { random_factor: retry.exponential.random_factor } : {}),
    };
  }
  return policy.constant || policy.exponential ? policy : null;
}

function errorOf(result: unknown): { name: string; message: string; [key: string]: unknown } {
  const error = (result as { error?: { name?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error === "object") {
    return {
      ...(error as object),
      name: typeof error.name === "string" ? error.name : "Error",
      message: typeof error.message === "string" ? error.message : JSON.stringify(error),
    };
  }
  return { name: "Error", message: JSON.stringify(result) };
}

function argOrderFor(language: Language, content: string, args: Record<string, unknown>): string[] {
  try {
    const order = inferSchema(language, content).order;
    return [...order, ...Object.keys(args).filter((name) => !order.includes(name))];
  } catch {
    return Object.keys(args);
  }
}

/** A script's `preprocessor` function renamed `main` (when it has no `main` of its own). */
function asMain(language: Language, content: string): string {
  if (language === "python3") {
    return /^def\s+main\s*\(/m.test(content)
      ? content
      : content.replace(/^def\s+preprocessor\s*\(/m, "def main(");
  }
  if (language === "bun" || language === "deno") {
    return /\bfunction\s+main\s*\(/.test(content)
      ? content
      : content.replace(/\bfunction\s+preprocessor\s*\(/, "function main(");
  }
  return content;
}

export class FlowMachine {
  readonly state: FlowState;
  private readonly value: FlowValue;
  private readonly flowInput: Record<string, unknown>;
  private readonly deps: MachineDeps;
  /** Child flow jobs to cancel (a parallel sibling failed): the caller cancels them. */
  readonly cancelJobs: string[] = [];
  /** Set when the step named by `early_return` just finished (the caller tells the waiters). */
  earlyReturned = false;

  constructor(state: FlowState, value: FlowValue, flowInput: Record<string, unknown>, deps: MachineDeps) {
    this.state = state;
    this.value = value;
    this.flowInput = flowInput;
    this.deps = deps;
  }

  private get stack(): Frame[] {
    return this.state._engine.stack;
  }

  private env(extra: Partial<ExpressionEnv> = {}): ExpressionEnv {
    const results: Record<string, unknown> = {};
    let iter: Frame["iter"];
    for (const frame of this.stack) {
      Object.assign(results, frame.results);
      if (frame.iter) iter = frame.iter;
    }
    const top = this.stack[this.stack.length - 1];
    const engine = this.state._engine;
    const resume = engine.resume;
    return {
      flow_input: this.input,
      results,
      previous_result: top?.previous ?? null,
      ...(iter ? { iter } : {}),
      // The failure module reads the error as Windmill's does: `error.message`, `error.step_id`.
      ...(engine.in_failure && engine.error !== undefined ? { error: engine.error } : {}),
      ...(resume ? { resume: resume.resume, resumes: resume.resumes, approvers: resume.approvers } : {}),
      ...extra,
    };
  }

  /** The flow's arguments: what its preprocessor returned, when it ran one. */
  private get input(): Record<string, unknown> {
    return this.state._engine.flow_input ?? this.flowInput;
  }

  /** The status entry of the top-level step the flow is in, if any. */
  private topStatus(): StepStatus | undefined {
    if (this.state._engine.in_failure) return this.state.failure_module;
    const root = this.stack[0];
    if (root?.path[0] === "preprocessor_module") return this.state.preprocessor_module;
    return root ? this.state.modules[root.index] : undefined;
  }

  /** Starts the flow: the first step job to run, or the outcome when no step needs a job. */
  async start(): Promise<Action> {
    return this.run();
  }

  /** A step job ended: records it and moves on. */
  async stepDone(jobId: string, outcome: { status: string; result: unknown }): Promise<Action | null> {
    const engine = this.state._engine;
    const top = this.stack[this.stack.length - 1];
    if (top?.children && jobId in top.children.running) return this.childDone(top, jobId, outcome);
    if (engine.waiting !== jobId) return null;
    engine.waiting = null;
    engine.waiting_step = null;
    const frame = this.stack[this.stack.length - 1]!;
    const module = moduleList(this.value, frame.path)[frame.index]!;
    if (outcome.status === "success") {
      try {
        const required = module.suspend ? (module.suspend.required_events ?? 1) : 0;
        if (required > 0) return await this.suspend(frame, module, jobId, outcome.result, required);
        const stop = await this.completeStep(frame, module, outcome.result);
        if (stop) return stop;
      } catch (error) {
        const failed = this.failure(error, module);
        if (failed) return failed;
      }
    } else {
      const failed = this.failStep(frame, module, { ...errorOf(outcome.result) });
      if (failed) return failed;
    }
    return this.run();
  }

  private failure(error: unknown, module: FlowModule): Action | null {
    if (error instanceof StepFailure) return this.propagate({ ...error.error, step_id: module.id });
    if (error instanceof ExpressionError) {
      return this.propagate({ name: "ExpressionError", message: error.message, step_id: module.id });
    }
    throw error;
  }

  /** Runs steps that need no job until one does, or the flow is over. */
  private async run(): Promise<Action> {
    for (;;) {
      const frame = this.stack[this.stack.length - 1];
      if (!frame) throw new Error("flow engine: empty stack");
      const list = moduleList(this.value, frame.path);
      if (frame.index >= list.length) {
        const finished = await this.frameDone(frame);
        if (finished) return finished;
        continue;
      }
      const module = list[frame.index]!;
      try {
        const action = await this.enterStep(frame, module);
        if (action) return action;
      } catch (error) {
        const failed = this.failure(error, module);
        if (failed) return failed;
      }
    }
  }

  /** A frame's steps are all done: pops it and completes its branch or loop iteration. */
  private async frameDone(frame: Frame): Promise<Action | null> {
    const engine = this.state._engine;
    const result = frame.previous;
    this.stack.pop();
    const parent = this.stack[this.stack.length - 1];
    if (!parent && frame.path[0] === "preprocessor_module" && !engine.in_failure) {
      return this.preprocessed(frame, result);
    }
    if (!parent) {
      const kept = this.value.modules.filter(
        (module) =>
          module.id in frame.results &&
          (module.value.type === "whileloopflow" ||
            module.value.type === "branchone" ||
            ((module.value.type === "forloopflow" || module.value.type === "branchall") &&
              !module.value.parallel)),
      );
      if (kept.length > 0) {
        engine.results = Object.fromEntries(kept.map((module) => [module.id, frame.results[module.id]]));
      }
      if (engine.in_failure) {
        this.state.failure_module.type = "Success";
        return { kind: "finish", outcome: { status: "failure", result } };
      }
      return { kind: "finish", outcome: { status: "success", result } };
    }
    const module = moduleList(this.value, parent.path)[parent.index]!;
    try {
      return await this.iterationDone(parent, module, frame, result);
    } catch (error) {
      return this.failure(error, module);
    }
  }

  /** The preprocessor returned the flow's arguments: the steps start from them. */
  private preprocessed(frame: Frame, result: unknown): Action | null {
    const engine = this.state._engine;
    const id = this.value.preprocessor_module?.id ?? "preprocessor";
    if (typeof result !== "object" || result === null || Array.isArray(result)) {
      this.stack.push(frame);
      return this.propagate({
        name: "PreprocessorError",
        message: `the preprocessor returned ${JSON.stringify(result)}, not an object of the flow's arguments`,
        step_id: id,
      });
    }
    delete engine.preprocess;
    engine.flow_input = result as Record<string, unknown>;
    this.state.step = 0;
    this.stack.push({ path: ["modules"], index: 0, results: {}, previous: result });
    return null;
  }

  private async iterationDone(
    parent: Frame,
    module: FlowModule,
    frame: Frame,
    result: unknown,
  ): Promise<Action | null> {
    const loop = frame.loop!;
    const value = module.value;
    const status = this.stack.length === 1 ? this.topStatus() : undefined;
    switch (loop.kind) {
      case "branchone":
        return this.completeStep(parent, module, result);
      case "branchall": {
        loop.collected.push(result);
        const branches = value.type === "branchall" ? value.branches.length : 0;
        if (loop.index + 1 < branches) {
          this.pushFrame(
            parent,
            [...parent.path, parent.index, "value", "branches", loop.index + 1, "modules"],
            {
              ...loop,
              index: loop.index + 1,
            },
          );
          if (status) status.branchall = { branch: loop.index + 1, len: branches };
          return null;
        }
        return this.completeStep(parent, module, loop.collected);
      }
      case "forloop":
      case "whileloop": {
        loop.collected.push(result);
        // A loop step's stop_after_if is looked at after each iteration: it ends the loop.
        if (module.stop_after_if) {
          const stop = await evaluateCondition(
            module.stop_after_if.expr,
            this.env({ result, results: { ...this.env().results, [module.id]: result } }),
          );
          if (stop) return this.completeStep(parent, module, loop.collected, true);
        }
        const next = loop.index + 1;
        const more = loop.kind === "forloop" ? next < loop.items!.length : true;
        if (loop.kind === "whileloop" && next >= MAX_WHILE_ITERATIONS) {
          throw new StepFailure({
            name: "LoopError",
            message: `the while loop ran ${MAX_WHILE_ITERATIONS} iterations without stopping`,
          });
        }
        if (!more) return this.completeStep(parent, module, loop.collected, true);
        const iter = { value: loop.kind === "forloop" ? loop.items![next] : next, index: next };
        this.pushFrame(
          parent,
          [...parent.path, parent.index, "value", "modules"],
          { ...loop, index: next },
          iter,
        );
        if (status) status.iterator = { index: next, itered_len: loop.items?.length ?? next + 1 };
        return null;
      }
    }
  }

  private pushFrame(parent: Frame, path: ListPath, loop: Loop, iter?: Frame["iter"]): void {
    this.stack.push({
      path,
      index: 0,
      results: {},
      previous: parent.previous,
      loop,
      ...(iter ? { iter } : {}),
    });
  }

  /**
   * Records a step's result and moves past it; the flow's outcome when its stop_after_if holds.
   * `loopChecked`: a loop's stop_after_if was already applied per iteration.
   */
  private async completeStep(
    frame: Frame,
    module: FlowModule,
    result: unknown,
    loopChecked = false,
  ): Promise<Action | null> {
    const status = this.stack.length === 1 && frame === this.stack[0] ? this.topStatus() : undefined;
    frame.results[module.id] = result;
    frame.previous = result;
    frame.index += 1;
    if (status) {
      status.type = "Success";
      if (!this.state._engine.in_failure) this.state.step = frame.index;
    }
    if (
      this.value.early_return === module.id &&
      frame === this.stack[0] &&
      !this.state._engine.in_failure &&
      !this.state.early_return
    ) {
      this.state.early_return = { step: module.id, result };
      this.earlyReturned = true;
    }
    if (module.sleep) await this.sleepAfter(module, result);
    const stopIf = loopChecked ? module.stop_after_all_iters_if : module.stop_after_if;
    if (stopIf && !this.state._engine.in_failure) {
      const stop = await evaluateCondition(stopIf.expr, this.env({ result }));
      if (stop) {
        if (stopIf.error_message) {
          return {
            kind: "finish",
            outcome: {
              status: "failure",
              result: {
                error: {
                  name: "StopAfterIf",
                  message: stopIf.error_message,
                  step_id: module.id,
                  ...(stopIf.error_include_result ? { result } : {}),
                },
              },
            },
          };
        }
        return { kind: "finish", outcome: { status: "success", result } };
      }
    }
    return null;
  }

  /** A step failed (its job, after its retries, or one of its expressions). */
  private failStep(
    frame: Frame,
    module: FlowModule,
    error: { name: string; message: string },
  ): Action | null {
    if (module.continue_on_error) {
      const status = this.stack.length === 1 ? this.topStatus() : undefined;
      frame.results[module.id] = { error };
      frame.previous = { error };
      frame.index += 1;
      if (status) {
        status.type = "Success";
        if (!this.state._engine.in_failure) this.state.step = frame.index;
      }
      return null;
    }
    return this.propagate({ ...error, step_id: module.id });
  }

  /**
   * An error leaves the step that raised it: a loop with skip_failures or a branch with
   * skip_failure takes it as that iteration's result; otherwise the flow fails, through its
   * failure step when it has one.
   */
  private propagate(error: {
    name: string;
    message: string;
    step_id: string;
    [key: string]: unknown;
  }): Action | null {
    for (let depth = this.stack.length - 1; depth > 0; depth--) {
      const frame = this.stack[depth]!;
      const parent = this.stack[depth - 1]!;
      const container = moduleList(this.value, parent.path)[parent.index]!;
      const value = container.value;
      const skips =
        ((value.type === "forloopflow" || value.type === "whileloopflow") && value.skip_failures) ||
        (value.type === "branchall" && value.branches[frame.loop!.index]?.skip_failure);
      if (skips) {
        this.stack.length = depth + 1;
        frame.index = Number.MAX_SAFE_INTEGER;
        frame.previous = { error };
        return null;
      }
    }
    const engine = this.state._engine;
    const status = this.topStatus();
    if (status) status.type = "Failure";
    if (this.value.failure_module && !engine.in_failure) {
      const results: Record<string, unknown> = {};
      for (const frame of this.stack) Object.assign(results, frame.results);
      engine.in_failure = true;
      engine.error = error;
      this.state.failure_module = {
        id: this.value.failure_module.id,
        type: "InProgress",
        parent_module: error.step_id,
      };
      this.stack.length = 0;
      // `previous_result` is the failed step's result, `{ error }` as Windmill gives it; the error's
      // own fields stay on it too, as Millrace gave them before.
      this.stack.push({ path: ["failure_module"], index: 0, results, previous: { ...error, error } });
      return null;
    }
    if (engine.in_failure) {
      this.state.failure_module.type = "Failure";
      return { kind: "finish", outcome: { status: "failure", result: { error } } };
    }
    return { kind: "finish", outcome: { status: "failure", result: { error } } };
  }

  /** Starts a step: a job to enqueue, or null when it was done at once (or opened a frame). */
  private async enterStep(frame: Frame, module: FlowModule): Promise<Action | null> {
    const status = this.stack.length === 1 ? this.topStatus() : undefined;
    if (module.skip_if && (await evaluateCondition(module.skip_if.expr, this.env()))) {
      frame.results[module.id] = null;
      frame.index += 1;
      if (status) {
        status.type = "Success";
        status.skipped = true;
        if (!this.state._engine.in_failure) this.state.step = frame.index;
      }
      return null;
    }
    if (status) status.type = "InProgress";
    // A mocked step returns its mock without running.
    if (module.mock?.enabled) return this.completeStep(frame, module, module.mock.return_value ?? null);
    const value = module.value;
    switch (value.type) {
      case "identity": {
        // An identity step with `suspend` is an approval step of its own: it has no job, so its
        // resume URLs name the flow job.
        const required = module.suspend ? (module.suspend.required_events ?? 1) : 0;
        if (required > 0 && this.deps.flowJobId) {
          return this.suspend(frame, module, this.deps.flowJobId, frame.previous, required);
        }
        return this.completeStep(frame, module, frame.previous);
      }
      case "rawscript": {
        const language = value.language as Language;
        const { args, content } = this.preprocessorCall(
          frame,
          language,
          value.content,
          await evaluateTransforms(value.input_transforms, this.env()),
        );
        const timeoutSecs = await this.stepTimeout(module);
        return this.enqueue(module, {
          stepId: module.id,
          kind: "flowscript",
          language,
          content,
          args,
          argOrder: argOrderFor(language, content, args),
          tag: value.tag || null,
          scriptPath: value.path ?? null,
          scriptHash: null,
          retry: retryPolicy(module.retry),
          priority: module.priority ?? null,
          timeoutSecs,
          memoryLimitMb: null,
          author: null,
          lock: value.lock ?? null,
          concurrency: value.concurrent_limit
            ? {
                key: value.custom_concurrency_key ?? null,
                limit: value.concurrent_limit,
                windowSecs: value.concurrency_time_window_s ?? 0,
              }
            : null,
          scheduledFor: this.takeSleep(),
        });
      }
      case "script": {
        if (isHubPath(value.path)) {
          throw new StepFailure({ name: "HubUnavailable", message: `${HUB_UNAVAILABLE} (${value.path})` });
        }
        const script = await this.deps.lookUpScript(value.path, value.hash);
        if (!script) {
          throw new StepFailure({
            name: "NotFound",
            message: `script ${value.path}${value.hash ? ` (version ${value.hash})` : ""} not found`,
          });
        }
        const language = script.language as Language;
        const { args, content } = this.preprocessorCall(
          frame,
          language,
          script.content,
          await evaluateTransforms(value.input_transforms, this.env()),
        );
        const order =
          content === script.content
            ? (script.schema?.order ?? argOrderFor(language, content, args))
            : argOrderFor(language, content, args);
        return this.enqueue(module, {
          stepId: module.id,
          kind: "script",
          language,
          content,
          args,
          argOrder: [...order, ...Object.keys(args).filter((name) => !order.includes(name))],
          tag: value.tag_override || script.tag || null,
          scriptPath: script.path,
          scriptHash: script.hash,
          retry: retryPolicy(module.retry) ?? (script.retry as RetryPolicy | null) ?? null,
          priority: module.priority ?? script.priority ?? null,
          timeoutSecs: (await this.stepTimeout(module)) ?? script.timeoutSecs,
          memoryLimitMb: script.memoryLimitMb,
          author: script.createdBy,
          lock: undefined,
          concurrency: script.concurrentLimit
            ? {
                key: script.concurrencyKey ?? script.path,
                limit: script.concurrentLimit,
                windowSecs: script.concurrencyTimeWindowS ?? 0,
              }
            : null,
          scheduledFor: this.takeSleep(),
        });
      }
      case "flow": {
        const flow = this.deps.lookUpFlow ? await this.deps.lookUpFlow(value.path) : null;
        if (!flow) throw new StepFailure({ name: "NotFound", message: `flow ${value.path} not found` });
        let args = await evaluateTransforms(value.input_transforms, this.env());
        // The sub-flow's own input schema, as a run of it by path would check it.
        const schema = flow.schema as ArgSchema | null;
        if (schema && typeof schema.properties === "object" && schema.properties !== null) {
          try {
            args = { ...args, ...validateArgs(schema, args) };
          } catch (error) {
            if (!(error instanceof ArgsError)) throw error;
            throw new StepFailure({
              name: "InvalidArgs",
              message: `flow ${flow.path}: ${error.message}`,
              field: `args.${error.field}`,
            });
          }
        }
        return this.startChildren(frame, module, {
          kind: "subflow",
          total: 1,
          parallelism: 1,
          subflow: { value: flow.value, path: flow.path, versionId: flow.versionId, args },
        });
      }
      case "branchone": {
        const chosen = await chooseBranch(value.branches, this.env());
        if (status) {
          status.branch_chosen = chosen < 0 ? { type: "default" } : { type: "branch", branch: chosen };
        }
        const path =
          chosen < 0
            ? [...frame.path, frame.index, "value", "default"]
            : [...frame.path, frame.index, "value", "branches", chosen, "modules"];
        this.pushFrame(frame, path, { kind: "branchone", index: chosen, collected: [] });
        return null;
      }
      case "branchall": {
        if (value.branches.length === 0) return this.completeStep(frame, module, []);
        if (value.parallel) {
          const total = value.branches.length;
          return this.startChildren(frame, module, { kind: "branchall", total, parallelism: total });
        }
        if (status) status.branchall = { branch: 0, len: value.branches.length };
        this.pushFrame(frame, [...frame.path, frame.index, "value", "branches", 0, "modules"], {
          kind: "branchall",
          index: 0,
          collected: [],
        });
        return null;
      }
      case "forloopflow": {
        const items = await evaluateIterator(value.iterator, this.env());
        if (items.length === 0) return this.completeStep(frame, module, [], true);
        if (value.parallel) {
          const parallelism = await this.parallelism(module, value.parallelism, items.length);
          return this.startChildren(frame, module, {
            kind: "forloop",
            total: items.length,
            parallelism,
            items,
          });
        }
        if (status) status.iterator = { index: 0, itered_len: items.length };
        this.pushFrame(
          frame,
          [...frame.path, frame.index, "value", "modules"],
          { kind: "forloop", index: 0, items, collected: [] },
          { value: items[0], index: 0 },
        );
        return null;
      }
      case "whileloopflow": {
        if (status) status.iterator = { index: 0, itered_len: 1 };
        this.pushFrame(
          frame,
          [...frame.path, frame.index, "value", "modules"],
          { kind: "whileloop", index: 0, collected: [] },
          { value: 0, index: 0 },
        );
        return null;
      }
    }
  }

  /**
   * The preprocessor step's call, as Windmill makes it: the trigger's `event` (and, for
   * preprocessors written before `event`, `wm_trigger` and the body's own fields), its input
   * transforms over them; its `preprocessor` function runs (the worker runs `main`). Any other
   * step: its arguments and code as they are.
   */
  private preprocessorCall(
    frame: Frame,
    language: Language,
    content: string,
    args: Record<string, unknown>,
  ): { args: Record<string, unknown>; content: string } {
    const event = this.state._engine.preprocess?.event;
    if (frame.path[0] !== "preprocessor_module" || !event) return { args, content };
    const body = event.body;
    const fields = typeof body === "object" && body !== null && !Array.isArray(body) ? body : {};
    return {
      args: { ...fields, wm_trigger: { kind: event.kind }, event, ...args },
      content: asMain(language, content),
    };
  }

  /** The step's `timeout` (seconds, static or an expression), when it has one. */
  private async stepTimeout(module: FlowModule): Promise<number | null> {
    if (!module.timeout) return null;
    const value = await evaluateTransform(module.timeout, this.env());
    if (value === null || value === undefined) return null;
    if (typeof value !== "number" || !(value > 0)) {
      throw new StepFailure({
        name: "InvalidTimeout",
        message: `the step's timeout gave ${JSON.stringify(value)}, not a number of seconds`,
      });
    }
    return Math.ceil(value);
  }

  private enqueue(_module: FlowModule, job: StepJobRequest): Action {
    return { kind: "enqueue", job };
  }

  /** A parallel loop's `parallelism` (a count, static or an expression): all at once when unset. */
  private async parallelism(
    module: FlowModule,
    transform: InputTransform | undefined,
    total: number,
  ): Promise<number> {
    if (!transform) return total;
    const value = await evaluateTransform(transform, this.env());
    if (value === null || value === undefined || value === 0) return total;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
      throw new StepFailure({
        name: "InvalidParallelism",
        message: `step ${module.id}: parallelism gave ${JSON.stringify(value)}, not a whole number`,
      });
    }
    return Math.min(value, total);
  }

  /** The step's `sleep` (seconds, static or an expression of `result`): delays what runs next. */
  private async sleepAfter(module: FlowModule, result: unknown): Promise<void> {
    const seconds = await evaluateTransform(module.sleep!, this.env({ result }));
    if (seconds === null || seconds === undefined || seconds === 0) return;
    if (typeof seconds !== "number" || !(seconds > 0)) {
      throw new StepFailure({
        name: "InvalidSleep",
        message: `the step's sleep gave ${JSON.stringify(seconds)}, not a number of seconds`,
      });
    }
    this.state._engine.sleep_until = new Date(Date.now() + seconds * 1000).toISOString();
  }

  /** The pending sleep's end, once (the next job started takes it), or null. */
  private takeSleep(): Date | null {
    const until = this.state._engine.sleep_until;
    if (!until) return null;
    delete this.state._engine.sleep_until;
    const date = new Date(until);
    return date.getTime() > Date.now() ? date : null;
  }

  /** The step at `frame.index` runs as child flow jobs: starts the first `parallelism` of them. */
  private startChildren(
    frame: Frame,
    module: FlowModule,
    spec: Pick<Children, "kind" | "total" | "parallelism" | "items" | "subflow">,
  ): Action {
    frame.children = { ...spec, next: 0, running: {}, results: [], done: 0 };
    const status = this.stack.length === 1 ? this.topStatus() : undefined;
    if (status && spec.kind === "forloop") status.iterator = { index: 0, itered_len: spec.total };
    if (status && spec.kind === "branchall") status.branchall = { branch: 0, len: spec.total };
    return this.spawnMore(frame, module, this.takeSleep());
  }

  /** Child flows to start so that `parallelism` run; "wait" when none may start now. */
  private spawnMore(frame: Frame, module: FlowModule, scheduledFor: Date | null = null): Action {
    const children = frame.children!;
    const flows: ChildFlowRequest[] = [];
    let running = Object.keys(children.running).length;
    const env = this.env();
    while (children.next < children.total && running < Math.max(1, children.parallelism)) {
      const index = children.next++;
      running += 1;
      flows.push(this.childRequest(frame, module, index, env));
    }
    return flows.length > 0 ? { kind: "spawn", flows, scheduledFor } : { kind: "wait" };
  }

  private childRequest(
    frame: Frame,
    module: FlowModule,
    index: number,
    env: ExpressionEnv,
  ): ChildFlowRequest {
    const children = frame.children!;
    const base = { stepId: module.id, index, priority: module.priority ?? null };
    if (children.subflow) {
      const { value, path, versionId, args } = children.subflow;
      return { ...base, value, args, path, versionId, seed: null };
    }
    const value = module.value;
    const modules =
      value.type === "forloopflow"
        ? value.modules
        : value.type === "branchall"
          ? (value.branches[index]?.modules ?? [])
          : [];
    const iter =
      children.kind === "forloop" ? { value: children.items![index], index } : (env.iter as Frame["iter"]);
    return {
      ...base,
      value: { modules },
      args: this.input,
      path: null,
      versionId: null,
      seed: {
        results: (env.results ?? {}) as Record<string, unknown>,
        previous: frame.previous,
        ...(iter ? { iter } : {}),
      },
    };
  }

  /** The step ended and has `suspend`: the flow waits for its approvals (or takes those already in). */
  private async suspend(
    frame: Frame,
    module: FlowModule,
    jobId: string,
    result: unknown,
    required: number,
  ): Promise<Action | null> {
    const suspend = module.suspend!;
    let groups: string[] | null = null;
    if (suspend.user_groups_required) {
      const value = await evaluateTransform(suspend.user_groups_required, this.env({ result }));
      const list = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
      groups = list.filter((group): group is string => typeof group === "string" && group !== "");
      if (groups.length === 0) groups = null;
    }
    const timeout = suspend.timeout && suspend.timeout > 0 ? suspend.timeout : DEFAULT_SUSPEND_TIMEOUT_SECS;
    this.state._engine.suspended = {
      job: jobId,
      step: module.id,
      required,
      deadline: new Date(Date.now() + timeout * 1000).toISOString(),
      timeout,
      result,
      user_auth_required: suspend.user_auth_required === true,
      self_approval_disabled: suspend.self_approval_disabled === true,
      groups,
      continue_on_disapprove_timeout: suspend.continue_on_disapprove_timeout === true,
      hide_cancel: suspend.hide_cancel === true,
    };
    const status = this.stack.length === 1 && frame === this.stack[0] ? this.topStatus() : undefined;
    if (status) {
      status.type = "WaitingForEvents";
      status.count = 0;
    }
    const events = this.deps.resumeEvents ? await this.deps.resumeEvents(jobId) : [];
    return this.resumed(events);
  }

  /** The suspended step, if the flow waits for approvals. */
  get suspension(): Suspension | null {
    return this.state._engine.suspended ?? null;
  }

  /**
   * The approval events of the suspended step so far: a cancel ends the flow (canceled), enough
   * approvals move it on; otherwise it keeps waiting. `force`: the flow's owner resumed it.
   */
  async resumed(events: ResumeEvent[], force = false): Promise<Action | null> {
    const suspended = this.state._engine.suspended;
    if (!suspended) return null;
    const cancel = events.find((event) => event.cancel);
    const approvals = events.filter((event) => !event.cancel);
    if (cancel) {
      if (suspended.continue_on_disapprove_timeout) return this.resumeWith(approvals, false);
      delete this.state._engine.suspended;
      const status = this.topStatus();
      if (status && this.stack.length === 1) status.type = "Failure";
      return {
        kind: "finish",
        outcome: {
          status: "canceled",
          result: {
            error: {
              name: "Canceled",
              message: `canceled by ${cancel.approver} at the approval of step ${suspended.step}`,
              step_id: suspended.step,
            },
          },
        },
      };
    }
    if (approvals.length >= suspended.required || force) return this.resumeWith(approvals, true);
    const status = this.stack.length === 1 ? this.topStatus() : undefined;
    if (status) status.count = approvals.length;
    return { kind: "wait" };
  }

  /** No approval arrived in time: the step fails (or the flow goes on, continue_on_disapprove_timeout). */
  async timedOut(): Promise<Action | null> {
    const suspended = this.state._engine.suspended;
    if (!suspended) return null;
    if (suspended.continue_on_disapprove_timeout) return this.resumeWith([], false);
    delete this.state._engine.suspended;
    const failed = this.propagate({
      name: "SuspendTimeout",
      message: `no approval within ${suspended.timeout} s (step ${suspended.step} needed ${suspended.required})`,
      step_id: suspended.step,
    });
    return failed ?? this.run();
  }

  private async resumeWith(approvals: ResumeEvent[], approved: boolean): Promise<Action | null> {
    const suspended = this.state._engine.suspended!;
    delete this.state._engine.suspended;
    const resumes = approvals.map((event) => event.value ?? null);
    this.state._engine.resume = {
      resume: approved ? (resumes[resumes.length - 1] ?? null) : { approved: false },
      resumes,
      approvers: approvals.map((event) => event.approver),
    };
    const frame = this.stack[this.stack.length - 1]!;
    const module = moduleList(this.value, frame.path)[frame.index]!;
    try {
      const stop = await this.completeStep(frame, module, suspended.result);
      if (stop) return stop;
    } catch (error) {
      const failed = this.failure(error, module);
      if (failed) return failed;
    }
    return this.run();
  }

  /** Records a child flow job the caller started for iteration (branch) `index`. */
  childStarted(jobId: string, index: number): void {
    const frame = this.stack[this.stack.length - 1]!;
    frame.children!.running[jobId] = index;
    const status = this.topStatus();
    if (!status) return;
    (status.flow_jobs ??= []).push(jobId);
    if (this.stack.length === 1 && frame.children!.kind === "subflow") status.job = jobId;
  }

  /** A child flow job ended: records its result by index, starts the next ones, or moves on. */
  private async childDone(
    frame: Frame,
    jobId: string,
    outcome: { status: string; result: unknown },
  ): Promise<Action | null> {
    const children = frame.children!;
    const module = moduleList(this.value, frame.path)[frame.index]!;
    const index = children.running[jobId]!;
    delete children.running[jobId];
    children.done += 1;
    if (outcome.status === "success") children.results[index] = outcome.result;
    else {
      const error = errorOf(outcome.result);
      const value = module.value;
      const skips =
        (children.kind === "forloop" && value.type === "forloopflow" && value.skip_failures) ||
        (children.kind === "branchall" && value.type === "branchall" && value.branches[index]?.skip_failure);
      if (skips) children.results[index] = { error };
      else {
        // The others are of no use any more.
        this.cancelJobs.push(...Object.keys(children.running));
        delete frame.children;
        const failed = module.continue_on_error
          ? this.failStep(frame, module, error)
          : this.propagate({
              ...error,
              step_id: typeof error.step_id === "string" ? error.step_id : module.id,
            });
        return failed ?? this.run();
      }
    }
    const status = this.stack.length === 1 ? this.topStatus() : undefined;
    if (children.done < children.total) {
      if (status && children.kind === "forloop") {
        status.iterator = { index: children.done, itered_len: children.total };
      }
      return this.spawnMore(frame, module);
    }
    delete frame.children;
    const result = children.kind === "subflow" ? children.results[0] : children.results;
    try {
      const stop = await this.completeStep(frame, module, result, children.kind === "forloop");
      if (stop) return stop;
    } catch (error) {
      const failed = this.failure(error, module);
      if (failed) return failed;
    }
    return this.run();
  }

  /** Records the job a step waits for (once the caller has enqueued it). */
  waitFor(jobId: string, stepId: string): void {
    this.state._engine.waiting = jobId;
    this.state._engine.waiting_step = stepId;
    const status = this.topStatus();
    if (!status) return;
    if (this.stack.length === 1) status.job = jobId;
    else (status.flow_jobs ??= []).push(jobId);
  }
}
