// Flow expressions (input transforms, skip_if, stop_after_if, branch conditions, loop iterators),
// evaluated in QuickJS compiled to WebAssembly (see sandbox.ts) with a time, memory and stack cap
// per evaluation. Values cross the boundary only as JSON text: no host object is ever handed to
// the sandbox and no sandbox handle ever comes back.
//
// An expression is, as in Windmill's flow files, a JavaScript expression over `flow_input`,
// `results`, `previous_result` (and in loops `flow_input.iter.value` / `.index`). Statements are
// accepted too: a script's completion value (`const x = 1; x + 1`) or a function body with
// `return`.
import { type QuickJSContext, type QuickJSHandle, type QuickJSRuntime } from "quickjs-emscripten-core";
import { type InputTransform } from "./format.ts";
import { resultReferences } from "./references.ts";
import { retireSandboxModule, sandboxMemoryFull, sandboxModule } from "./sandbox.ts";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type ExpressionEnv = {
  flow_input?: unknown;
  /** Results of the steps that ran before, by step id. */
  results?: Record<string, unknown>;
  previous_result?: unknown;
  /** Inside a loop: becomes `flow_input.iter`. */
  iter?: { value: unknown; index: number };
  /** stop_after_if and retry_if: the step's own result. */
  result?: unknown;
  /** retry_if: the step's error. */
  error?: unknown;
  /** After a suspended (approval) step: the last approval's payload, all of them, and who gave them. */
  resume?: unknown;
  resumes?: unknown[];
  approvers?: string[];
};

export type ExpressionLimits = {
  /** Wall time per expression, in milliseconds. */
  timeoutMs?: number;
  /** Memory the sandbox may allocate per evaluation, in bytes. */
  memoryBytes?: number;
  /** Sandbox stack, in bytes. */
  stackBytes?: number;
};

const INPUT_LOAD_TIMEOUT_MS = 2000;

export const DEFAULT_EXPRESSION_LIMITS: Required<ExpressionLimits> = {
  timeoutMs: 100,
  memoryBytes: 16 * 1024 * 1024,
  stackBytes: 256 * 1024,
};

export type ExpressionFailureReason = "timeout" | "memory" | "error";

/** An expression that did not yield a value: it timed out, ran out of memory, or threw. */
export class ExpressionError extends Error {
  readonly expr: string;
  readonly reason: ExpressionFailureReason;
  /** The input transform at fault, when evaluating a step's inputs. */
  readonly input: string | undefined;

  constructor(expr: string, reason: ExpressionFailureReason, message: string, input?: string) {
    super(message);
    this.name = "ExpressionError";
    this.expr = expr;
    this.reason = reason;
    this.input = input;
  }
}

/** The ways an expression may be written, tried in order: expression, script, function body. */
function forms(expr: string): string[] {
  return [`(${expr}\n)`, expr, `(function () {\n${expr}\n})()`];
}

type Session = {
  evaluate(expr: string, input?: string): JsonValue;
  /** The expression's JavaScript truthiness, taken in the sandbox (before JSON loses it). */
  test(expr: string, input?: string): boolean;
  close(): void;
};

/** Evaluates expressions in one sandbox; see withExpressions. */
export type ExpressionEvaluator = Pick<Session, "evaluate" | "test">;

function describe(ctx: QuickJSContext, handle: QuickJSHandle): string {
  try {
    const value: unknown = ctx.dump(handle);
    if (value && typeof value === "object" && "message" in value) {
      const { name, message } = value as { name?: unknown; message?: unknown };
      return `${typeof name === "string" ? name : "Error"}: ${String(message)}`;
    }
    return `Uncaught ${typeof value === "string" ? value : JSON.stringify(value)}`;
  } catch {
    return "InternalError: out of memory";
  }
}

type Sandbox = {
  runtime: QuickJSRuntime;
  ctx: QuickJSContext;
  limits: Required<ExpressionLimits>;
  /** Whether the WebAssembly memory reached its cap. */
  memoryFull(): boolean;
};

function failure(
  sandbox: Sandbox,
  handle: QuickJSHandle,
  expr: string,
  deadline: number,
  input: string | undefined,
): ExpressionError {
  const { ctx, limits } = sandbox;
  const described = describe(ctx, handle);
  handle.dispose();
  if (described === "InternalError: interrupted" || Date.now() > deadline) {
    return new ExpressionError(
      expr,
      "timeout",
      `The expression took longer than ${limits.timeoutMs} ms.`,
      input,
    );
  }
  // Out of memory while building the error itself leaves an exception without a value.
  const valueless = described === "Uncaught null" || described === "Uncaught undefined";
  if (described === "InternalError: out of memory" || (valueless && sandbox.memoryFull())) {
    const mib = Math.round((limits.memoryBytes / 1024 / 1024) * 10) / 10;
    return new ExpressionError(expr, "memory", `The expression used more than ${mib} MiB of memory.`, input);
  }
  return new ExpressionError(expr, "error", described, input);
}

