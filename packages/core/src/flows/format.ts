// OpenFlow, the flow format of Windmill's clients (npm `windmill-client`, types.gen.d.ts: OpenFlow,
// FlowValue, FlowModule and the module value kinds). Field names are the JSON's, snake_case.
// Objects are loose: fields Windmill adds later pass through untouched. Kinds and required fields
// are strict: a flow Millrace cannot run is refused at deploy, naming the step and the field.
import { z } from "zod";
import { invalidInput } from "../errors.ts";

/** The step kinds Millrace runs. Windmill's `aiagent` is refused as not supported. */
export const FLOW_MODULE_KINDS = [
  "rawscript",
  "script",
  "flow",
  "forloopflow",
  "whileloopflow",
  "branchone",
  "branchall",
  "identity",
] as const;
export type FlowModuleKind = (typeof FLOW_MODULE_KINDS)[number];

/** Languages of an inline (`rawscript`) step, named as in Windmill. */
export const RAWSCRIPT_LANGUAGES = ["bun", "deno", "python3", "bash", "postgresql"] as const;
export type RawScriptLanguage = (typeof RAWSCRIPT_LANGUAGES)[number];

export type StaticTransform = { type: "static"; value?: unknown };
export type JavascriptTransform = { type: "javascript"; expr: string };
export type InputTransform = StaticTransform | JavascriptTransform;
export type InputTransforms = Record<string, InputTransform>;

export type Retry = {
  constant?: { attempts?: number; seconds?: number };
  exponential?: { attempts?: number; multiplier?: number; seconds?: number; random_factor?: number };
  retry_if?: { expr: string };
};

export type StopAfterIf = {
  expr: string;
  skip_if_stopped?: boolean;
  error_message?: string | null;
  error_include_result?: boolean;
};

export type Suspend = {
  required_events?: number;
  timeout?: number;
  resume_form?: { schema?: Record<string, unknown> };
  user_auth_required?: boolean;
  user_groups_required?: InputTransform;
  self_approval_disabled?: boolean;
  hide_cancel?: boolean;
  continue_on_disapprove_timeout?: boolean;
};

export type RawScript = {
  type: "rawscript";
  input_transforms: InputTransforms;
  content: string;
  language: RawScriptLanguage;
  path?: string;
  lock?: string;
  tag?: string;
  concurrent_limit?: number;
  concurrency_time_window_s?: number;
  custom_concurrency_key?: string;
  is_trigger?: boolean;
};
export type PathScript = {
  type: "script";
  input_transforms: InputTransforms;
  path: string;
  hash?: string;
  tag_override?: string;
  is_trigger?: boolean;
};
export type PathFlow = { type: "flow"; input_transforms: InputTransforms; path: string };
export type ForloopFlow = {
  type: "forloopflow";
  modules: FlowModule[];
  iterator: InputTransform;
  skip_failures: boolean;
  parallel?: boolean;
  parallelism?: InputTransform;
  squash?: boolean;
};
export type WhileloopFlow = {
  type: "whileloopflow";
  modules: FlowModule[];
  skip_failures: boolean;
  parallel?: boolean;
  parallelism?: InputTransform;
  squash?: boolean;
};
export type BranchOne = {
  type: "branchone";
  branches: { summary?: string; expr: string; modules: FlowModule[] }[];
  default: FlowModule[];
};
export type BranchAll = {
  type: "branchall";
  branches: { summary?: string; skip_failure?: boolean; modules: FlowModule[] }[];
  parallel?: boolean;
};
export type Identity = { type: "identity"; flow?: boolean };

export type FlowModuleValue =
  RawScript | PathScript | PathFlow | ForloopFlow | WhileloopFlow | BranchOne | BranchAll | Identity;

export type FlowModule = {
  id: string;
  value: FlowModuleValue;
  summary?: string;
  stop_after_if?: StopAfterIf;
  stop_after_all_iters_if?: StopAfterIf;
  skip_if?: { expr: string };
  sleep?: InputTransform;
  timeout?: InputTransform;
  cache_ttl?: number;
  delete_after_secs?: number;
  mock?: { enabled?: boolean; return_value?: unknown };
  suspend?: Suspend;
  priority?: number;
  continue_on_error?: boolean;
  retry?: Retry;
};

export type FlowValue = {
  modules: FlowModule[];
  failure_module?: FlowModule;
  preprocessor_module?: FlowModule;
  same_worker?: boolean;
  concurrent_limit?: number;
  concurrency_key?: string;
  concurrency_time_window_s?: number;
  skip_expr?: string;
  cache_ttl?: number;
  priority?: number;
  early_return?: string;
  flow_env?: Record<string, unknown>;
};

