"use client";
import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import type { StepRunStatus } from "@/components/flow-editor/flow-graph";
import { childLists, type FlowModule, type FlowValue } from "@/components/flow-editor/model";
import { useTRPC } from "@/lib/trpc";
import { flowStepStatus } from "./step-status";

const FINISHED = new Set(["success", "failure", "canceled"]);
/** How often an unfinished flow run is read again (the run view's live updates). */
export const FLOW_POLL_MS = 500;

export interface StepJob {
  id: string;
  stepId: string | null;
  status: string;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  args: unknown;
  result: unknown;
}

interface TopStatus {
  id: string;
  type: "WaitingForPriorSteps" | "InProgress" | "Success" | "Failure";
  skipped?: boolean;
  iterator?: { index: number; itered_len: number };
  branch_chosen?: { type: "branch" | "default"; branch?: number };
  approvers?: { approver: string; resume_id?: number; approved?: boolean }[];
  [key: string]: unknown;
}

export interface FlowApproval {
  job: string;
  step: string;
  required: number;
  deadline: string;
  approvers: { approver: string; cancel: boolean }[];
  canApprove: boolean;
  canCancel: boolean;
  reason: string | null;
}

export interface FlowRunState {
  /** The approval the run waits for, if any. */
  approval: FlowApproval | null;
  status: string;
  finished: boolean;
  value: FlowValue | null;
  statuses: Record<string, StepRunStatus>;
  /** Each step's jobs, oldest first (one per loop iteration or retry). */
  jobs: Record<string, StepJob[]>;
  /** Each step's latest result and arguments (the editor's previews and completion). */
  results: Record<string, unknown>;
  args: Record<string, unknown>;
  top: Record<string, TopStatus>;
  flowResult: unknown;
  flowStatus: Record<string, unknown> | null;
}

function jobStatus(status: string): StepRunStatus {
  if (status === "success" || status === "failure" || status === "canceled") return status;
  if (status === "running") return "running";
  return "queued";
}

const RANK: Record<StepRunStatus, number> = {
  suspended: 7,
  running: 6,
  queued: 5,
  failure: 4,
  canceled: 3,
  success: 2,
  skipped: 1,
  waiting: 0,
};

/** Each step's status in a run, from its jobs, the top-level flow_status and whether the flow is over. */
export function runState(data: {
  job: { status: string; result: unknown };
  rawFlow: unknown;
  flowStatus: unknown;
  steps: StepJob[];
  approval?: FlowApproval | null;
}): FlowRunState {
  const approval = data.approval ?? null;
  const value = (data.rawFlow as FlowValue | null) ?? null;
  const finished = FINISHED.has(data.job.status);
  const jobs: Record<string, StepJob[]> = {};
  for (const step of data.steps) {
    if (!step.stepId) continue;
    (jobs[step.stepId] ??= []).push(step);
  }
  const flowStatus = (data.flowStatus as Record<string, unknown> | null) ?? null;
  const top: Record<string, TopStatus> = {};
  for (const module of (flowStatus?.modules as TopStatus[] | undefined) ?? []) top[module.id] = module;
  const failureModule = flowStatus?.failure_module as TopStatus | undefined;
  if (failureModule?.id) top[failureModule.id] = failureModule;
  const statuses: Record<string, StepRunStatus> = {};
  const results: Record<string, unknown> = {};
  const args: Record<string, unknown> = {};
  if (!value) {
    return {
      approval,
      status: data.job.status,
      finished,
      value,
      statuses,
      jobs,
      results,
      args,
      top,
      flowResult: data.job.result,
      flowStatus,
    };
  }
  const visit = (module: FlowModule, path: (string | number)[]): StepRunStatus => {
    const lists = childLists(module, path);
    const children = lists.flatMap((list) => list.modules.map((child, i) => visit(child, [...list.path, i])));
    const own = jobs[module.id];
    const topStatus = top[module.id];
    let status: StepRunStatus = "waiting";
    if (own && own.length > 0) {
      const last = own[own.length - 1]!;
      status = jobStatus(last.status);
      if (FINISHED.has(last.status)) results[module.id] = last.result;
      args[module.id] = last.args;
    } else if (children.length > 0 && children.some((child) => child !== "waiting" && child !== "skipped")) {
      status = children.reduce<StepRunStatus>(
        (worst, child) => (RANK[child] > RANK[worst] ? child : worst),
        "waiting",
      );
      if (status === "skipped") status = "success";
    }
    if (topStatus) {
      if (topStatus.skipped) status = "skipped";
      else if (topStatus.type === "Failure" && status !== "canceled") status = "failure";
      // No job says more: the same reading of flow_status as the approval page's.
      else if (status === "waiting")
        status = flowStepStatus(topStatus, { finished, canceled: data.job.status === "canceled" });
    }
    if (!finished && (approval?.step === module.id || (topStatus?.type as string) === "WaitingForEvents"))
      status = "suspended";
    if (finished && status === "waiting") status = "skipped";
    if (finished && (status === "running" || status === "queued"))
      status = data.job.status === "canceled" ? "canceled" : status;
    statuses[module.id] = status;
    return status;
  };
  value.modules.forEach((module, i) => visit(module, ["modules", i]));
  if (value.failure_module) {
    const failure = value.failure_module;
    const own = jobs[failure.id];
    if (own && own.length > 0) {
      const last = own[own.length - 1]!;
      statuses[failure.id] = jobStatus(last.status);
      if (FINISHED.has(last.status)) results[failure.id] = last.result;
      args[failure.id] = last.args;
    } else statuses[failure.id] = finished ? "skipped" : "waiting";
  }
  return {
    approval,
    status: data.job.status,
    finished,
    value,
    statuses,
    jobs,
    results,
    args,
    top,
    flowResult: data.job.result,
    flowStatus,
  };
}

/** A flow run, read again every FLOW_POLL_MS until it finishes. */
export function useFlowRun(workspace: string, id: string | null) {
  const trpc = useTRPC();
  const query = useQuery({
    ...trpc.flow.runStatus.queryOptions({ workspace, id: id ?? "" }),
    enabled: !!id,
    retry: false,
    refetchInterval: (q) => {
      const data = q.state.data;
      if (!data && q.state.error) return false;
      return data && FINISHED.has(data.job.status) ? false : FLOW_POLL_MS;
    },
  });
  const state = useMemo(() => (query.data ? runState(query.data as never) : null), [query.data]);
  return { query, state };
}