function openSession(sandbox: Sandbox, env: SandboxEnv): Session {
  const { runtime, ctx, limits } = sandbox;
  // Loading the inputs runs no user code (the sandbox's JSON.parse of our own JSON): its cap only
  // guards against the unexpected, and is wider than an expression's, so that a loaded machine
  // (or the first call into a fresh module, while WebAssembly compiles) does not fail a step.
  let deadline = Date.now() + Math.max(limits.timeoutMs, INPUT_LOAD_TIMEOUT_MS);
  runtime.setInterruptHandler(() => Date.now() > deadline);
  // The inputs go in as JSON text, parsed by the sandbox's own JSON.parse into its globals.
  const json = ctx.getProp(ctx.global, "JSON");
  const parse = ctx.getProp(json, "parse");
  const toJson = ctx.getProp(json, "stringify");
  json.dispose();
  const text = ctx.newString(env.json);
  const parsed = ctx.callFunction(parse, ctx.undefined, text);
  text.dispose();
  parse.dispose();
  if (parsed.error) {
    toJson.dispose();
    const error = failure(sandbox, parsed.error, "", deadline, undefined);
    throw new ExpressionError(
      "",
      error.reason,
      `The expression's inputs could not be loaded: ${error.message}`,
    );
  }
  for (const key of env.keys) {
    const value = ctx.getProp(parsed.value, key);
    ctx.setProp(ctx.global, key, value);
    value.dispose();
  }
  parsed.value.dispose();
  let toBoolean: QuickJSHandle | undefined;
  const run = (expr: string, input: string | undefined, convert: QuickJSHandle): JsonValue => {
    const form = compilable(ctx, expr);
    if (typeof form !== "string") throw new ExpressionError(expr, "error", form.syntaxError, input);
    deadline = Date.now() + limits.timeoutMs;
    const result = ctx.evalCode(form, "expr.js");
    if (result.error) throw failure(sandbox, result.error, expr, deadline, input);
    const value = settle(sandbox, result.value, expr, deadline, input);
    const json = ctx.callFunction(convert, ctx.undefined, value);
    value.dispose();
    if (json.error) throw failure(sandbox, json.error, expr, deadline, input);
    const type = ctx.typeof(json.value);
    const out = type === "string" ? ctx.getString(json.value) : type === "undefined" ? "null" : undefined;
    const bool = type === "boolean" ? (ctx.dump(json.value) as boolean) : undefined;
    json.value.dispose();
    if (bool !== undefined) return bool;
    if (out === undefined)
      throw new ExpressionError(expr, "error", "The expression's value is not JSON.", input);
    return JSON.parse(out) as JsonValue;
  };
  return {
    evaluate: (expr, input) => run(expr, input, toJson),
    test(expr, input) {
      if (!toBoolean) {
        const made = ctx.evalCode("(function (value) { return !!value; })", "boolean.js");
        if (made.error) throw failure(sandbox, made.error, expr, deadline, input);
        toBoolean = made.value;
      }
      return run(expr, input, toBoolean) === true;
    },
    close() {
      toJson.dispose();
      toBoolean?.dispose();
    },
  };
}

/** A promise's value once its jobs have run (under the same time cap); other values as they are. */
function settle(
  sandbox: Sandbox,
  handle: QuickJSHandle,
  expr: string,
  deadline: number,
  input: string | undefined,
): QuickJSHandle {
  const { runtime, ctx } = sandbox;
  let state = ctx.getPromiseState(handle);
  if (state.type === "fulfilled" && state.notAPromise) return handle;
  if (state.type === "pending") {
    runtime.executePendingJobs().dispose();
    state = ctx.getPromiseState(handle);
  }
  handle.dispose();
  if (state.type === "fulfilled") return state.value;
  if (state.type === "rejected") throw failure(sandbox, state.error, expr, deadline, input);
  throw new ExpressionError(expr, "error", "The expression returned a promise that never settles.", input);
}

