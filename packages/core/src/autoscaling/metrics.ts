// The autoscaler's Prometheus figures, on the registry of the server that leads (the other servers
// expose none of them): aggregate with max() for the gauges and sum() for the counter.
import client from "prom-client";
import { millraceMetrics } from "../metrics/registry.ts";
import type { GroupLoad, ScalingDecision } from "./decide.ts";

interface AutoscalingMetrics {
  observe(group: string, load: GroupLoad): void;
  desired(group: string, count: number): void;
  decided(group: string, decision: ScalingDecision): void;
}

const holder = globalThis as unknown as { __millraceAutoscalingMetrics?: AutoscalingMetrics };

export function autoscalingMetrics(): AutoscalingMetrics {
  if (holder.__millraceAutoscalingMetrics) return holder.__millraceAutoscalingMetrics;
  const { registry } = millraceMetrics();
  const desired = new client.Gauge({
    name: "millrace_autoscaling_desired_workers",
    help: "Workers the autoscaler last decided each autoscaled worker group should have.",
    labelNames: ["group"],
    registers: [registry],
  });
  const waiting = new client.Gauge({
    name: "millrace_autoscaling_waiting_jobs",
    help: "Jobs due on an autoscaled group's tags when the autoscaler last looked.",
    labelNames: ["group"],
    registers: [registry],
  });
  const decisions = new client.Counter({
    name: "millrace_autoscaling_decisions_total",
    help: "Changes of an autoscaled group's worker count decided by this server, by event type (scale_out, scale_in, bounds).",
    labelNames: ["group", "event_type"],
    registers: [registry],
  });
  holder.__millraceAutoscalingMetrics = {
    observe(group, load) {
      waiting.set({ group }, load.waiting);
    },
    desired(group, count) {
      desired.set({ group }, count);
    },
    decided(group, decision) {
      desired.set({ group }, decision.to);
      decisions.inc({ group, event_type: decision.eventType });
    },
  };
  return holder.__millraceAutoscalingMetrics;
}
