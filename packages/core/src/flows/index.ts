export * from "./format.ts";
export {
  DEFAULT_EXPRESSION_LIMITS,
  ExpressionError,
  evaluateExpression,
  evaluateTransforms,
  expressionSyntaxErrors,
  loadExpressionSandbox,
  withExpressions,
  type ExpressionEnv,
  type ExpressionEvaluator,
  type ExpressionFailureReason,
  type ExpressionLimits,
  type JsonValue,
} from "./expressions.ts";
export { chooseBranch, evaluateCondition, evaluateIterator, evaluateTransform } from "./conditions.ts";
export { resultReferences, type ResultReferences } from "./references.ts";
export { flowSteps, validateFlow, type FlowStep, type ValidateFlowOptions } from "./validate.ts";
