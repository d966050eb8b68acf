"use client";
import { keepPreviousData, useMutation, useQuery } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import Link from "@/components/ui/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { Suspense, use, useState, type HTMLAttributes } from "react";
import { toast } from "sonner";
import { DataTable } from "@/components/data-table";
import { StatusBadge } from "@/components/status-badge";
import { Button } from "@/components/ui/button";
import { useConfirm } from "@/components/ui/confirm";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import {
  FILTER_PARAMS,
  FORM_FIELDS,
  RunFilters,
  TRIGGER_LABELS,
  TRIGGERS,
  type Filters,
  type Trigger,
} from "./run-filters";
import { formatDuration } from "./duration";

// recharts is the page's largest library: the chart arrives after the list instead of holding it
// back (its box keeps its height meanwhile, so nothing moves).
const RunsChart = dynamic(() => import("./runs-chart").then((module) => module.RunsChart), {
  ssr: false,
  loading: () => <div className="panel m-0 h-[218px]" aria-hidden />,
});

const DEFAULT_PER_PAGE = 30;

function filtersFrom(search: URLSearchParams): Filters {
  const filters: Filters = {};
  for (const name of FILTER_PARAMS) {
    const value = search.get(name);
    if (value) filters[name] = value;
  }
  return filters;
}

