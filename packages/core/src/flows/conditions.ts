// The expressions that steer a flow rather than feed a step: skip_if, stop_after_if, a
// branch-one's conditions, a for-loop's iterator, a transform such as sleep or timeout. Each is
// a thin rule over the sandbox (expressions.ts) so that the engine applies Windmill's meaning in
// one place: conditions by JavaScript truthiness, the first true branch wins, an iterator must
// give a list.
import {
  ExpressionError,
  evaluateExpression,
  withExpressions,
  type ExpressionEnv,
  type ExpressionLimits,
} from "./expressions.ts";
import { type InputTransform } from "./format.ts";

/** Whether a condition (skip_if, stop_after_if, while-loop stop) holds: JavaScript truthiness. */
export async function evaluateCondition(
  expr: string,
  env: ExpressionEnv,
  limits?: ExpressionLimits,
): Promise<boolean> {
  return withExpressions([expr], env, limits, ({ test }) => test(expr));
}

/**
 * The branch-one branch to run: the index of the first branch whose condition holds, evaluated
 * in order in one sandbox (later conditions are not run), or -1 for the default branch.
 */
export async function chooseBranch(
  branches: readonly { expr: string }[],
  env: ExpressionEnv,
  limits?: ExpressionLimits,
): Promise<number> {
  if (branches.length === 0) return -1;
  const exprs = branches.map((branch) => branch.expr);
  return withExpressions(exprs, env, limits, ({ test }) =>
    exprs.findIndex((expr, index) => test(expr, `branches[${index}]`)),
  );
}

/** A transform's value (sleep, timeout, parallelism, user_groups_required): static or evaluated. */
export async function evaluateTransform(
  transform: InputTransform,
  env: ExpressionEnv,
  limits?: ExpressionLimits,
): Promise<unknown> {
  return transform.type === "javascript" ? evaluateExpression(transform.expr, env, limits) : transform.value;
}

/** A for-loop's items: its iterator must give a list. */
export async function evaluateIterator(
  iterator: InputTransform,
  env: ExpressionEnv,
  limits?: ExpressionLimits,
): Promise<unknown[]> {
  const items = await evaluateTransform(iterator, env, limits);
  if (!Array.isArray(items)) {
    const expr = iterator.type === "javascript" ? iterator.expr : JSON.stringify(iterator.value ?? null);
    const got = items === null ? "null" : typeof items;
    throw new ExpressionError(expr, "error", `The loop's iterator gave ${got}, not a list.`, "iterator");
  }
  return items;
}
