"use client";
// The workspace home: what ran and what failed lately, what runs next, whether the queue is
// moving, and the usual ways on. Everything here is read with the caller's own rights.
import { useQuery } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { use, type HTMLAttributes } from "react";
import { Activity, CalendarPlus, FileCode2, Plus, Workflow } from "lucide-react";
import { DataTable } from "@/components/data-table";
import { StatusBadge } from "@/components/status-badge";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { canWrite, useWorkspaceRole } from "@/lib/workspace-role";

const REFRESH_MS = 5000;

function when(iso: string | null): string {
  if (!iso) return "—";
  const date = new Date(iso);
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  const span =
    abs < 60
      ? `${abs} s`
      : abs < 3600
        ? `${Math.round(abs / 60)} min`
        : abs < 86400
          ? `${Math.round(abs / 3600)} h`
          : null;
  if (!span) return date.toLocaleString();
  return seconds >= 0 ? `in ${span}` : `${span} ago`;
}

function Section({ title, children, label }: { title: string; label: string; children: React.ReactNode }) {
  return (
    <section className="panel stack" aria-label={label}>
      <h2 style={{ margin: 0 }}>{title}</h2>
      {children}
    </section>
  );
}

/** A worker that pinged within this many seconds is live (as the queue stats count them). */
const LIVE_WORKER_SECS = 60;

interface TagRow {
  tag: string;
  waiting: number;
  running: number;
  workers: number;
  oldestWaitSecs: number | null;
}

/**
 * Every tag that has jobs or a live worker, with its queue and how many live workers serve it:
 * an idle instance still shows which tags would run at once and which would wait for nobody.
 */
function tagHealth(
  queue: {
    tag: string;
    queued: number;
    scheduled: number;
    running: number;
    workers: number;
    oldest_wait_secs: number | null;
  }[],
  workers: { custom_tags: string[] }[],
): TagRow[] {
  const rows = new Map<string, TagRow>();
  for (const worker of workers) {
    for (const tag of worker.custom_tags) {
      const row = rows.get(tag) ?? { tag, waiting: 0, running: 0, workers: 0, oldestWaitSecs: null };
      row.workers += 1;
      rows.set(tag, row);
    }
  }
  for (const q of queue) {
    const row = rows.get(q.tag) ?? { tag: q.tag, waiting: 0, running: 0, workers: 0, oldestWaitSecs: null };
    rows.set(q.tag, {
      ...row,
      waiting: q.queued - q.scheduled,
      running: q.running,
      workers: Math.max(row.workers, q.workers),
      oldestWaitSecs: q.oldest_wait_secs,
    });
  }
  return [...rows.values()].sort((a, b) => a.tag.localeCompare(b.tag));
}

interface RunRow {
  id: string;
  kind: string;
  scriptPath: string | null;
  status: string;
  createdAt: string;
  completedAt: string | null;
}

/** Runs as status, link and age (of the end when they ended), or why they could not be read. */
function RunList({
  workspace,
  query,
  empty,
}: {
  workspace: string;
  query: { data?: RunRow[]; error: unknown };
  empty: string;
}) {
  return (
    <DataTable
      query={query}
      rowKey={(job) => job.id}
      quietHeaders
      empty={empty}
      columns={[
        { header: "Status", cell: (job) => <StatusBadge status={job.status} /> },
        {
          header: "Run",
          cellProps: () => ({ className: "w-full [overflow-wrap:anywhere]" }),
          cell: (job) => <Link href={`/w/${workspace}/runs/${job.id}`}>{job.scriptPath ?? job.kind}</Link>,
        },
        {
          header: "When",
          cellProps: () => ({ className: "muted whitespace-nowrap" }),
          cell: (job) => when(job.completedAt ?? job.createdAt),
        },
      ]}
    />
  );
}

