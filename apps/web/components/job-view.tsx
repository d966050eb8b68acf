"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import Link from "@/components/ui/link";
import { useEffect, useRef, useState } from "react";
import { JsonTree } from "@/components/run/json-tree";
import { LogView } from "@/components/run/log-view";
import { ResultView } from "@/components/run/result-view";
import { StatusBadge } from "@/components/status-badge";
import { RunActions } from "@/components/run/run-actions";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

// The flow run's graph (React Flow and dagre, a third of a megabyte) only for flows: the pages that
// list runs or show a script's run never download it.
const FlowRunView = dynamic(
  () => import("@/components/flow-run/flow-run-view").then((module) => module.FlowRunView),
  { ssr: false, loading: () => <div className="min-h-40" aria-busy="true" /> },
);

const FINISHED = new Set(["success", "failure", "canceled"]);
// EventSource retries by itself (resuming from its last event id); after this many failures in a
// row without a message, the page gives up on it and polls instead.
const MAX_STREAM_FAILURES = 3;
const POLL_MS = 500;
// While the page shows an unfinished job, it re-reads it at least this often even when the live
// stream is up: a safety net in case the stream ends without the page seeing the final state.
const SAFETY_NET_MS = 3000;

interface StreamState {
  logs: string;
  running: boolean;
  completed: boolean;
}

/** A tRPC "not found" error (an unknown or malformed job id). */
function isNotFound(error: unknown): boolean {
  return (error as { data?: { code?: string } } | null)?.data?.code === "NOT_FOUND";
}

/**
 * Follows a job's updates over SSE (`getupdate_sse`). Calls `onChange` when the job starts or
 * completes, or when the stream ends or errors (so that the page re-reads the job and shows its
 * final state), and `onFail` when the stream keeps failing.
 */
function useJobUpdates(
  workspace: string,
  id: string,
  enabled: boolean,
  onChange: () => void,
  onFail: () => void,
): StreamState | null {
  const [state, setState] = useState<StreamState | null>(null);
  const callbacks = useRef({ onChange, onFail });
  useEffect(() => {
    callbacks.current = { onChange, onFail };
  });
  useEffect(() => {
    if (!enabled) return;
    let current: StreamState = { logs: "", running: false, completed: false };
    let failures = 0;
    const source = new EventSource(
      `/api/w/${encodeURIComponent(workspace)}/jobs_u/getupdate_sse/${encodeURIComponent(id)}?log_offset=0`,
    );
    source.onmessage = (event: MessageEvent<string>) => {
      failures = 0;
      const update = JSON.parse(event.data) as { running?: boolean; completed?: boolean; new_logs?: string };
      const next = {
        logs: current.logs + (update.new_logs ?? ""),
        running: !!update.running,
        completed: !!update.completed,
      };
      const changed = next.running !== current.running || next.completed !== current.completed;
      current = next;
      setState(next);
      // The stream ends after this event; closing keeps EventSource from reconnecting.
      if (next.completed) source.close();
      if (changed) callbacks.current.onChange();
    };
    source.onerror = () => {
      failures += 1;
      // The stream ended or broke: whatever happened meanwhile, re-read the job once.
      callbacks.current.onChange();
      if (source.readyState === EventSource.CLOSED || failures >= MAX_STREAM_FAILURES) {
        source.close();
        callbacks.current.onFail();
      }
    };
    return () => source.close();
  }, [workspace, id, enabled]);
  return enabled ? state : null;
}

function CancelControl({ workspace, id, onDone }: { workspace: string; id: string; onDone: () => void }) {
  const trpc = useTRPC();
  const [reason, setReason] = useState("");
  const cancel = useMutation(trpc.job.cancel.mutationOptions({ onSuccess: onDone }));
  return (
    <form
      className="row"
      onSubmit={(event) => {
        event.preventDefault();
        cancel.mutate({ workspace, id, reason: reason.trim() || undefined });
      }}
    >
      <label>
        Reason <span className="hint">optional</span>
        <input value={reason} onChange={(event) => setReason(event.target.value)} maxLength={1000} />
      </label>
      <button type="submit" disabled={cancel.isPending}>
        {cancel.isPending ? "Canceling…" : "Cancel"}
      </button>
      {cancel.error && <span className="field-error">{errorMessage(cancel.error)}</span>}
    </form>
  );
}

/**
 * A run: status, logs as they arrive (streamed over SSE, polled if the stream keeps failing) with
 * their times, the result rendered by its shape, a Cancel button while the job has not finished,
 * and "Run again" / "Edit and run" (`actions`, on by default) for those who may run it.
 */
