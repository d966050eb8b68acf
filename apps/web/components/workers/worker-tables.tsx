"use client";
import Link from "@/components/ui/link";
import type { ReactNode } from "react";
import { DataTable } from "@/components/data-table";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/trpc/app-router";

type Outputs = inferRouterOutputs<AppRouter>;
export type WorkerRow = Outputs["worker"]["list"][number];
export type QueueRow = Outputs["worker"]["queueStats"][number];

function percent(value: number | undefined): string {
  return value === undefined ? "–" : `${Math.round(value * 100)}%`;
}

function memory(bytes: number | undefined): string {
  if (bytes === undefined) return "–";
  return bytes >= 1 << 30 ? `${(bytes / (1 << 30)).toFixed(1)} GB` : `${Math.round(bytes / (1 << 20))} MB`;
}

export function duration(secs: number): string {
  if (secs < 60) return `${secs} s`;
  if (secs < 3600) return `${Math.floor(secs / 60)} min ${secs % 60} s`;
  return `${Math.floor(secs / 3600)} h ${Math.floor((secs % 3600) / 60)} min`;
}

function Tags({ tags }: { tags: string[] }) {
  return (
    <span style={{ display: "inline-flex", flexWrap: "wrap", gap: "0.25rem" }}>
      {tags.map((tag) => (
        <code key={tag} className="status bg-hover font-medium text-fg">
          {tag}
        </code>
      ))}
    </span>
  );
}

function CurrentJob({
  worker,
  workspace,
  visible,
}: {
  worker: WorkerRow;
  workspace: string;
  visible: boolean;
}) {
  // Jobs belong to tenants: only superadmins are shown which job a worker runs.
  if (!visible) return <span className="muted">–</span>;
  if (!worker.current_job_id) return <span className="muted">idle</span>;
  const jobWorkspace = worker.last_job_workspace_id;
  // Only superadmins get here, and a superadmin may open every workspace: link to the job where it
  // lives (a job whose workspace is gone has nowhere to link to).
  const id = <code>{worker.current_job_id.slice(0, 8)}</code>;
  return (
    <span title={worker.current_job_id}>
      {jobWorkspace ? <Link href={`/w/${jobWorkspace}/runs/${worker.current_job_id}`}>{id}</Link> : id}
      {jobWorkspace !== workspace && <span className="muted"> in {jobWorkspace ?? "?"}</span>}
    </span>
  );
}

/** How the worker isolates jobs; one that runs them without isolation, or runs none, is flagged. */
function Sandbox({ state }: { state: string }) {
  if (state.startsWith("bubblewrap")) return <span>{state}</span>;
  if (state === "disabled") return <span className="field-error">disabled: jobs run without isolation</span>;
  return <span className="field-error">{`${state}: runs no job`}</span>;
}

/** One worker group: its live workers, and (for superadmins) whatever `config` renders. */
export function WorkerGroupPanel({
  group,
  workers,
  workspace,
  showJobs,
  config,
}: {
  group: string;
  workers: WorkerRow[];
  workspace: string;
  showJobs: boolean;
  config?: ReactNode;
}) {
  const tags = [...new Set(workers.flatMap((w) => w.custom_tags))];
  return (
    <section className="panel stack" data-testid={`worker-group-${group}`} style={{ marginBottom: "1rem" }}>
      <div className="toolbar" style={{ marginBottom: 0 }}>
        <h2 style={{ margin: 0 }}>
          Group <code>{group}</code>{" "}
          <span className="muted" style={{ fontWeight: 400, fontSize: 13 }}>
            {workers.length} live worker{workers.length === 1 ? "" : "s"}
          </span>
        </h2>
      </div>
      {tags.length > 0 && (
        <div>
          <span className="muted">Serving </span>
          <Tags tags={tags} />
        </div>
      )}
      <DataTable
        query={{ data: workers }}
        rowKey={(worker) => worker.worker}
        rowProps={() => ({ "data-testid": "worker-row" })}
        label={`Workers of group ${group}`}
        empty="No live worker in this group."
        columns={[
          {
            header: "Worker",
            sortBy: (worker) => worker.worker,
            cell: (worker) => (
              <>
                <code>{worker.worker}</code>
                {worker.agent && (
                  <span
                    className="muted"
                    title="Agent worker: no database access, reaches the server over HTTP"
                  >
                    {" "}
                    (agent)
                  </span>
                )}
              </>
            ),
          },
          { header: "Host", sortBy: (worker) => worker.host, cell: (worker) => worker.host },
          {
            header: "Current job",
            cell: (worker) => <CurrentJob worker={worker} workspace={workspace} visible={showJobs} />,
          },
          {
            header: "Jobs done",
            sortBy: (worker) => worker.jobs_executed,
            cell: (worker) => worker.jobs_executed,
          },
          {
            header: "Occupancy 15s / 5m / 30m",
            sortBy: (worker) => worker.occupancy_rate_15s ?? -1,
            cell: (worker) => (
              <>
                {percent(worker.occupancy_rate_15s)} / {percent(worker.occupancy_rate_5m)} /{" "}
                {percent(worker.occupancy_rate_30m)}
              </>
            ),
          },
          {
            header: "Memory",
            sortBy: (worker) => worker.memory_usage ?? -1,
            cell: (worker) => memory(worker.memory_usage),
          },
          { header: "Version", cell: (worker) => worker.wm_version || <span className="muted">–</span> },
          { header: "Sandbox", cell: (worker) => <Sandbox state={worker.sandbox} /> },
          {
            header: "Last ping",
            sortBy: (worker) => worker.last_ping,
            cell: (worker) => <>{duration(worker.last_ping)} ago</>,
          },
        ]}
      />
      {config}
    </section>
  );
}

/** Queue depth and the longest wait per tag; a tag no live worker serves is flagged. */
export function QueueTable({ stats }: { stats: QueueRow[] }) {
  return (
    <DataTable
      query={{ data: stats }}
      rowKey={(row) => row.tag}
      rowProps={(row) => ({ "data-testid": `queue-${row.tag}` })}
      label="Queue"
      empty="No job is waiting or running."
      columns={[
        { header: "Tag", sortBy: (row) => row.tag, cell: (row) => <code>{row.tag}</code> },
        { header: "Queued", sortBy: (row) => row.queued, cell: (row) => row.queued },
        { header: "Scheduled later", sortBy: (row) => row.scheduled, cell: (row) => row.scheduled },
        { header: "Running", sortBy: (row) => row.running, cell: (row) => row.running },
        {
          header: "Oldest waiting",
          sortBy: (row) => row.oldest_wait_secs ?? -1,
          cell: (row) =>
            row.oldest_wait_secs === null ? (
              <span className="muted">–</span>
            ) : (
              <span title={row.oldest_queued_at ?? ""}>{duration(row.oldest_wait_secs)}</span>
            ),
        },
        {
          header: "Live workers",
          sortBy: (row) => row.workers,
          cell: (row) => (
            <>
              {row.workers}
              {row.workers === 0 && row.queued > row.scheduled && (
                <span className="field-error"> no live worker serves this tag</span>
              )}
            </>
          ),
        },
      ]}
    />
  );
}
