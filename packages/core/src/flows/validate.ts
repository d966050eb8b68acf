// What a flow must satisfy before it is stored, beyond its shape (format.ts): unique step ids,
// expressions that compile and `results.<id>` reads of steps that have run by then on every path.
// Each refusal is INVALID_INPUT naming the field and the step. Scripts and flows that a step
// calls but this instance does not have (hub scripts, paths not deployed yet) are no refusal:
// Windmill deploys such a flow and fails the step when it runs, and so does Millrace, saying so
// in warnings at deploy.
import { invalidInput } from "../errors.ts";
import { expressionSyntaxErrors } from "./expressions.ts";
import { formatPath, parseOpenFlow, type FlowModule, type InputTransform, type OpenFlow } from "./format.ts";
import { normalizeFlowValue } from "./normalize.ts";
import { resultReferences } from "./references.ts";

/** Something a deploy accepted that will not work as it stands, naming the field. */
export type FlowWarning = { field: string; message: string };

/** Hub scripts (`hub/<id>/…`) live on Windmill's hub, which a self-hosted Millrace does not have. */
export function isHubPath(path: string): boolean {
  return path.startsWith("hub/");
}

export const HUB_UNAVAILABLE = "hub scripts need the hub; this instance has none";

export type ValidateFlowOptions = {
  /** Whether a deployed script exists at `path` (and, when given, with that `hash`). */
  scriptExists?: (path: string, hash?: string) => boolean | Promise<boolean>;
  /** Whether a deployed flow exists at `path` (for `flow` steps). */
  flowExists?: (path: string) => boolean | Promise<boolean>;
};

type Path = (string | number)[];

/** One expression of the flow, with what it may read. */
type Expression = {
  expr: string;
  path: Path;
  /** The step it belongs to; undefined for the flow's own expressions. */
  step: string | undefined;
  /** What it is, in a sentence: "input x", "skip_if expression". */
  what: string;
  /** The step ids whose results it may read. */
  visible: ReadonlySet<string>;
};

export type FlowStep = { module: FlowModule; path: Path };

/**
 * Every step in the flow in document order, nested ones (loop bodies, branches) right after
 * their parent, then the failure and preprocessor modules; `path` as in errors' fields.
 */
export function flowSteps(flow: OpenFlow): FlowStep[] {
  const out: FlowStep[] = [];
  const walk = (modules: FlowModule[], path: Path) => {
    modules.forEach((module, index) => {
      const at = [...path, index];
      out.push({ module, path: at });
      for (const [children, childPath] of childLists(module, at)) walk(children, childPath);
    });
  };
  walk(flow.value.modules, ["value", "modules"]);
  if (flow.value.failure_module)
    out.push({ module: flow.value.failure_module, path: ["value", "failure_module"] });
  if (flow.value.preprocessor_module) {
    out.push({ module: flow.value.preprocessor_module, path: ["value", "preprocessor_module"] });
  }
  return out;
}

/** The step lists nested in a step (loop bodies, branches), with their paths. */
function childLists(module: FlowModule, path: Path): [FlowModule[], Path][] {
  const value = module.value;
  switch (value.type) {
    case "forloopflow":
    case "whileloopflow":
      return [[value.modules, [...path, "value", "modules"]]];
    case "branchone":
      return [
        ...value.branches.map((branch, b): [FlowModule[], Path] => [
          branch.modules,
          [...path, "value", "branches", b, "modules"],
        ]),
        [value.default, [...path, "value", "default"]],
      ];
    case "branchall":
      return value.branches.map((branch, b): [FlowModule[], Path] => [
        branch.modules,
        [...path, "value", "branches", b, "modules"],
      ]);
    default:
      return [];
  }
}

function idsWithin(modules: FlowModule[]): string[] {
  const ids: string[] = [];
  const walk = (list: FlowModule[]) => {
    for (const module of list) {
      ids.push(module.id);
      for (const [children] of childLists(module, [])) walk(children);
    }
  };
  walk(modules);
  return ids;
}

function transformExpression(
  transform: InputTransform | undefined,
  path: Path,
  step: string,
  what: string,
  visible: ReadonlySet<string>,
): Expression[] {
  return transform?.type === "javascript"
    ? [{ expr: transform.expr, path: [...path, "expr"], step, what, visible }]
    : [];
}