export function JobView({
  workspace,
  id,
  actions = true,
}: {
  workspace: string;
  id: string;
  /** Show "Run again" and "Edit and run" (the run page does; an embedded view may not). */
  actions?: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [streaming, setStreaming] = useState(true);
  useEffect(() => {
    if (typeof EventSource === "undefined") setStreaming(false);
  }, []);
  const jobQuery = trpc.job.get.queryOptions({ workspace, id, withLogs: !streaming });
  const streamCompleted = useRef(false);
  const job = useQuery({
    ...jobQuery,
    // An unknown or malformed id stays unknown: no retry, and no polling (below).
    retry: (failures, error) => !isNotFound(error) && failures < 1,
    refetchInterval: (query) => {
      const data = query.state.data;
      if (data && FINISHED.has(data.status)) return false;
      if (!data && query.state.error) return false;
      // Polling when there is no stream, or when the stream said "completed" but the job read
      // afterwards was not finished yet; otherwise a slower re-read as a safety net.
      return !streaming || streamCompleted.current ? POLL_MS : SAFETY_NET_MS;
    },
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: jobQuery.queryKey });
  // The stream opens once the job has been read: an unknown id never opens one (nor polls).
  const stream = useJobUpdates(workspace, id, streaming && !!job.data, refresh, () => setStreaming(false));
  useEffect(() => {
    streamCompleted.current = !!stream?.completed;
  }, [stream?.completed]);

  if (job.error && !job.data) {
    if (isNotFound(job.error))
      return (
        <p className="error" data-testid="job-not-found">
          Run {id} was not found.
        </p>
      );
    return <div className="error">{errorMessage(job.error)}</div>;
  }
  if (!job.data) return <p className="muted">Loading…</p>;
  const data = job.data;
  const finished = FINISHED.has(data.status);
  const logs = streaming ? (stream?.logs ?? "") : (data.logs ?? "");
  const logsComplete = streaming ? !!stream?.completed : finished;
  const isFlow = data.kind === "flow" || data.kind === "flowpreview";
  return (
    <div className="stack">
      <div className="toolbar">
        <h1>
          Run <code>{data.id}</code>
        </h1>
        <span data-testid="job-status">
          <StatusBadge status={data.status} />
        </span>
      </div>
      <div className="panel">
        <div>
          {data.scriptPath ? (
            <Link
              href={`/w/${workspace}/${isFlow || data.kind === "flowscript" ? "flows" : "scripts"}/get/${data.scriptPath}`}
            >
              {data.scriptPath}
            </Link>
          ) : (
            <span className="muted">preview</span>
          )}{" "}
          · {data.language} · tag <code>{data.tag}</code> · by {data.createdBy}
          {data.workerName && <> · on {data.workerName}</>}
        </div>
        <div className="muted">
          created {new Date(data.createdAt).toLocaleString()}
          {data.completedAt && data.startedAt && (
            <> · took {new Date(data.completedAt).getTime() - new Date(data.startedAt).getTime()} ms</>
          )}
        </div>
        {data.canceledBy && (
          <div data-testid="job-canceled">
            {finished ? "Canceled" : "Canceling (the worker is stopping it)"} by {data.canceledBy}
            {data.cancelReason && <>: {data.cancelReason}</>}
          </div>
        )}
      </div>
      {!finished && !data.canceledBy && <CancelControl workspace={workspace} id={id} onDone={refresh} />}
      {actions && <RunActions workspace={workspace} job={data} />}
      {isFlow && (
        <FlowRunView
          workspace={workspace}
          id={id}
          renderJob={(jobId) => <JobView key={jobId} workspace={workspace} id={jobId} actions={false} />}
        />
      )}
      <h2>Arguments</h2>
      {data.args && typeof data.args === "object" && Object.keys(data.args).length > 0 ? (
        <div className="overflow-x-auto rounded-md border border-line bg-panel p-3" data-testid="job-args">
          <JsonTree value={data.args} />
        </div>
      ) : (
        <p className="muted" data-testid="job-args">
          No arguments.
        </p>
      )}
      <h2>
        Logs{" "}
        {!streaming && !finished && (
          <span className="muted" data-testid="job-polling">
            (live updates unavailable, refreshing every {POLL_MS} ms)
          </span>
        )}
      </h2>
      <LogView logs={logs} complete={logsComplete} startedAt={data.startedAt} />
      <h2>Result</h2>
      {finished ? (
        <ResultView result={data.result} failed={data.status !== "success"} />
      ) : (
        <pre data-testid="job-result">…</pre>
      )}
    </div>
  );
}
