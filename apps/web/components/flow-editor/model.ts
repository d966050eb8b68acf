// The flow editor's model: an OpenFlow (Windmill's format, as packages/core/src/flows/format.ts
// reads it) edited in place on a copy. Steps are found by id (ids are unique in a flow) and step
// lists by their path in the flow value, the same path the server's validation errors name.
import type { FlowModule, FlowValue, InputTransform, OpenFlow } from "@millrace/core";
import YAML from "yaml";

export type { FlowModule, FlowValue, InputTransform, OpenFlow };

export const LANGUAGES = ["bun", "deno", "python3", "bash", "postgresql"] as const;
export type Language = (typeof LANGUAGES)[number];

export const STEP_KINDS = [
  { kind: "rawscript", label: "Inline script" },
  { kind: "script", label: "Script by path" },
  { kind: "branchone", label: "Branch to one" },
  { kind: "branchall", label: "Branch to all" },
  { kind: "forloopflow", label: "For loop" },
  { kind: "whileloopflow", label: "While loop" },
  { kind: "identity", label: "Identity" },
  { kind: "flow", label: "Sub-flow" },
] as const;
export type StepKind = (typeof STEP_KINDS)[number]["kind"];

export const KIND_LABEL: Record<string, string> = Object.fromEntries(
  STEP_KINDS.map((k) => [k.kind, k.label]),
);

export const TEMPLATES: Record<Language, string> = {
  bash: 'name="$1"\n\necho "Hello $name"\n',
  python3: 'def main(name: str = "world"):\n    return {"greeting": f"Hello {name}"}\n',
  bun: 'export async function main(name: string = "world") {\n  return { greeting: `Hello ${name}` };\n}\n',
  deno: 'export async function main(name: string = "world") {\n  return { greeting: `Hello ${name}` };\n}\n',
  postgresql: "-- $1 name (text) = world\nSELECT 'Hello ' || $1 AS greeting;\n",
};

/** A step list: where it is in the flow value, e.g. ["modules"] or ["modules", 1, "value", "default"]. */
export type ListPath = (string | number)[];

export interface FlowSchema {
  $schema?: string;
  type: "object";
  properties: Record<string, SchemaProperty>;
  required: string[];
  order: string[];
}

export interface SchemaProperty {
  type?: string;
  description?: string;
  default?: unknown;
  format?: string;
  enum?: unknown[];
  items?: { type?: string };
  [key: string]: unknown;
}

export function emptySchema(): FlowSchema {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {},
    required: [],
    order: [],
  };
}

/** A schema as stored (maybe without `order` or `required`) in the shape the forms read. */
export function normalizeSchema(schema: unknown): FlowSchema {
  const raw = (schema && typeof schema === "object" ? schema : {}) as Partial<FlowSchema>;
  const properties = (raw.properties ?? {}) as Record<string, SchemaProperty>;
  const order = Array.isArray(raw.order) ? raw.order.filter((name) => name in properties) : [];
  for (const name of Object.keys(properties)) if (!order.includes(name)) order.push(name);
  return {
    ...emptySchema(),
    ...raw,
    type: "object",
    properties,
    required: Array.isArray(raw.required) ? raw.required : [],
    order,
  };
}

/** The run form's values with the schema's defaults for the inputs left alone (as a run form sends them). */
export function withDefaults(schema: unknown, args: Record<string, unknown>): Record<string, unknown> {
  const normalized = normalizeSchema(schema);
  const out: Record<string, unknown> = {};
  for (const name of normalized.order) {
    const fallback = normalized.properties[name]?.default;
    if (fallback !== undefined) out[name] = fallback;
  }
  return { ...out, ...args };
}

