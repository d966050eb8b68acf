"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

const FINISHED = new Set(["success", "failure", "canceled"]);

export function StatusBadge({ status }: { status: string }) {
  return <span className={`status status-${status}`}>{status}</span>;
}

/** A run: status, logs as they arrive (polled until the job finishes), and the result. */
export function JobView({ workspace, id }: { workspace: string; id: string }) {
  const trpc = useTRPC();
  const job = useQuery({
    ...trpc.job.get.queryOptions({ workspace, id }),
    refetchInterval: (query) => (query.state.data && FINISHED.has(query.state.data.status) ? false : 300),
  });
  if (job.error) return <div className="error">{errorMessage(job.error)}</div>;
  if (!job.data) return <p className="muted">Loading…</p>;
  const data = job.data;
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
            <Link href={`/w/${workspace}/scripts/edit/${data.scriptPath}`}>{data.scriptPath}</Link>
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
      </div>
      <h2>Arguments</h2>
      <pre>{JSON.stringify(data.args, null, 2)}</pre>
      <h2>Logs</h2>
      <pre data-testid="job-logs">
        {data.logs || (FINISHED.has(data.status) ? "(no output)" : "waiting for output…")}
      </pre>
      <h2>Result</h2>
      <pre data-testid="job-result">
        {FINISHED.has(data.status) ? JSON.stringify(data.result, null, 2) : "…"}
      </pre>
    </div>
  );
}
