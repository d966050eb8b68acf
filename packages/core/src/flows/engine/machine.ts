// The flow engine's state machine. A flow job holds its progress in `flow_status` (a stack of
// frames, one per step list being run: the flow's own steps, a branch, a loop iteration) and
// advances, inside the caller's transaction, from one step job to the next: it records the
// finished step's result, evaluates what comes next (skip_if, input transforms, branch
// conditions, loop iterators, stop_after_if) and returns the one step job to enqueue, or the
// flow's outcome. It runs no code of its own and touches no database: `lookUpScript` is how it
// reads deployed scripts, so the caller decides in which transaction.
import type { Language } from "@millrace/runtime";
import { inferSchema } from "@millrace/runtime";
import type { RetryPolicy } from "../../jobs/enqueue.ts";
import { chooseBranch, evaluateCondition, evaluateIterator, evaluateTransform } from "../conditions.ts";
import { ExpressionError, evaluateTransforms, type ExpressionEnv } from "../expressions.ts";
import type { FlowModule, FlowValue, Retry } from "../format.ts";

/** Windmill's FlowStatusModule, loosely: what the run pages show of each top-level step. */
export interface StepStatus {
  id: string;
  type: "WaitingForPriorSteps" | "InProgress" | "Success" | "Failure";
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

interface Frame {
  /** Where this frame's step list is in the flow value, e.g. ["modules"], ["failure_module"]. */
  path: ListPath;
  index: number;
  results: Record<string, unknown>;
  previous: unknown;
  iter?: { value: unknown; index: number };
  /** Set on a frame run for a branch or loop step of the frame below it. */
  loop?: Loop;
}

/** flow_status: Windmill's public fields plus the engine's own (`_engine`). */
export interface FlowState {
  step: number;
  modules: StepStatus[];
  failure_module: StepStatus & { parent_module?: string };
  _engine: {
    stack: Frame[];
    /** The step job the flow waits for. */
    waiting: string | null;
    waiting_step: string | null;
    in_failure: boolean;
    /** The error that sent the flow to its failure step. */
    error?: unknown;
  };
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
}

export type Outcome = { status: "success" | "failure"; result: unknown };

export type Action = { kind: "enqueue"; job: StepJobRequest } | { kind: "finish"; outcome: Outcome };

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
}

export interface MachineDeps {
  lookUpScript(path: string, hash: string | undefined): Promise<DeployedScript | null>;
}

/** Iterations a while loop may run before the flow fails (a loop that never stops). */
export const MAX_WHILE_ITERATIONS = 1000;

export function initialState(value: FlowValue, args: Record<string, unknown>): FlowState {
  return {
    step: 0,
    modules: value.modules.map((module) => ({ id: module.id, type: "WaitingForPriorSteps" })),
    failure_module: { id: value.failure_module?.id ?? "failure", type: "WaitingForPriorSteps" },
    _engine: {
      stack: [{ path: ["modules"], index: 0, results: {}, previous: args }],
      waiting: null,
      waiting_step: null,
      in_failure: false,
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

export class FlowMachine {
  readonly state: FlowState;
  private readonly value: FlowValue;
  private readonly flowInput: Record<string, unknown>;
  private readonly deps: MachineDeps;

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
    return {
      flow_input: this.flowInput,
      results,
      previous_result: top?.previous ?? null,
      ...(iter ? { iter } : {}),
      ...extra,
    };
  }

  /** The status entry of the top-level step the flow is in, if any. */
  private topStatus(): StepStatus | undefined {
    if (this.state._engine.in_failure) return this.state.failure_module;
    const root = this.stack[0];
    return root ? this.state.modules[root.index] : undefined;
  }

  /** Starts the flow: the first step job to run, or the outcome when no step needs a job. */
  async start(): Promise<Action> {
    return this.run();
  }

  /** A step job ended: records it and moves on. */
  async stepDone(jobId: string, outcome: { status: string; result: unknown }): Promise<Action | null> {
    const engine = this.state._engine;
    if (engine.waiting !== jobId) return null;
    engine.waiting = null;
    engine.waiting_step = null;
    const frame = this.stack[this.stack.length - 1]!;
    const module = moduleList(this.value, frame.path)[frame.index]!;
    if (outcome.status === "success") {
      try {
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
    if (!parent) {
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
      this.stack.push({ path: ["failure_module"], index: 0, results, previous: error });
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
      case "identity":
        return this.completeStep(frame, module, frame.previous);
      case "rawscript": {
        const args = await evaluateTransforms(value.input_transforms, this.env());
        const language = value.language as Language;
        const timeoutSecs = await this.stepTimeout(module);
        return this.enqueue(module, {
          stepId: module.id,
          kind: "flowscript",
          language,
          content: value.content,
          args,
          argOrder: argOrderFor(language, value.content, args),
          tag: value.tag || null,
          scriptPath: value.path ?? null,
          scriptHash: null,
          retry: retryPolicy(module.retry),
          priority: module.priority ?? null,
          timeoutSecs,
          memoryLimitMb: null,
          author: null,
          lock: value.lock ?? null,
        });
      }
      case "script": {
        const script = await this.deps.lookUpScript(value.path, value.hash);
        if (!script) {
          throw new StepFailure({
            name: "NotFound",
            message: `script ${value.path}${value.hash ? ` (version ${value.hash})` : ""} not found`,
          });
        }
        const args = await evaluateTransforms(value.input_transforms, this.env());
        const language = script.language as Language;
        const order = script.schema?.order ?? argOrderFor(language, script.content, args);
        return this.enqueue(module, {
          stepId: module.id,
          kind: "script",
          language,
          content: script.content,
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
        });
      }
      case "flow":
        throw new StepFailure({ name: "NotSupported", message: "sub-flow steps are not supported yet" });
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
