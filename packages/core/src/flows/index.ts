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
export {
  checkOpenFlow,
  flowSteps,
  isHubPath,
  validateFlow,
  type FlowStep,
  type FlowWarning,
  type ValidateFlowOptions,
} from "./validate.ts";
export { canonicalLock, modernExpression, normalizeFlowValue } from "./normalize.ts";
export {
  archiveFlow,
  checkFlow,
  createFlow,
  deleteFlow,
  flowExists,
  flowHistory,
  getFlow,
  listFlows,
  updateFlow,
  MAX_FLOW_BYTES,
  type DeployedFlowAnswer,
  type FlowInput,
  type FlowVersionInfo,
  type ListFlowsInput,
  type StoredFlow,
} from "./store.ts";
export * from "./engine/index.ts";
export {
  decideFlowApproval,
  flowApproval,
  getFlowRun,
  testFlowStep,
  MAX_FLOW_RUN_STEPS,
  type FlowApproval,
  type FlowRunStepJob,
  type TestStepInput,
} from "./editor.ts";
export { FLOW_DEPENDENCIES_KIND, inlineSteps, runFlowDependencies, type InlineStep } from "./dependencies.ts";
