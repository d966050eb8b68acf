export {
  millraceMetrics,
  metricsExposition,
  statusClass,
  watchDatabasePool,
  type MillraceMetrics,
} from "./registry.ts";
export { registerFleetMetrics } from "./fleet-metrics.ts";
export { parseMetricsAddr, startMetricsListener } from "./listener.ts";
