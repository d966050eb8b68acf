import type { StepRunStatus } from "@/components/flow-editor/flow-graph";

/**
 * A top-level step's status from its Windmill flow_status entry, as every page names it: the run
 * page, the flow graph and the approval page say the same word for the same state ("suspended"
 * for a step waiting for approvals, "waiting" for one whose turn has not come).
 */
export function flowStepStatus(
  step: { type: string; skipped?: boolean },
  flow: { finished: boolean; canceled?: boolean; suspendedHere?: boolean },
): StepRunStatus {
  if (step.skipped) return "skipped";
  if (!flow.finished && (flow.suspendedHere || step.type === "WaitingForEvents")) return "suspended";
  switch (step.type) {
    case "Success":
      return "success";
    case "Failure":
      return "failure";
    case "InProgress":
      return flow.finished && flow.canceled ? "canceled" : "running";
    case "WaitingForExecutor":
      return flow.finished && flow.canceled ? "canceled" : "queued";
    default:
      // A step the flow never reached is skipped once the flow is over.
      return flow.finished ? "skipped" : "waiting";
  }
}
