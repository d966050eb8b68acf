export * from "./format.ts";
export {
  DEFAULT_EXPRESSION_LIMITS,
  ExpressionError,
  evaluateExpression,
  evaluateTransforms,
  expressionSyntaxErrors,
  loadExpressionSandbox,
  type ExpressionEnv,
  type ExpressionFailureReason,
  type ExpressionLimits,
  type JsonValue,
} from "./expressions.ts";
export { resultReferences, type ResultReferences } from "./references.ts";
export { validateFlow, type ValidateFlowOptions } from "./validate.ts";