/** The expressions of one step (not of its children), each with what it may read. */
function stepExpressions(module: FlowModule, path: Path, before: ReadonlySet<string>): Expression[] {
  const id = module.id;
  const after = new Set([...before, id]);
  const out: Expression[] = [];
  const value = module.value;
  if ("input_transforms" in value) {
    for (const [name, transform] of Object.entries(value.input_transforms)) {
      out.push(
        ...transformExpression(
          transform,
          [...path, "value", "input_transforms", name],
          id,
          `input ${name}`,
          before,
        ),
      );
    }
  }
  if (module.skip_if)
    out.push({
      expr: module.skip_if.expr,
      path: [...path, "skip_if", "expr"],
      step: id,
      what: "skip_if expression",
      visible: before,
    });
  out.push(...transformExpression(module.sleep, [...path, "sleep"], id, "sleep expression", before));
  out.push(...transformExpression(module.timeout, [...path, "timeout"], id, "timeout expression", before));
  out.push(
    ...transformExpression(
      module.suspend?.user_groups_required,
      [...path, "suspend", "user_groups_required"],
      id,
      "user_groups_required expression",
      before,
    ),
  );
  if (value.type === "forloopflow") {
    out.push(...transformExpression(value.iterator, [...path, "value", "iterator"], id, "iterator", before));
  }
  if (value.type === "forloopflow" || value.type === "whileloopflow") {
    out.push(
      ...transformExpression(
        value.parallelism,
        [...path, "value", "parallelism"],
        id,
        "parallelism expression",
        before,
      ),
    );
  }
  if (value.type === "branchone") {
    value.branches.forEach((branch, b) => {
      out.push({
        expr: branch.expr,
        path: [...path, "value", "branches", b, "expr"],
        step: id,
        what: `branch ${b} condition`,
        visible: before,
      });
    });
  }
  // Evaluated once the step has run: its own result is there (as `result` and `results.<id>`).
  if (module.stop_after_if) {
    out.push({
      expr: module.stop_after_if.expr,
      path: [...path, "stop_after_if", "expr"],
      step: id,
      what: "stop_after_if expression",
      visible: after,
    });
  }
  if (module.stop_after_all_iters_if) {
    out.push({
      expr: module.stop_after_all_iters_if.expr,
      path: [...path, "stop_after_all_iters_if", "expr"],
      step: id,
      what: "stop_after_all_iters_if expression",
      visible: after,
    });
  }
  if (module.retry?.retry_if) {
    out.push({
      expr: module.retry.retry_if.expr,
      path: [...path, "retry", "retry_if", "expr"],
      step: id,
      what: "retry_if expression",
      visible: before,
    });
  }
  return out;
}

/**
 * Every expression in the flow with the steps it may read: those before it in its own list, the
 * ones before each enclosing loop or branch, in a while loop every step of that loop (from the
 * previous iteration); after a loop or branch only its own id. The failure module reads all.
 */
function flowExpressions(flow: OpenFlow): Expression[] {
  const out: Expression[] = [];
  const walk = (modules: FlowModule[], path: Path, outer: ReadonlySet<string>) => {
    const visible = new Set(outer);
    modules.forEach((module, index) => {
      const at = [...path, index];
      out.push(...stepExpressions(module, at, new Set(visible)));
      const inner = new Set(visible);
      if (module.value.type === "whileloopflow")
        for (const id of idsWithin(module.value.modules)) inner.add(id);
      for (const [children, childPath] of childLists(module, at)) walk(children, childPath, inner);
      visible.add(module.id);
    });
  };
  walk(flow.value.modules, ["value", "modules"], new Set());
  const everything = new Set(idsWithin(flow.value.modules));
  if (flow.value.failure_module) {
    out.push(...stepExpressions(flow.value.failure_module, ["value", "failure_module"], everything));
  }
  if (flow.value.preprocessor_module) {
    out.push(...stepExpressions(flow.value.preprocessor_module, ["value", "preprocessor_module"], new Set()));
  }
  if (flow.value.skip_expr !== undefined) {
    out.push({
      expr: flow.value.skip_expr,
      path: ["value", "skip_expr"],
      step: undefined,
      what: "skip expression",
      visible: new Set(),
    });
  }
  return out;
}

