export {
  instanceGovernance,
  workspaceGovernance,
  STALE_SCRIPT_DAYS,
  RUNS_WINDOW_DAYS,
  type GovernanceReport,
  type GovernanceWarning,
  type WorkspaceGovernance,
} from "./report.ts";
