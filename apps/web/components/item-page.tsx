"use client";
// What the script page and the flow page share: their frame, header and actions, summary,
// sections, run form and recent runs.
import { useQuery } from "@tanstack/react-query";
import type { ArgSchema } from "@millrace/runtime";
import { Archive, ArchiveRestore, Pencil, Trash2 } from "lucide-react";
import { useRouter } from "next/navigation";
import { useState, type ReactNode } from "react";
import { toast } from "sonner";
import { ArgsForm } from "@/components/args-form";
import { DataTable } from "@/components/data-table";
import { StatusBadge } from "@/components/status-badge";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { useConfirm } from "@/components/ui/confirm";
import Link from "@/components/ui/link";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

const RECENT_RUNS = "10";
const REFRESH_MS = 5000;

/**
 * The page of a script or a flow: while it loads, or why it cannot be read (with the way back),
 * then the Scripts or Flows link above its path, its actions on the right, and its content.
 */
export function ItemPage<Data extends { path: string }>({
  path,
  query,
  back,
  actions,
  children,
}: {
  path: string;
  query: { data?: Data; error: unknown };
  /** The list the item belongs to: "Scripts" or "Flows". */
  back: { href: string; label: string };
  actions: (data: Data) => ReactNode;
  children: (data: Data) => ReactNode;
}) {
  if (query.error) {
    return (
      <div className="stack">
        <h1 className="break-all">{path}</h1>
        <p className="error" role="alert">
          {errorMessage(query.error)}
        </p>
        <Link href={back.href}>Back to {back.label.toLowerCase()}</Link>
      </div>
    );
  }
  const data = query.data;
  if (!data) return <p className="muted">Loading…</p>;
  return (
    <div className="stack min-w-0">
      <div className="toolbar flex-wrap gap-2">
        <div className="min-w-0">
          <p className="m-0 text-sm">
            <Link href={back.href}>{back.label}</Link>
          </p>
          <h1 className="m-0 break-all">{data.path}</h1>
        </div>
        {actions(data)}
      </div>
      {children(data)}
    </div>
  );
}

/** "About this script/flow": its badges, summary, description, deployed version, archived state. */
export function ItemSummary({
  noun,
  badges,
  summary,
  description,
  deployed,
  archived,
  children,
}: {
  noun: "script" | "flow";
  badges: ReactNode;
  summary: string | null | undefined;
  description: string | null | undefined;
  /** Which version, by whom, when. */
  deployed: ReactNode;
  archived: boolean;
  children?: ReactNode;
}) {
  return (
    <section className="panel stack" aria-label={`About this ${noun}`} data-testid={`${noun}-summary`}>
      <div className="row flex-wrap items-center">
        {badges}
        {archived && (
          <Badge tone="warn" data-testid="archived-badge">
            archived
          </Badge>
        )}
      </div>
      {summary ? <p className="m-0 text-base font-semibold">{summary}</p> : null}
      {description ? (
        <p className="m-0 whitespace-pre-wrap">{description}</p>
      ) : (
        !summary && <p className="muted m-0">No summary or description.</p>
      )}
      <p className="muted m-0" data-testid={`${noun}-deployed`}>
        {deployed}
      </p>
      {archived && (
        <p className="m-0" role="status">
          This {noun} is archived: it cannot run until it is unarchived.
        </p>
      )}
      {children}
    </section>
  );
}

export function ItemSection({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section className="panel stack min-w-0" aria-labelledby={`${id}-title`} data-testid={id}>
      <h2 id={`${id}-title`} className="m-0">
        {title}
      </h2>
      {children}
    </section>
  );
}

/** A started run's toast and its page: what a run form does once the server accepted the run. */
export function useOpenStartedRun(workspace: string, path: string): (started: { id: string }) => void {
  const router = useRouter();
  return ({ id }) => {
    toast.success(`Started a run of ${path}`);
    router.push(`/w/${workspace}/runs/${id}`);
  };
}

type Args = Record<string, unknown>;

/** The item's arguments and its Run button; `run` starts it (a script's or a flow's mutation). */
export function RunForm({
  workspace,
  path,
  schema,
  run,
  args = (values) => values,
  submitTestId,
}: {
  workspace: string;
  path: string;
  schema: ArgSchema;
  run: {
    mutate: (input: { workspace: string; path: string; args: Args }) => void;
    isPending: boolean;
    error: unknown;
  };
  /** The arguments sent for the form's values (a flow fills in its defaults). */
  args?: (values: Args) => Args;
  submitTestId?: string;
}) {
  const [values, setValues] = useState<Args>({});
  const field = errorField(run.error);
  return (
    <form
      className="stack"
      aria-label={`Run ${path}`}
      onSubmit={(event) => {
        event.preventDefault();
        run.mutate({ workspace, path, args: args(values) });
      }}
    >
      <ArgsForm
        workspace={workspace}
        schema={schema}
        values={values}
        onChange={setValues}
        errorField={field}
        errorText={errorMessage(run.error)}
      />
      {run.error && !field?.startsWith("args.") ? (
        <p className="error" role="alert">
          {errorMessage(run.error)}
        </p>
      ) : null}
      <div className="row">
        <Button type="submit" variant="primary" disabled={run.isPending} data-testid={submitTestId}>
          {run.isPending ? "Starting…" : "Run"}
        </Button>
      </div>
    </form>
  );
}