function refuse(path: Path, step: string | undefined, sentence: string): never {
  const message = step === undefined ? `The flow's ${sentence}` : `Step ${step}: its ${sentence}`;
  throw invalidInput(formatPath(path), message);
}

/** The document with its value read as Windmill reads it (normalize.ts). */
function normalized(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  const document = input as Record<string, unknown>;
  return "value" in document ? { ...document, value: normalizeFlowValue(document.value) } : document;
}

/**
 * Parses and checks a flow for deploy. Returns the parsed flow; throws INVALID_INPUT naming the
 * field (`value.modules[2].value.input_transforms.x.expr`) and the step at the first fault.
 */
export async function validateFlow(input: unknown, options: ValidateFlowOptions = {}): Promise<OpenFlow> {
  return (await checkOpenFlow(input, options)).flow;
}

/**
 * validateFlow, with the warnings of the deploy: the steps that call a hub script or a script
 * (flow) this workspace does not have. The flow returned is normalized (normalize.ts): callers
 * that store it keep the document as sent instead.
 */
export async function checkOpenFlow(
  input: unknown,
  options: ValidateFlowOptions = {},
): Promise<{ flow: OpenFlow; warnings: FlowWarning[] }> {
  const flow = parseOpenFlow(normalized(input));
  const steps = flowSteps(flow);

  const seen = new Map<string, Path>();
  for (const { module, path } of steps) {
    const first = seen.get(module.id);
    if (first) {
      throw invalidInput(
        formatPath([...path, "id"]),
        `Step ${module.id}: another step already has the id ${module.id} (${formatPath(first)}); step ids must be unique in the flow.`,
      );
    }
    seen.set(module.id, path);
  }
  for (const key of ["failure_module", "preprocessor_module"] as const) {
    const special = flow.value[key];
    if (special && special.value.type !== "script" && special.value.type !== "rawscript") {
      throw invalidInput(
        formatPath(["value", key, "value", "type"]),
        `Step ${special.id}: the ${key} must be a script or an inline script, not ${special.value.type}.`,
      );
    }
  }

  const expressions = flowExpressions(flow);
  const syntax = await expressionSyntaxErrors(expressions.map((e) => e.expr));
  expressions.forEach((expression, index) => {
    const error = syntax[index];
    if (error !== undefined)
      refuse(expression.path, expression.step, `${expression.what} does not compile: ${error}`);
  });

  for (const expression of expressions) {
    const refs = resultReferences(expression.expr);
    for (const id of refs.steps) {
      if (expression.visible.has(id)) continue;
      const why = !seen.has(id)
        ? "a step the flow does not have"
        : id === expression.step
          ? "the step itself, which has not run yet"
          : "a step that does not run before it";
      refuse(expression.path, expression.step, `${expression.what} refers to results.${id}, ${why}.`);
    }
  }

  const warnings: FlowWarning[] = [];
  for (const { module, path } of steps) {
    const value = module.value;
    if (value.type === "script" && isHubPath(value.path)) {
      warnings.push({
        field: formatPath([...path, "value", "path"]),
        message: `Step ${module.id}: ${value.path}: ${HUB_UNAVAILABLE}. The step will fail when it runs.`,
      });
      continue;
    }
    if (
      value.type === "script" &&
      options.scriptExists &&
      !(await options.scriptExists(value.path, value.hash))
    ) {
      const what = value.hash
        ? `version ${value.hash} of the script ${value.path}`
        : `the script ${value.path}`;
      warnings.push({
        field: formatPath([...path, "value", value.hash ? "hash" : "path"]),
        message: `Step ${module.id}: ${what} does not exist (yet). The step will fail when it runs unless it is deployed by then.`,
      });
    }
    if (value.type === "flow" && options.flowExists && !(await options.flowExists(value.path))) {
      warnings.push({
        field: formatPath([...path, "value", "path"]),
        message: `Step ${module.id}: the flow ${value.path} does not exist (yet). The step will fail when it runs unless it is deployed by then.`,
      });
    }
  }
  return { flow, warnings };
}
