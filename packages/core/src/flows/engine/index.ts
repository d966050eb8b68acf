export {
  advanceFlows,
  cancelFlowJob,
  runFlowByPath,
  runFlowPreview,
  startDueQueuedFlows,
  waitForFlowResult,
  FLOW_JOB_KINDS,
} from "./run.ts";
export {
  FlowMachine,
  initialState,
  MAX_WHILE_ITERATIONS,
  type FlowState,
  type StepStatus,
  type TriggerEvent,
} from "./machine.ts";
export { sweepFlows, type FlowSweep } from "./sweep.ts";
export {
  getResumeUrls,
  getSuspendedJobFlow,
  parseResumeId,
  resumeSuspendedFlowAsOwner,
  resumeSuspendedJob,
  type ResumeRequest,
  type ResumeUrls,
} from "./approvals.ts";
export { restartFlowAtStep, type RestartFlowInput } from "./restart.ts";