export type OpenFlow = {
  summary: string;
  description?: string;
  value: FlowValue;
  schema?: Record<string, unknown>;
};

/** Step ids: letters, digits, `_` and `-`, as Windmill documents them. */
export const STEP_ID_PATTERN = /^[A-Za-z0-9_-]+$/;

const count = z.number().int().nonnegative();
const seconds = z.number().nonnegative();

const staticTransform = z.looseObject({ type: z.literal("static"), value: z.unknown().optional() });
const javascriptTransform = z.looseObject({ type: z.literal("javascript"), expr: z.string() });
export const inputTransformSchema: z.ZodType<InputTransform> = z.discriminatedUnion("type", [
  staticTransform,
  javascriptTransform,
]);
const inputTransforms = z.record(z.string(), inputTransformSchema);

export const retrySchema: z.ZodType<Retry> = z.looseObject({
  constant: z.looseObject({ attempts: count.optional(), seconds: seconds.optional() }).optional(),
  exponential: z
    .looseObject({
      attempts: count.optional(),
      multiplier: z.number().nonnegative().optional(),
      seconds: seconds.optional(),
      random_factor: z.number().min(0).max(100).optional(),
    })
    .optional(),
  retry_if: z.looseObject({ expr: z.string() }).optional(),
});

export const stopAfterIfSchema: z.ZodType<StopAfterIf> = z.looseObject({
  expr: z.string(),
  skip_if_stopped: z.boolean().optional(),
  error_message: z.string().nullable().optional(),
  error_include_result: z.boolean().optional(),
});

export const suspendSchema: z.ZodType<Suspend> = z.looseObject({
  required_events: count.optional(),
  timeout: seconds.optional(),
  resume_form: z.looseObject({ schema: z.record(z.string(), z.unknown()).optional() }).optional(),
  user_auth_required: z.boolean().optional(),
  user_groups_required: inputTransformSchema.optional(),
  self_approval_disabled: z.boolean().optional(),
  hide_cancel: z.boolean().optional(),
  continue_on_disapprove_timeout: z.boolean().optional(),
});

const rawScript = z.looseObject({
  type: z.literal("rawscript"),
  input_transforms: inputTransforms,
  content: z.string(),
  language: z.enum(RAWSCRIPT_LANGUAGES),
  path: z.string().optional(),
  lock: z.string().optional(),
  tag: z.string().optional(),
  concurrent_limit: count.optional(),
  concurrency_time_window_s: seconds.optional(),
  custom_concurrency_key: z.string().optional(),
  is_trigger: z.boolean().optional(),
});
const pathScript = z.looseObject({
  type: z.literal("script"),
  input_transforms: inputTransforms,
  path: z.string().min(1),
  hash: z.string().optional(),
  tag_override: z.string().optional(),
  is_trigger: z.boolean().optional(),
});
const pathFlow = z.looseObject({
  type: z.literal("flow"),
  input_transforms: inputTransforms,
  path: z.string().min(1),
});
const forloopFlow = z.looseObject({
  type: z.literal("forloopflow"),
  get modules() {
    return z.array(flowModuleSchema);
  },
  iterator: inputTransformSchema,
  skip_failures: z.boolean(),
  parallel: z.boolean().optional(),
  parallelism: inputTransformSchema.optional(),
  squash: z.boolean().optional(),
});
const whileloopFlow = z.looseObject({
  type: z.literal("whileloopflow"),
  get modules() {
    return z.array(flowModuleSchema);
  },
  skip_failures: z.boolean(),
  parallel: z.boolean().optional(),
  parallelism: inputTransformSchema.optional(),
  squash: z.boolean().optional(),
});
const branchOne = z.looseObject({
  type: z.literal("branchone"),
  get branches() {
    return z.array(
      z.looseObject({ summary: z.string().optional(), expr: z.string(), modules: z.array(flowModuleSchema) }),
    );
  },
  get default() {
    return z.array(flowModuleSchema);
  },
});
const branchAll = z.looseObject({
  type: z.literal("branchall"),
  get branches() {
    return z.array(
      z.looseObject({
        summary: z.string().optional(),
        skip_failure: z.boolean().optional(),
        modules: z.array(flowModuleSchema),
      }),
    );
  },
  parallel: z.boolean().optional(),
});
const identity = z.looseObject({ type: z.literal("identity"), flow: z.boolean().optional() });

export const flowModuleValueSchema: z.ZodType<FlowModuleValue> = z.discriminatedUnion("type", [
  rawScript,
  pathScript,
  pathFlow,
  forloopFlow,
  whileloopFlow,
  branchOne,
  branchAll,
  identity,
]);

