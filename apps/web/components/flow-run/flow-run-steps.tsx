"use client";
import { StatusBadge } from "@/components/status-badge";
import { allSteps } from "@/components/flow-editor/model";
import { JsonTree } from "@/components/run/json-tree";
import type { FlowRunState } from "./use-flow-run";

/** Every step of a run with its status and latest result, then the flow's own result. */
export function FlowRunSteps({ state }: { state: FlowRunState }) {
  if (!state.value) return null;
  const steps = allSteps(state.value);
  return (
    <div className="stack min-w-0" data-testid="flow-run-steps">
      <div className="row items-center">
        <span className="font-semibold">Flow</span>
        <span data-testid="flow-run-status">
          <StatusBadge status={state.status} />
        </span>
      </div>
      <ol className="m-0 stack list-none p-0">
        {steps.map(({ module }) => {
          const status = state.statuses[module.id] ?? "waiting";
          const runs = state.jobs[module.id]?.length ?? 0;
          return (
            <li
              key={module.id}
              className="min-w-0 rounded-md border border-line p-2"
              data-testid="flow-run-step"
              data-step={module.id}
              data-status={status}
            >
              <div className="row flex-wrap items-center">
                <code>{module.id}</code>
                <StatusBadge status={status} />
                {runs > 1 && <span className="muted text-sm">{runs} runs</span>}
              </div>
              {module.id in state.results && (
                <div className="mt-1 overflow-x-auto text-sm">
                  <JsonTree value={state.results[module.id]} />
                </div>
              )}
            </li>
          );
        })}
      </ol>
      {state.finished && (
        <div className="min-w-0" data-testid="flow-run-result">
          <p className="m-0 font-semibold">Result</p>
          <div className="overflow-x-auto rounded-md border border-line bg-panel p-2 text-sm">
            <JsonTree value={state.flowResult} />
          </div>
        </div>
      )}
    </div>
  );
}
