"use client";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { Suspense, use } from "react";
import { StatusBadge } from "@/components/job-view";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { FILTER_PARAMS, FORM_FIELDS, RunFilters, type Filters } from "./run-filters";

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
  const jobs = useQuery({
    ...trpc.job.list.queryOptions({ workspace, ...filters }),
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

  return (
    <div className="stack">
      <h1>Runs</h1>
      <RunFilters
        key={search.toString()}
        filters={filters}
        errors={fieldErrors}
        onApply={(next) => navigate({ ...next, page: undefined })}
      />
      {jobs.error && !field && <div className="error">{errorMessage(jobs.error)}</div>}
      {rows && rows.length === 0 && (
        <div className="panel empty" data-testid="runs-empty">
          {page > 1 ? "No runs on this page." : filtered ? "No runs match these filters." : "No runs yet."}
        </div>
      )}
      {rows && rows.length > 0 && (
        <table data-testid="runs-table">
          <thead>
            <tr>
              <th>Status</th>
              <th>Script</th>
              <th>Created</th>
              <th>By</th>
              <th>Tag</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((job) => (
              <tr key={job.id}>
                <td>
                  <Link href={`/w/${workspace}/runs/${job.id}`}>
                    <StatusBadge status={job.status} />
                  </Link>
                </td>
                <td>{job.scriptPath ?? <span className="muted">preview</span>}</td>
                <td>
                  <Link href={`/w/${workspace}/runs/${job.id}`}>
                    {new Date(job.createdAt).toLocaleString()}
                  </Link>
                </td>
                <td>{job.createdBy}</td>
                <td>
                  <code>{job.tag}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
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

export default function RunsPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  // useSearchParams needs a Suspense boundary above it.
  return (
    <Suspense fallback={<p className="muted">Loading…</p>}>
      <Runs workspace={workspace} />
    </Suspense>
  );
}