export const flowModuleSchema: z.ZodType<FlowModule> = z.looseObject({
  id: z.string().regex(STEP_ID_PATTERN),
  value: flowModuleValueSchema,
  summary: z.string().optional(),
  stop_after_if: stopAfterIfSchema.optional(),
  stop_after_all_iters_if: stopAfterIfSchema.optional(),
  skip_if: z.looseObject({ expr: z.string() }).optional(),
  sleep: inputTransformSchema.optional(),
  timeout: inputTransformSchema.optional(),
  cache_ttl: seconds.optional(),
  delete_after_secs: seconds.optional(),
  mock: z.looseObject({ enabled: z.boolean().optional(), return_value: z.unknown().optional() }).optional(),
  suspend: suspendSchema.optional(),
  priority: z.number().int().optional(),
  continue_on_error: z.boolean().optional(),
  retry: retrySchema.optional(),
});

export const flowValueSchema: z.ZodType<FlowValue> = z.looseObject({
  modules: z.array(flowModuleSchema),
  failure_module: flowModuleSchema.optional(),
  preprocessor_module: flowModuleSchema.optional(),
  same_worker: z.boolean().optional(),
  concurrent_limit: count.optional(),
  concurrency_key: z.string().optional(),
  concurrency_time_window_s: seconds.optional(),
  skip_expr: z.string().optional(),
  cache_ttl: seconds.optional(),
  priority: z.number().int().optional(),
  early_return: z.string().optional(),
  flow_env: z.record(z.string(), z.unknown()).optional(),
});

export const openFlowSchema: z.ZodType<OpenFlow> = z.looseObject({
  summary: z.string(),
  description: z.string().optional(),
  value: flowValueSchema,
  schema: z.record(z.string(), z.unknown()).optional(),
});

/** `["value", "modules", 2, "id"]` → `value.modules[2].id`; keys that are not identifiers are quoted. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The id of the innermost step that `path` passes through in `input`, if it has one. */
function stepAt(input: unknown, path: readonly PropertyKey[]): string | undefined {
  let node = input;
  let step: string | undefined;
  for (const key of path) {
    if (isRecord(node) && "value" in node && typeof node.id === "string" && key === "value") step = node.id;
    if (node === null || typeof node !== "object") break;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  if (isRecord(node) && typeof node.id === "string" && "value" in node) step = node.id;
  return step;
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const last = issue.path[issue.path.length - 1];
  if (issue.code === "invalid_union" && "discriminator" in issue && last === "type") {
    let container: unknown = input;
    for (const key of issue.path.slice(0, -1)) {
      container = isRecord(container) || Array.isArray(container) ? (container as never)[key] : undefined;
    }
    const kind = isRecord(container) ? container.type : undefined;
    const inTransform = issue.path.includes("input_transforms") || !issue.path.includes("value");
    const parent = issue.path[issue.path.length - 2];
    if (parent !== "value" || inTransform) {
      return `${kind === undefined ? "the transform has no type" : `the transform type ${JSON.stringify(kind)} is not known`}; use "static" or "javascript".`;
    }
    if (kind === "aiagent") return 'the step kind "aiagent" is not supported by Millrace.';
    return `${kind === undefined ? "the step has no kind (type)" : `the step kind ${JSON.stringify(kind)} is not known`}; use one of ${FLOW_MODULE_KINDS.join(", ")}.`;
  }
  if (issue.code === "invalid_value" && last === "language") {
    return `the language is not one Millrace runs; use one of ${RAWSCRIPT_LANGUAGES.join(", ")}.`;
  }
  if (issue.code === "invalid_format" && last === "id") {
    return "a step id may hold only letters, digits, _ and -.";
  }
  if (issue.code === "invalid_type" && issue.message.includes("received undefined")) {
    return last === "id" ? "the step has no id." : `${String(last)} is required.`;
  }
  return `${issue.message.replace(/^Invalid input: /, "")}.`;
}

/**
 * Parses an OpenFlow document (the JSON a Windmill client sends, or flow.yaml once parsed),
 * throwing INVALID_INPUT whose field is the path at fault, e.g. `value.modules[2].value.type`,
 * and whose message names the step.
 */
export function parseOpenFlow(input: unknown): OpenFlow {
  const parsed = openFlowSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const step = stepAt(input, issue.path);
  const sentence = describeIssue(issue, input);
  const message = step === undefined ? capitalize(sentence) : `Step ${step}: ${sentence}`;
  throw invalidInput(formatPath(issue.path) || "flow", message);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
