export {
  autoscalingConfigSchema,
  DEFAULT_COOLDOWN_SECS,
  MAX_AUTOSCALED_WORKERS,
  type AutoscalingConfig,
  type AutoscalingIntegration,
} from "./config.ts";
export {
  decideScaling,
  SCALE_IN_AFTER_SECS,
  SCALE_IN_OCCUPANCY,
  SCALE_OUT_OCCUPANCY,
  type AutoscalingEventType,
  type GroupLoad,
  type ScalingDecision,
} from "./decide.ts";
export {
  defaultDeploymentName,
  fromKubeconfig,
  scaleDeployment,
  type KubernetesCredentials,
} from "./kubernetes.ts";
export { runCommand } from "./integrations.ts";
export {
  listAutoscaling,
  listAutoscalingEvents,
  type AutoscalingEventView,
  type AutoscalingGroupView,
  type WindmillAutoscalingEvent,
} from "./list.ts";
export {
  AUTOSCALING_CHANNEL,
  deleteOldAutoscalingEvents,
  readDesiredWorkers,
  runAutoscaler,
  type AppliedDecision,
} from "./run.ts";