export function emptyFlow(): OpenFlow {
  return { summary: "", value: { modules: [] }, schema: emptySchema() as unknown as Record<string, unknown> };
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Every step of the flow, depth first, in the order they appear (the engine's order). */
export function allSteps(value: FlowValue): { module: FlowModule; list: ListPath; index: number }[] {
  const out: { module: FlowModule; list: ListPath; index: number }[] = [];
  const walk = (modules: FlowModule[], list: ListPath) => {
    modules.forEach((module, index) => {
      out.push({ module, list, index });
      for (const child of childLists(module, [...list, index])) walk(child.modules, child.path);
    });
  };
  walk(value.modules, ["modules"]);
  if (value.failure_module) out.push({ module: value.failure_module, list: ["failure_module"], index: 0 });
  return out;
}

/** The step lists inside a branch or loop step, with a label for each. */
export function childLists(
  module: FlowModule,
  modulePath: ListPath,
): { path: ListPath; modules: FlowModule[]; label: string }[] {
  const value = module.value;
  if (value.type === "forloopflow" || value.type === "whileloopflow") {
    return [{ path: [...modulePath, "value", "modules"], modules: value.modules, label: "Loop body" }];
  }
  if (value.type === "branchone") {
    return [
      ...value.branches.map((branch, i) => ({
        path: [...modulePath, "value", "branches", i, "modules"],
        modules: branch.modules,
        label: branch.summary || `Branch ${i + 1}`,
      })),
      { path: [...modulePath, "value", "default"], modules: value.default, label: "Default" },
    ];
  }
  if (value.type === "branchall") {
    return value.branches.map((branch, i) => ({
      path: [...modulePath, "value", "branches", i, "modules"],
      modules: branch.modules,
      label: branch.summary || `Branch ${i + 1}`,
    }));
  }
  return [];
}

export function getList(value: FlowValue, path: ListPath): FlowModule[] {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let node: any = value;
  for (const key of path) node = node?.[key];
  return Array.isArray(node) ? node : [];
}

export function findStep(value: FlowValue, id: string) {
  return allSteps(value).find((step) => step.module.id === id) ?? null;
}

/** A fresh step id: a, b, … z, then aa, ab, … (Windmill's style), not used yet in the flow. */
export function nextStepId(value: FlowValue): string {
  const used = new Set(allSteps(value).map((step) => step.module.id));
  for (let n = 0; ; n++) {
    let id = "";
    let k = n;
    do {
      id = String.fromCharCode(97 + (k % 26)) + id;
      k = Math.floor(k / 26) - 1;
    } while (k >= 0);
    if (!used.has(id)) return id;
  }
}

export function newModule(kind: StepKind, id: string, language: Language = "bun"): FlowModule {
  switch (kind) {
    case "rawscript":
      return {
        id,
        value: { type: "rawscript", language, content: TEMPLATES[language], input_transforms: {} },
      };
    case "script":
      return { id, value: { type: "script", path: "", input_transforms: {} } };
    case "branchone":
      return {
        id,
        value: { type: "branchone", branches: [{ summary: "", expr: "true", modules: [] }], default: [] },
      };
    case "branchall":
      return {
        id,
        value: { type: "branchall", branches: [{ modules: [] }, { modules: [] }], parallel: false },
      };
    case "forloopflow":
      return {
        id,
        value: {
          type: "forloopflow",
          modules: [],
          iterator: { type: "javascript", expr: "[1, 2, 3]" },
          skip_failures: false,
          parallel: false,
        },
      };
    case "whileloopflow":
      return {
        id,
        value: { type: "whileloopflow", modules: [], skip_failures: false },
        stop_after_if: { expr: "flow_input.iter.index >= 2", skip_if_stopped: false },
      };
    case "identity":
      return { id, value: { type: "identity" } };
    case "flow":
      return { id, value: { type: "flow", path: "", input_transforms: {} } };
  }
}

/** Inserts `module` into the list at `list`, at `index` (the end by default). */
export function insertStep(value: FlowValue, list: ListPath, module: FlowModule, index?: number): FlowValue {
  const next = clone(value);
  const modules = getList(next, list);
  modules.splice(index ?? modules.length, 0, module);
  return next;
}

export function removeStep(value: FlowValue, id: string): FlowValue {
  const next = clone(value);
  if (next.failure_module?.id === id) {
    delete next.failure_module;
    return next;
  }
  const step = findStep(next, id);
  if (step) getList(next, step.list).splice(step.index, 1);
  return next;
}

/** Moves a step up (-1) or down (+1) in its own list. */
export function moveStep(value: FlowValue, id: string, by: -1 | 1): FlowValue {
  const next = clone(value);
  const step = findStep(next, id);
  if (!step || step.list[0] === "failure_module") return value;
  const modules = getList(next, step.list);
  const to = step.index + by;
  if (to < 0 || to >= modules.length) return value;
  const [moved] = modules.splice(step.index, 1);
  modules.splice(to, 0, moved!);
  return next;
}

export function replaceStep(value: FlowValue, id: string, module: FlowModule): FlowValue {
  const next = clone(value);
  if (next.failure_module?.id === id) {
    next.failure_module = module;
    return next;
  }
  const step = findStep(next, id);
  if (step) getList(next, step.list)[step.index] = module;
  return next;
}

/**
 * The ids of the steps whose results a step may read (`results.<id>`): the steps before it in its
 * own list and in every enclosing list, and what they contain (as the server's validation allows).
 */
export function stepsBefore(value: FlowValue, id: string): string[] {
  const out: string[] = [];
  const visit = (modules: FlowModule[], list: ListPath): boolean => {
    for (let i = 0; i < modules.length; i++) {
      const module = modules[i]!;
      if (module.id === id) return true;
      const lists = childLists(module, [...list, i]);
      for (const child of lists) {
        const mark = out.length;
        if (visit(child.modules, child.path)) return true;
        out.length = mark;
      }
      out.push(module.id);
    }
    return false;
  };
  if (!visit(value.modules, ["modules"]) && value.failure_module?.id === id) {
    return allSteps({ ...value, failure_module: undefined }).map((step) => step.module.id);
  }
  return out;
}

/** Whether the step sits inside a loop (its expressions may read flow_input.iter). */
export function insideLoop(value: FlowValue, id: string): boolean {
  const step = findStep(value, id);
  if (!step) return false;
  for (let i = 1; i < step.list.length; i++) {
    if (typeof step.list[i] !== "number") continue;
    const owner = getModuleAt(value, step.list.slice(0, i + 1));
    if (owner && (owner.value.type === "forloopflow" || owner.value.type === "whileloopflow")) return true;
  }
  return false;
}

function getModuleAt(value: FlowValue, path: ListPath): FlowModule | null {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let node: any = value;
  for (const key of path) node = node?.[key];
  return node && typeof node === "object" && "id" in node && "value" in node ? (node as FlowModule) : null;
}

/**
 * The step a server error's field names (`value.modules[1].value.branches[0].modules[0].value…`):
 * the innermost step on that path, or null when the field is the flow's own.
 */
export function stepOfField(value: FlowValue, field: string | undefined): string | null {
  if (!field) return null;
  const keys: (string | number)[] = [];
  for (const match of field.matchAll(/([A-Za-z_$][\w$]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g)) {
    if (match[1] !== undefined) keys.push(match[1]);
    else if (match[2] !== undefined) keys.push(Number(match[2]));
    else if (match[3] !== undefined) keys.push(match[3]);
  }
  if (keys[0] === "value") keys.shift();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let node: any = value;
  let found: string | null = null;
  for (const key of keys) {
    node = node?.[key];
    if (node && typeof node === "object" && typeof node.id === "string" && node.value) found = node.id;
  }
  return found;
}

// The field order of Windmill's flow.yaml; fields not named here follow, in their own order.
const FIELD_ORDER = [
  "summary",
  "description",
  "id",
  "type",
  "language",
  "path",
  "hash",
  "expr",
  "value",
  "content",
  "lock",
  "tag",
  "input_transforms",
  "iterator",
  "skip_failures",
  "parallel",
  "parallelism",
  "branches",
  "default",
  "modules",
  "failure_module",
  "skip_if",
  "stop_after_if",
  "sleep",
  "suspend",
  "retry",
  "timeout",
  "continue_on_error",
  "mock",
  "concurrency",
  "early_return",
  "schema",
  // JSON schema (the flow's input, a resume form)
  "$schema",
  "properties",
  "required",
  "order",
];
const RANK = new Map(FIELD_ORDER.map((field, index) => [field, index]));
/** Maps whose keys the author names (argument names): kept in a fixed order, A to Z. */
const NAMED_KEYS = new Set(["input_transforms", "properties"]);

/**
 * A copy with every object's fields in one order, so that the YAML view reads the same before and
 * after a save: the server stores flows as jsonb, which keeps keys shortest first.
 */
function canonical(node: unknown, named = false): unknown {
  if (Array.isArray(node)) return node.map((item) => canonical(item));
  if (!node || typeof node !== "object") return node;
  const entries = Object.entries(node as Record<string, unknown>);
  entries.sort(([a], [b]) =>
    named ? a.localeCompare(b) : (RANK.get(a) ?? FIELD_ORDER.length) - (RANK.get(b) ?? FIELD_ORDER.length),
  );
  return Object.fromEntries(entries.map(([key, value]) => [key, canonical(value, NAMED_KEYS.has(key))]));
}

/** The flow as YAML, in the field order of Windmill's flow.yaml. */
export function toYaml(flow: OpenFlow): string {
  const ordered: Record<string, unknown> = { summary: flow.summary ?? "" };
  if (flow.description) ordered.description = flow.description;
  ordered.value = canonical(flow.value);
  if (flow.schema) {
    const schema = canonical(flow.schema) as Record<string, unknown>;
    const order = Array.isArray(flow.schema.order) ? (flow.schema.order as string[]) : [];
    const properties = schema.properties as Record<string, unknown> | undefined;
    // The form's order, where the schema gives one.
    if (properties && order.length > 0) {
      const keys = [
        ...order.filter((key) => key in properties),
        ...Object.keys(properties).filter((key) => !order.includes(key)),
      ];
      schema.properties = Object.fromEntries(keys.map((key) => [key, properties[key]]));
    }
    ordered.schema = schema;
  }
  return YAML.stringify(ordered, { lineWidth: 0 });
}

/** Parses the YAML view; throws an Error with a sentence when it is not a flow. */
export function fromYaml(text: string): OpenFlow {
  let parsed: unknown;
  try {
    parsed = YAML.parse(text);
  } catch (error) {
    throw new Error(`The YAML does not parse: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
    throw new Error("The YAML must be a mapping with summary, value and schema.");
  const flow = parsed as Partial<OpenFlow>;
  if (!flow.value || typeof flow.value !== "object" || !Array.isArray(flow.value.modules))
    throw new Error("The flow needs value.modules, a list of steps.");
  for (const step of allSteps(flow.value)) {
    if (!step.module || typeof step.module !== "object" || typeof step.module.id !== "string")
      throw new Error("Every step needs an id.");
    if (!step.module.value || typeof step.module.value !== "object")
      throw new Error(`Step ${step.module.id} needs a value with its type.`);
  }
  return {
    summary: typeof flow.summary === "string" ? flow.summary : "",
    ...(typeof flow.description === "string" ? { description: flow.description } : {}),
    value: flow.value,
    ...(flow.schema ? { schema: flow.schema } : {}),
  };
}

/** A short line saying what a step does, for its node. */
export function stepLabel(module: FlowModule): string {
  const value = module.value;
  if (module.summary) return module.summary;
  switch (value.type) {
    case "rawscript":
      return `Inline ${value.language}`;
    case "script":
      return value.path || "Script (no path yet)";
    case "flow":
      return value.path;
    default:
      return KIND_LABEL[value.type] ?? value.type;
  }
}

export function hasInputs(module: FlowModule): boolean {
  return module.value.type === "rawscript" || module.value.type === "script" || module.value.type === "flow";
}

export function transformsOf(module: FlowModule): Record<string, InputTransform> {
  const value = module.value;
  return value.type === "rawscript" || value.type === "script" || value.type === "flow"
    ? (value.input_transforms ?? {})
    : {};
}