/** The first form of `expr` that compiles, or the syntax error of its plain expression form. */
function compilable(ctx: QuickJSContext, expr: string): string | { syntaxError: string } {
  let first: string | undefined;
  for (const form of forms(expr)) {
    const compiled = ctx.evalCode(form, "expr.js", { compileOnly: true });
    if (!compiled.error) {
      compiled.value.dispose();
      return form;
    }
    first ??= describe(ctx, compiled.error);
    compiled.error.dispose();
  }
  return { syntaxError: first ?? "SyntaxError" };
}

function resolveLimits(limits: ExpressionLimits | undefined): Required<ExpressionLimits> {
  return { ...DEFAULT_EXPRESSION_LIMITS, ...limits };
}

/** Runs `work` in a fresh runtime and context of the shared module, then frees them. */
async function withSandbox<T>(limits: Required<ExpressionLimits>, work: (sandbox: Sandbox) => T): Promise<T> {
  const module = await sandboxModule(limits.memoryBytes);
  let runtime: QuickJSRuntime | undefined;
  let ctx: QuickJSContext | undefined;
  try {
    runtime = module.newRuntime();
    runtime.setMemoryLimit(limits.memoryBytes);
    runtime.setMaxStackSize(limits.stackBytes);
    ctx = runtime.newContext();
    return work({ runtime, ctx, limits, memoryFull: () => sandboxMemoryFull(module, limits.memoryBytes) });
  } catch (error) {
    if (error instanceof ExpressionError) {
      // Give the memory back: a fresh module starts again from its base size.
      if (error.reason === "memory") retireSandboxModule(limits.memoryBytes);
      throw error;
    }
    // The module itself failed (a WebAssembly trap): drop it; the next evaluation loads another.
    retireSandboxModule(limits.memoryBytes);
    throw new ExpressionError("", "error", `The expression sandbox failed: ${String(error)}`);
  } finally {
    try {
      ctx?.dispose();
      runtime?.dispose();
    } catch {
      retireSandboxModule(limits.memoryBytes);
    }
  }
}

type SandboxEnv = { json: string; keys: string[] };

// A name the sandbox gets, then property accesses: `.name`, `[0]`, `["key"]` or `['key']`.
// A string key without escapes or line breaks (a raw one is a syntax error), and an index without
// leading zeros (sloppy JavaScript reads `[010]` as octal).
const STRING_KEY = String.raw`"([^"\\\n\r\u2028\u2029]*)"|'([^'\\\n\r\u2028\u2029]*)'`;
const PROPERTY = String.raw`\s*\.\s*([A-Za-z_$][\w$]*)|\s*\[\s*(0|[1-9]\d*)\s*\]|\s*\[\s*(?:${STRING_KEY})\s*\]`;
const PROPERTY_PATH = new RegExp(
  String.raw`^\s*([A-Za-z_$][\w$]*)((?:${PROPERTY.replaceAll(/\((?!\?)/g, "(?:")})*)\s*$`,
);
const PROPERTY_STEP = new RegExp(PROPERTY, "g");

/**
 * The values of expressions that only read the inputs (`flow_input.x`, `results.a[0]`,
 * `previous_result`: most of a flow's input transforms), looked up here without starting a
 * sandbox, which costs more than the rest of a step's transition in JavaScript. Only when every
 * step of every path is an own property of the JSON the sandbox would get, so that the value is
 * the one the sandbox would give; anything else (a missing key, which in JavaScript may be
 * inherited or throw, `__proto__`, any other syntax) leaves all of them to the sandbox: null.
 */
function lookUpPaths(exprs: string[], inputs: SandboxEnv): Map<string, unknown> | null {
  if (exprs.length === 0 || !exprs.every((expr) => PROPERTY_PATH.test(expr))) return null;
  const globals = JSON.parse(inputs.json) as Record<string, unknown>;
  const values = new Map<string, unknown>();
  for (const expr of exprs) {
    const [, name, steps] = PROPERTY_PATH.exec(expr)!;
    if (!Object.hasOwn(globals, name!)) return null;
    let value = globals[name!];
    for (const step of steps!.matchAll(PROPERTY_STEP)) {
      const key = step[1] ?? step[2] ?? step[3] ?? step[4]!;
      if (typeof value !== "object" || value === null || key === "__proto__" || !Object.hasOwn(value, key)) {
        return null;
      }
      value = (value as Record<string, unknown>)[key];
    }
    values.set(expr, value);
  }
  return values;
}