function Runs({ workspace }: { workspace: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const search = useSearchParams();
  const filters = filtersFrom(search);
  const { trigger, ...windmillFilters } = filters;
  const jobs = useQuery({
    ...trpc.job.list.queryOptions({
      workspace,
      ...windmillFilters,
      trigger: TRIGGERS.includes(trigger as Trigger) ? (trigger as Trigger) : undefined,
    }),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.error ? false : 2000),
  });

  const navigate = (next: Filters) => {
    const params = new URLSearchParams();
    for (const name of FILTER_PARAMS) if (next[name]) params.set(name, next[name]);
    const query = params.toString();
    router.replace(query ? `${pathname}?${query}` : pathname);
  };
  const errorAt = jobs.error ? errorField(jobs.error) : undefined;
  const field = errorAt && FORM_FIELDS.has(errorAt) ? errorAt : undefined;
  const fieldErrors = field ? { [field]: errorMessage(jobs.error) } : {};
  const page = Number(filters.page ?? "1") || 1;
  const perPage = Number(filters.per_page ?? DEFAULT_PER_PAGE) || DEFAULT_PER_PAGE;
  const filtered = Object.keys(filters).some((name) => name !== "page" && name !== "per_page");
  const rows = jobs.error ? undefined : jobs.data;
  const confirm = useConfirm();
  const cancel = useMutation(trpc.job.cancel.mutationOptions());
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [canceling, setCanceling] = useState(false);
  // Every role may cancel a run it can see (job.run): only runs not finished can be.
  const cancellable = (rows ?? []).filter((job) => job.status === "queued" || job.status === "running");
  const chosen = cancellable.filter((job) => selected.has(job.id));
  const toggle = (id: string, on: boolean) =>
    setSelected((was) => {
      const next = new Set(was);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const cancelChosen = async () => {
    const ids = chosen.map((job) => job.id);
    const many = `${ids.length} run${ids.length === 1 ? "" : "s"}`;
    const ok = await confirm({
      title: `Cancel ${many}?`,
      description: "Queued runs end at once; running ones are stopped by their worker.",
      action: `Cancel ${many}`,
      destructive: true,
    });
    if (!ok) return;
    setCanceling(true);
    const results = await Promise.allSettled(ids.map((id) => cancel.mutateAsync({ workspace, id })));
    setCanceling(false);
    setSelected(new Set());
    const failed = results.filter((r) => r.status === "rejected");
    if (failed.length === 0) toast.success(`Canceled ${many}.`);
    else
      toast.error(
        `${failed.length} of ${ids.length} runs could not be canceled: ${errorMessage((failed[0] as PromiseRejectedResult).reason)}`,
      );
    void jobs.refetch();
  };

  return (
    <div className="stack">
      <h1>Runs</h1>
      <RunFilters
        key={search.toString()}
        filters={filters}
        errors={fieldErrors}
        onApply={(next) => navigate({ ...next, page: undefined })}
      />
      {rows && rows.length > 0 && (
        <RunsChart
          workspace={workspace}
          runs={rows.map((job) => ({
            id: job.id,
            scriptPath: job.scriptPath,
            status: job.status,
            createdAt: job.createdAt,
            duration: duration(job.startedAt, job.completedAt),
          }))}
        />
      )}
      {cancellable.length > 0 && (
        <div className="row" data-testid="runs-bulk">
          <Button
            variant="destructive"
            size="sm"
            disabled={chosen.length === 0 || canceling}
            onClick={() => void cancelChosen()}
          >
            {canceling ? "Canceling…" : `Cancel ${chosen.length} run${chosen.length === 1 ? "" : "s"}`}
          </Button>
          <span className="muted">Tick queued or running runs to cancel them together.</span>
        </div>
      )}
      {/* The URL's filters go to the server, which pages the list: the table neither searches nor sorts. */}
      <DataTable
        query={{ data: rows, error: field ? null : jobs.error }}
        quietLoading={!!jobs.error}
        rowKey={(job) => job.id}
        rowProps={(job) => ({ "data-job-id": job.id }) as HTMLAttributes<HTMLTableRowElement>}
        testId="runs-table"
        empty={
          page > 1 ? "No runs on this page." : filtered ? "No runs match these filters." : "No runs yet."
        }
        emptyTestId="runs-empty"
        columns={[
          {
            header: "Select",
            title:
              cancellable.length > 0 ? (
                <input
                  type="checkbox"
                  aria-label="Select every queued or running run"
                  checked={chosen.length === cancellable.length}
                  onChange={(e) =>
                    setSelected(new Set(e.target.checked ? cancellable.map((job) => job.id) : []))
                  }
                />
              ) : (
                <span className="sr-only">Select</span>
              ),
            cell: (job) =>
              (job.status === "queued" || job.status === "running") && (
                <input
                  type="checkbox"
                  aria-label={`Select run ${job.scriptPath ?? "preview"} created ${new Date(job.createdAt).toLocaleString()}`}
                  checked={selected.has(job.id)}
                  onChange={(e) => toggle(job.id, e.target.checked)}
                />
              ),
          },
          {
            header: "Status",
            cell: (job) => (
              <Link href={`/w/${workspace}/runs/${job.id}`}>
                <StatusBadge status={job.status} />
              </Link>
            ),
          },
          { header: "Script", cell: (job) => job.scriptPath ?? <span className="muted">preview</span> },
          {
            header: "Trigger",
            cellProps: () => ({ "data-testid": "run-trigger" }),
            cell: (job) => (
              <>
                {TRIGGER_LABELS[job.trigger] ?? job.trigger}
                {job.schedulePath && (
                  <div className="text-xs text-muted">
                    <Link href={`/w/${workspace}/schedules/edit/${job.schedulePath}`}>
                      {job.schedulePath}
                    </Link>
                  </div>
                )}
              </>
            ),
          },
          {
            header: "Arguments",
            cellProps: () => ({ "data-testid": "run-args" }),
            cell: (job) => <Args text={job.argsPreview} />,
          },
          {
            header: "Duration",
            cellProps: () => ({ "data-testid": "run-duration", className: "whitespace-nowrap" }),
            cell: (job) => {
              const seconds = duration(job.startedAt, job.completedAt);
              return seconds === null ? (
                <span className="muted">—</span>
              ) : (
                <>
                  {formatDuration(seconds)}
                  {!job.completedAt && <span className="muted"> so far</span>}
                </>
              );
            },
          },
          {
            header: "Created",
            cell: (job) => (
              <Link href={`/w/${workspace}/runs/${job.id}`}>{new Date(job.createdAt).toLocaleString()}</Link>
            ),
          },
          { header: "By", cell: (job) => job.createdBy },
          { header: "Tag", cell: (job) => <code>{job.tag}</code> },
        ]}
      />
      {rows && (page > 1 || rows.length >= perPage) && (
        <div className="row" data-testid="runs-paging">
          <button
            type="button"
            disabled={page <= 1}
            onClick={() => navigate({ ...filters, page: page > 2 ? String(page - 1) : undefined })}
          >
            Previous
          </button>
          <span className="muted">Page {page}</span>
          <button
            type="button"
            disabled={rows.length < perPage}
            onClick={() => navigate({ ...filters, page: String(page + 1) })}
          >
            Next
          </button>
        </div>
      )}
    </div>
  );
}

/** Seconds from start to end (or to now while it runs); null before it starts. */
function duration(startedAt: string | null, completedAt: string | null): number | null {
  if (!startedAt) return null;
  const end = completedAt ? new Date(completedAt).getTime() : Date.now();
  return Math.max(0, (end - new Date(startedAt).getTime()) / 1000);
}

const ARGS_SHOWN = 32;

/** A run's arguments, cut to a line; the whole (as listed) on hover and when expanded. */
function Args({ text }: { text: string }) {
  if (text === "{}") return <span className="muted">none</span>;
  if (text.length <= ARGS_SHOWN)
    return (
      <code title={text} className="whitespace-nowrap">
        {text}
      </code>
    );
  return (
    <details className="max-w-[20rem]">
      <summary title={text} className="whitespace-nowrap">
        <code>{`${text.slice(0, ARGS_SHOWN)}…`}</code>
      </summary>
      <code className="block whitespace-pre-wrap break-all">{text}</code>
    </details>
  );
}

export default function RunsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  // useSearchParams needs a Suspense boundary above it.
  return (
    <Suspense fallback={<p className="muted">Loading…</p>}>
      <Runs workspace={workspace} />
    </Suspense>
  );
}
