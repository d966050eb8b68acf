// Windmill reads flows more loosely than its own types say: its CLI writes `parallelism: 4` as a
// plain number, older flows leave out a step's `input_transforms` or even its `id`, expressions
// written before 2023 start with `import { … } from 'windmill@1-1'`, and old locks are lists of
// lines. Millrace stores a flow exactly as it was sent (so that `wmill sync push` compares what it
// wrote with what it reads back, and finds nothing to push), and reads it through this function
// wherever it checks or runs it. The result is deterministic: the same stored flow always gets the
// same filled-in ids, at deploy and in every run.
import type { FlowValue } from "./format.ts";

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `import { previous_result, flow_input, … } from 'windmill@1-1'` lines (Windmill's first expression form). */
const OLD_IMPORT = /^\s*import\s*\{[^}]*\}\s*from\s*["']windmill@1-1["'];?[ \t]*$/gm;

/** An expression with the old form's import lines removed; the rest is the expression. */
export function modernExpression(expr: string): string {
  if (!expr.includes("windmill@1-1")) return expr;
  return expr.replace(OLD_IMPORT, "").trim();
}

const STEP_KINDS_WITH_INPUTS = new Set(["rawscript", "script", "flow"]);

/** Windmill's editor names new steps a, b, …, z, aa, ab, …: the next such name not taken. */
function idGenerator(taken: Set<string>): () => string {
  let n = 0;
  const name = (i: number): string => {
    let out = "";
    let k = i + 1;
    while (k > 0) {
      const r = (k - 1) % 26;
      out = String.fromCharCode(97 + r) + out;
      k = Math.floor((k - 1) / 26);
    }
    return out;
  };
  return () => {
    for (;;) {
      const candidate = name(n++);
      if (!taken.has(candidate)) {
        taken.add(candidate);
        return candidate;
      }
    }
  };
}

/** Every step of a flow value (in document order), nested ones included. */
function eachModule(value: Json, visit: (module: Json) => void): void {
  const walkList = (list: unknown) => {
    if (!Array.isArray(list)) return;
    for (const module of list) if (isRecord(module)) walkModule(module);
  };
  const walkModule = (module: Json) => {
    visit(module);
    const inner = module.value;
    if (!isRecord(inner)) return;
    walkList(inner.modules);
    if (Array.isArray(inner.branches)) {
      for (const branch of inner.branches) if (isRecord(branch)) walkList(branch.modules);
    }
    walkList(inner.default);
  };
  walkList(value.modules);
  if (isRecord(value.failure_module)) walkModule(value.failure_module);
  if (isRecord(value.preprocessor_module)) walkModule(value.preprocessor_module);
}

/** Every string under an `expr` key, rewritten in place. */
function rewriteExpressions(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) rewriteExpressions(item);
    return;
  }
  if (!isRecord(node)) return;
  for (const [key, child] of Object.entries(node)) {
    if (key === "expr" && typeof child === "string") node[key] = modernExpression(child);
    else if (key !== "content" && key !== "lock") rewriteExpressions(child);
  }
}

/**
 * A copy of a flow value (as stored, or as a client sent it) with Windmill's implicit defaults
 * made explicit. Anything it does not recognise is left for the parser (format.ts) to judge.
 */
export function normalizeFlowValue<T = FlowValue>(value: unknown): T {
  if (!isRecord(value)) return value as T;
  const copy = structuredClone(value);
  const taken = new Set<string>();
  eachModule(copy, (module) => {
    if (typeof module.id === "string") taken.add(module.id);
  });
  const nextId = idGenerator(taken);
  eachModule(copy, (module) => {
    if (module.id === undefined || module.id === null) module.id = nextId();
    const inner = module.value;
    if (!isRecord(inner)) return;
    if (STEP_KINDS_WITH_INPUTS.has(inner.type as string) && inner.input_transforms === undefined) {
      inner.input_transforms = {};
    }
    if (typeof inner.parallelism === "number") {
      inner.parallelism = { type: "static", value: inner.parallelism };
    }
    // Older wmill versions wrote a lock as a list of its lines.
    if (Array.isArray(inner.lock) && inner.lock.every((line) => typeof line === "string")) {
      inner.lock = inner.lock.join("\n");
    }
  });
  rewriteExpressions(copy);
  if (typeof copy.skip_expr === "string") copy.skip_expr = modernExpression(copy.skip_expr);
  return copy as T;
}

/** A lock sent as a string or as the list of its lines (older wmill script.yaml): one string. */
export function canonicalLock(lock: string | string[] | null | undefined): string | null | undefined {
  return Array.isArray(lock) ? lock.join("\n") : lock;
}