/** The JSON the sandbox receives: only the names and results the expressions mention. */
function sandboxEnv(exprs: string[], env: ExpressionEnv): SandboxEnv {
  const mentions = (name: string) => exprs.some((expr) => expr.includes(name));
  const out: Record<string, unknown> = {};
  if (mentions("flow_input")) {
    out.flow_input =
      env.iter === undefined
        ? (env.flow_input ?? null)
        : {
            ...(typeof env.flow_input === "object" && env.flow_input !== null ? env.flow_input : {}),
            iter: env.iter,
          };
  }
  if (mentions("results")) {
    const all = env.results ?? {};
    const refs = exprs.map(resultReferences);
    if (refs.some((ref) => ref.dynamic)) out.results = all;
    else {
      const picked: Record<string, unknown> = {};
      for (const id of new Set(refs.flatMap((ref) => ref.steps))) if (id in all) picked[id] = all[id];
      out.results = picked;
    }
  }
  if (mentions("previous_result")) out.previous_result = env.previous_result ?? null;
  if ("result" in env && mentions("result")) out.result = env.result ?? null;
  if ("error" in env && mentions("error")) out.error = env.error ?? null;
  for (const name of ["resume", "resumes", "approvers"] as const) {
    if (name in env && mentions(name)) out[name] = env[name] ?? null;
  }
  return { json: JSON.stringify(out), keys: Object.keys(out) };
}

/**
 * Runs `work` with an evaluator over one sandbox holding `env`: for the expressions of one flow
 * transition (a step's inputs, branch conditions in order), each with its own time cap.
 * `exprs` are all the expressions `work` may evaluate: only what they mention is passed in.
 */
export async function withExpressions<T>(
  exprs: string[],
  env: ExpressionEnv,
  limits: ExpressionLimits | undefined,
  work: (evaluator: ExpressionEvaluator) => T,
): Promise<T> {
  const resolved = resolveLimits(limits);
  const inputs = sandboxEnv(exprs, env);
  const lookedUp = lookUpPaths(exprs, inputs);
  if (lookedUp) {
    const value = (expr: string): JsonValue => {
      if (!lookedUp.has(expr)) throw new Error(`expression not announced to withExpressions: ${expr}`);
      // A copy each time, as the sandbox's JSON would be: callers may change what they get.
      return JSON.parse(JSON.stringify(lookedUp.get(expr))) as JsonValue;
    };
    return work({ evaluate: value, test: (expr) => Boolean(value(expr)) });
  }
  return withSandbox(resolved, (sandbox) => {
    const session = openSession(sandbox, inputs);
    try {
      return work({ evaluate: session.evaluate, test: session.test });
    } finally {
      session.close();
    }
  });
}

/** Evaluates one expression; throws ExpressionError when it fails. */
export async function evaluateExpression(
  expr: string,
  env: ExpressionEnv,
  limits?: ExpressionLimits,
): Promise<JsonValue> {
  return withExpressions([expr], env, limits, ({ evaluate }) => evaluate(expr));
}

/**
 * A step's arguments from its input transforms: static values as they are, JavaScript ones
 * evaluated (one sandbox for all of them, each with its own time cap). A failure names the input.
 */
export async function evaluateTransforms(
  transforms: Record<string, InputTransform>,
  env: ExpressionEnv,
  limits?: ExpressionLimits,
): Promise<Record<string, unknown>> {
  const args: Record<string, unknown> = {};
  const scripted: [string, string][] = [];
  for (const [name, transform] of Object.entries(transforms)) {
    if (transform.type === "javascript") scripted.push([name, transform.expr]);
    else args[name] = transform.value;
  }
  if (scripted.length === 0) return args;
  const exprs = scripted.map(([, expr]) => expr);
  return withExpressions(exprs, env, limits, ({ evaluate }) => {
    for (const [name, expr] of scripted) args[name] = evaluate(expr, name);
    return args;
  });
}

/** For each expression, its syntax error, or undefined when it compiles. Nothing is run. */
export async function expressionSyntaxErrors(exprs: string[]): Promise<(string | undefined)[]> {
  if (exprs.length === 0) return [];
  const resolved = resolveLimits(undefined);
  return withSandbox(resolved, ({ ctx }) =>
    exprs.map((expr) => {
      const form = compilable(ctx, expr);
      return typeof form === "string" ? undefined : form.syntaxError;
    }),
  );
}

/** Loads the sandbox ahead of the first evaluation (about 15 ms once per process). */
export async function loadExpressionSandbox(limits?: ExpressionLimits): Promise<void> {
  await sandboxModule(resolveLimits(limits).memoryBytes);
}