export default function WorkspaceHome({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const writer = canWrite(useWorkspaceRole(workspace));
  const recent = useQuery({
    ...trpc.job.list.queryOptions({ workspace, per_page: "10" }),
    refetchInterval: REFRESH_MS,
  });
  const failures = useQuery({
    ...trpc.job.list.queryOptions({ workspace, success: "false", per_page: "5" }),
    refetchInterval: REFRESH_MS,
  });
  const schedules = useQuery({
    ...trpc.schedule.list.queryOptions({ workspace }),
    refetchInterval: REFRESH_MS,
  });
  const queue = useQuery({ ...trpc.worker.queueStats.queryOptions(), refetchInterval: REFRESH_MS });
  const workers = useQuery({
    ...trpc.worker.list.queryOptions({ pingSinceSecs: LIVE_WORKER_SECS }),
    refetchInterval: REFRESH_MS,
  });

  const upcoming = (schedules.data ?? [])
    .filter((s) => s.enabled && s.nextRunAt)
    .sort((a, b) => (a.nextRunAt! < b.nextRunAt! ? -1 : 1))
    .slice(0, 5);
  const stuck = (queue.data ?? []).filter((q) => q.queued - q.scheduled > 0 && q.workers === 0);
  const tags = tagHealth(queue.data ?? [], workers.data ?? []);

  return (
    <div className="stack">
      <h1>Home</h1>
      <nav className="row" aria-label="Quick actions">
        {writer && (
          <Button asChild variant="primary">
            <Link href={`/w/${workspace}/scripts/new`}>
              <Plus aria-hidden /> New script
            </Link>
          </Button>
        )}
        {writer && (
          <Button asChild>
            <Link href={`/w/${workspace}/flows/add`}>
              <Workflow aria-hidden /> New flow
            </Link>
          </Button>
        )}
        {writer && (
          <Button asChild>
            <Link href={`/w/${workspace}/schedules/new`}>
              <CalendarPlus aria-hidden /> New schedule
            </Link>
          </Button>
        )}
        <Button asChild>
          <Link href={`/w/${workspace}/runs`}>
            <Activity aria-hidden /> All runs
          </Link>
        </Button>
        <Button asChild>
          <Link href={`/w/${workspace}/scripts`}>
            <FileCode2 aria-hidden /> Scripts
          </Link>
        </Button>
        <Button asChild>
          <Link href={`/w/${workspace}/flows`}>
            <Workflow aria-hidden /> Flows
          </Link>
        </Button>
      </nav>

      <div className="grid-2">
        <Section title="Recent runs" label="Recent runs">
          <RunList workspace={workspace} query={recent} empty="Nothing has run yet." />
        </Section>

        <Section title="Recent failures" label="Recent failures">
          <RunList workspace={workspace} query={failures} empty="No failed runs." />
        </Section>

        <Section title="Next scheduled runs" label="Next scheduled runs">
          <DataTable
            query={{ data: schedules.data && upcoming, error: schedules.error }}
            rowKey={(schedule) => schedule.path}
            quietHeaders
            empty="No enabled schedule."
            columns={[
              {
                header: "Schedule",
                cellProps: () => ({ className: "w-full [overflow-wrap:anywhere]" }),
                cell: (schedule) => (
                  <>
                    <Link href={`/w/${workspace}/schedules/edit/${schedule.path}`}>{schedule.path}</Link>
                    <div className="muted text-xs">runs {schedule.scriptPath}</div>
                  </>
                ),
              },
              {
                header: "Next run",
                cellProps: () => ({ className: "whitespace-nowrap" }),
                cell: (schedule) => when(schedule.nextRunAt),
              },
            ]}
          />
        </Section>

        <Section title="Queue and workers" label="Queue and workers">
          {(queue.error ?? workers.error) && (
            <div className="error">{errorMessage(queue.error ?? workers.error)}</div>
          )}
          {stuck.length > 0 && (
            <div className="error" role="alert">
              No live worker serves {stuck.map((q) => q.tag).join(", ")}: those jobs cannot run.
            </div>
          )}
          {queue.data && queue.data.length === 0 && <p className="muted m-0">The queue is empty.</p>}
          {queue.data && workers.data && tags.length === 0 && (
            <p className="muted m-0">No live worker: nothing can run.</p>
          )}
          <DataTable
            query={{ data: tags }}
            rowKey={(row) => row.tag}
            rowProps={(row) => ({ "data-tag": row.tag }) as HTMLAttributes<HTMLTableRowElement>}
            testId="queue-by-tag"
            columns={[
              { header: "Tag", sortBy: (row) => row.tag, cell: (row) => <code>{row.tag}</code> },
              { header: "Waiting", sortBy: (row) => row.waiting, cell: (row) => row.waiting },
              { header: "Running", sortBy: (row) => row.running, cell: (row) => row.running },
              {
                header: "Live workers",
                sortBy: (row) => row.workers,
                cell: (row) =>
                  row.workers > 0 ? (
                    <Badge tone="ok">{row.workers} serving</Badge>
                  ) : (
                    <Badge tone="bad">no live worker</Badge>
                  ),
              },
              {
                header: "Oldest wait",
                sortBy: (row) => row.oldestWaitSecs ?? -1,
                cell: (row) => (row.oldestWaitSecs === null ? "—" : `${Math.round(row.oldestWaitSecs)} s`),
              },
            ]}
          />
        </Section>
      </div>
    </div>
  );
}