/** The job list's input for an item's recent runs: the script page prefetches it with the script. */
export function recentRunsInput(workspace: string, path: string, jobKinds?: "flow") {
  return {
    workspace,
    script_path_exact: path,
    per_page: RECENT_RUNS,
    ...(jobKinds && { job_kinds: jobKinds }),
  };
}

function duration(startedAt: string | null, completedAt: string | null): string {
  if (!startedAt) return "—";
  const ms = (completedAt ? new Date(completedAt).getTime() : Date.now()) - new Date(startedAt).getTime();
  if (ms < 1000) return `${Math.max(ms, 0)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The item's last runs, newest first, and the link to all of them on the Runs page. */
export function RecentRuns({
  workspace,
  path,
  noun,
  jobKinds,
  testId,
}: {
  workspace: string;
  path: string;
  noun: "script" | "flow";
  jobKinds?: "flow";
  testId: string;
}) {
  const trpc = useTRPC();
  const runs = useQuery({
    ...trpc.job.list.queryOptions(recentRunsInput(workspace, path, jobKinds)),
    refetchInterval: REFRESH_MS,
    // Fresh until the next refresh: a page that asked for it early fetches it once.
    staleTime: REFRESH_MS,
  });
  return (
    <>
      <DataTable
        query={runs}
        rowKey={(job) => job.id}
        testId={testId}
        empty="No runs yet."
        columns={[
          { header: "Status", cell: (job) => <StatusBadge status={job.status} /> },
          { header: "Started", cell: (job) => new Date(job.startedAt ?? job.createdAt).toLocaleString() },
          { header: "Duration", cell: (job) => duration(job.startedAt, job.completedAt) },
          {
            header: "By",
            cell: (job) => (job.schedulePath ? `schedule ${job.schedulePath}` : job.createdBy),
          },
          {
            header: "Run",
            cell: (job) => (
              <Link href={`/w/${workspace}/runs/${job.id}`}>
                <code>{job.id.slice(0, 8)}</code>
              </Link>
            ),
          },
        ]}
      />
      {runs.data && runs.data.length > 0 && (
        <Link href={`/w/${workspace}/runs?script_path_exact=${encodeURIComponent(path)}`}>
          All runs of this {noun}
        </Link>
      )}
    </>
  );
}

/**
 * Edit, Archive or Unarchive, Delete (the archive and delete confirmed first), each offered only
 * to whom the server says may write the item; `extra` sits after Edit (a script's Fork).
 */
export function ItemActions({
  noun,
  path,
  editHref,
  archived,
  canWrite,
  busy,
  archiveDescription,
  deleteDescription,
  onArchive,
  onUnarchive,
  onDelete,
  extra,
}: {
  noun: "script" | "flow";
  path: string;
  editHref: string;
  archived: boolean;
  canWrite: boolean;
  busy: boolean;
  archiveDescription: string;
  deleteDescription: string;
  onArchive: () => void;
  onUnarchive: () => void;
  onDelete: () => void;
  extra?: ReactNode;
}) {
  const confirm = useConfirm();
  return (
    <div className="row flex-wrap" role="group" aria-label={`${noun === "flow" ? "Flow" : "Script"} actions`}>
      {canWrite && !archived && (
        <Button asChild variant="primary">
          <Link href={editHref}>
            <Pencil aria-hidden /> Edit
          </Link>
        </Button>
      )}
      {extra}
      {canWrite && !archived && (
        <Button
          disabled={busy}
          onClick={async () => {
            const ok = await confirm({
              title: `Archive ${path}?`,
              description: archiveDescription,
              action: `Archive ${noun}`,
            });
            if (ok) onArchive();
          }}
        >
          <Archive aria-hidden /> Archive
        </Button>
      )}
      {canWrite && archived && (
        <Button disabled={busy} onClick={onUnarchive}>
          <ArchiveRestore aria-hidden /> Unarchive
        </Button>
      )}
      {canWrite && (
        <Button
          variant="destructive"
          disabled={busy}
          onClick={async () => {
            const ok = await confirm({
              title: `Delete ${path}?`,
              description: deleteDescription,
              action: `Delete ${noun}`,
              destructive: true,
            });
            if (ok) onDelete();
          }}
        >
          <Trash2 aria-hidden /> Delete
        </Button>
      )}
    </div>
  );
}
