"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Check, ChevronLeft, ChevronRight, X } from "lucide-react";
import { toast } from "sonner";
import { useCallback, useEffect, useState, type ReactNode } from "react";
import { FlowGraph, type GraphSelection } from "@/components/flow-editor/flow-graph";
import { findStep, KIND_LABEL } from "@/components/flow-editor/model";
import { StatusBadge } from "@/components/status-badge";
import { Button } from "@/components/ui/button";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { useFlowRun, type FlowRunState } from "./use-flow-run";

/** The approval a run waits for: who approved so far, and Approve / Deny for those who may. */
function Approval({ workspace, id, state }: { workspace: string; id: string; state: FlowRunState }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const decide = useMutation(
    trpc.flow.decideApproval.mutationOptions({
      onSuccess: async (_data, input) => {
        toast.success(input.cancel ? "Denied: the flow is canceled" : "Approved");
        await queryClient.invalidateQueries(trpc.flow.runStatus.pathFilter());
        await queryClient.invalidateQueries(trpc.job.get.pathFilter());
      },
    }),
  );
  const approval = state.approval;
  if (!approval) return null;
  const approvals = approval.approvers.filter((each) => !each.cancel);
  return (
    <section
      className="panel stack border-warn"
      aria-labelledby="flow-approval-title"
      data-testid="flow-approval"
    >
      <h2 id="flow-approval-title" className="m-0 text-base">
        Step <code>{approval.step}</code> waits for approval
      </h2>
      <p className="m-0" data-testid="flow-approval-count">
        {approvals.length} of {approval.required} approval{approval.required === 1 ? "" : "s"} received
        {approvals.length > 0 && <> (from {approvals.map((each) => each.approver).join(", ")})</>}; it times
        out at {new Date(approval.deadline).toLocaleString()}.
      </p>
      {approval.reason && <p className="muted m-0">{approval.reason}</p>}
      {(approval.canApprove || approval.canCancel) && (
        <div className="row">
          {approval.canApprove && (
            <Button
              variant="primary"
              disabled={decide.isPending}
              onClick={() => decide.mutate({ workspace, id, cancel: false })}
            >
              <Check aria-hidden /> Approve
            </Button>
          )}
          {approval.canCancel && (
            <Button
              variant="destructive"
              disabled={decide.isPending}
              onClick={() => decide.mutate({ workspace, id, cancel: true })}
            >
              <X aria-hidden /> Deny
            </Button>
          )}
        </div>
      )}
      {decide.error && (
        <p className="error m-0" role="alert">
          {errorMessage(decide.error)}
        </p>
      )}
    </section>
  );
}

/** The selected step's runs (one per loop iteration or retry), browsable, each shown as a job. */
function StepDetail({
  state,
  stepId,
  renderJob,
}: {
  state: FlowRunState;
  stepId: string;
  renderJob: (jobId: string) => ReactNode;
}) {
  const jobs = state.jobs[stepId] ?? [];
  const [index, setIndex] = useState(Math.max(jobs.length - 1, 0));
  // Follow the newest run while the flow is running, unless the reader picked another one.
  const [pinned, setPinned] = useState(false);
  useEffect(() => {
    if (!pinned) setIndex(Math.max(jobs.length - 1, 0));
  }, [jobs.length, pinned]);
  const module = state.value ? findStep(state.value, stepId)?.module : null;
  const top = state.top[stepId];
  const status = state.statuses[stepId] ?? "waiting";
  const job = jobs[Math.min(index, jobs.length - 1)];
  return (
    <section className="stack min-w-0" aria-label={`Step ${stepId}`} data-testid="flow-step-detail">
      <div className="row flex-wrap items-center">
        <h2 className="m-0 text-base">
          Step <code>{stepId}</code>
        </h2>
        <span className="muted">{module ? (KIND_LABEL[module.value.type] ?? module.value.type) : ""}</span>
        <StatusBadge status={status} />
      </div>
      {top?.iterator && (
        <p className="m-0 muted" data-testid="loop-progress">
          Iteration {Math.min(top.iterator.index + 1, top.iterator.itered_len)} of {top.iterator.itered_len}
        </p>
      )}
      {top?.branch_chosen && (
        <p className="m-0 muted">
          Chose{" "}
          {top.branch_chosen.type === "default"
            ? "the default branch"
            : `branch ${(top.branch_chosen.branch ?? 0) + 1}`}
          .
        </p>
      )}
      {jobs.length > 1 && (
        <div className="row items-center" role="group" aria-label="Runs of this step">
          <Button
            size="icon"
            variant="ghost"
            aria-label="Previous run of this step"
            disabled={index === 0}
            onClick={() => {
              setPinned(true);
              setIndex((i) => Math.max(i - 1, 0));
            }}
          >
            <ChevronLeft aria-hidden />
          </Button>
          <label className="flex-row items-center gap-2">
            Run
            <select
              value={index}
              onChange={(event) => {
                setPinned(true);
                setIndex(Number(event.target.value));
              }}
            >
              {jobs.map((each, i) => (
                <option key={each.id} value={i}>
                  {i + 1} of {jobs.length} ({each.status})
                </option>
              ))}
            </select>
          </label>
          <Button
            size="icon"
            variant="ghost"
            aria-label="Next run of this step"
            disabled={index >= jobs.length - 1}
            onClick={() => {
              setPinned(true);
              setIndex((i) => Math.min(i + 1, jobs.length - 1));
            }}
          >
            <ChevronRight aria-hidden />
          </Button>
          <span className="hint">one run per loop iteration or retry</span>
        </div>
      )}
      {job ? (
        <div className="min-w-0" data-testid="flow-step-job">
          {renderJob(job.id)}
        </div>
      ) : (
        <p className="muted m-0">
          {status === "skipped"
            ? "This step did not run."
            : module && module.value.type !== "rawscript" && module.value.type !== "script"
              ? "This step runs the steps inside it: select one of them."
              : "This step has not started yet."}
        </p>
      )}
    </section>
  );
}

/**
 * A flow run: the flow's graph with each step coloured by its status, live; a click opens a step.
 * `renderJob` shows a step's job: the caller's job view (job-view.tsx, which loads this view for
 * flows), passed in so that the two components do not import each other.
 */
export function FlowRunView({
  workspace,
  id,
  renderJob,
}: {
  workspace: string;
  id: string;
  renderJob: (jobId: string) => ReactNode;
}) {
  const { query, state } = useFlowRun(workspace, id);
  const [selection, setSelection] = useState<GraphSelection | null>(null);
  const onSelect = useCallback((next: GraphSelection) => setSelection(next), []);
  if (query.error) return <p className="error">{errorMessage(query.error)}</p>;
  if (!state?.value) return <p className="muted">Loading the flow…</p>;
  return (
    <section className="stack min-w-0" aria-labelledby="flow-run-title" data-testid="flow-run-view">
      <h2 id="flow-run-title" className="m-0">
        Steps
      </h2>
      <Approval workspace={workspace} id={id} state={state} />
      <div className="grid min-w-0 gap-4 lg:grid-cols-2">
        <FlowGraph
          value={state.value}
          selected={selection}
          onSelect={onSelect}
          statuses={state.statuses}
          height={480}
          label="Steps of this run"
        />
        <div className="panel min-w-0">
          {selection?.kind === "step" ? (
            <StepDetail key={selection.id} state={state} stepId={selection.id} renderJob={renderJob} />
          ) : (
            <p className="muted m-0">Select a step to see its arguments, logs and result.</p>
          )}
        </div>
      </div>
    </section>
  );
}
