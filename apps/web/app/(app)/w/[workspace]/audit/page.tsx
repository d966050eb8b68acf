"use client";
import { useQuery } from "@tanstack/react-query";
import { use, useState, type FormEvent } from "react";
import { DataTable } from "@/components/data-table";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

const KINDS = ["", "Created", "Updated", "Delete", "Execute"] as const;
type Kind = Exclude<(typeof KINDS)[number], "">;
const PER_PAGE = 50;
const EMPTY = { username: "", operation: "", resource: "", actionKind: "", after: "", before: "" };

export default function AuditPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const [draft, setDraft] = useState(EMPTY);
  const [filters, setFilters] = useState(EMPTY);
  const [page, setPage] = useState(1);
  const rows = useQuery(
    trpc.audit.list.queryOptions({
      workspace,
      page,
      perPage: PER_PAGE,
      username: filters.username || undefined,
      operation: filters.operation || undefined,
      resource: filters.resource || undefined,
      actionKind: (filters.actionKind || undefined) as Kind | undefined,
      after: filters.after || undefined,
      before: filters.before || undefined,
    }),
  );
  const field = errorField(rows.error);

  function submit(event: FormEvent) {
    event.preventDefault();
    setPage(1);
    setFilters(draft);
  }

  const input = (name: keyof typeof EMPTY, label: string, placeholder: string) => (
    <label>
      {label}
      <input
        name={name}
        placeholder={placeholder}
        value={draft[name]}
        onChange={(e) => setDraft({ ...draft, [name]: e.target.value })}
        aria-invalid={field === name}
      />
      {field === name && <span className="field-error">{errorMessage(rows.error)}</span>}
    </label>
  );

  return (
    <div>
      <h1>Audit log</h1>
      <p className="muted">
        Every change, run, sign-in and secret read. Admins see the whole workspace; everyone else sees their
        own actions.
      </p>
      <form className="panel row" onSubmit={submit}>
        {input("username", "User", "alice")}
        {input("operation", "Operation", "scripts. or jobs.run")}
        {input("resource", "Resource", "f/ops/")}
        <label>
          Kind
          <select
            name="actionKind"
            value={draft.actionKind}
            onChange={(e) => setDraft({ ...draft, actionKind: e.target.value })}
          >
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k || "any"}
              </option>
            ))}
          </select>
        </label>
        {input("after", "After", "2025-01-31T00:00:00Z")}
        {input("before", "Before", "2025-02-28")}
        <button className="primary" type="submit">
          Filter
        </button>
        <button
          type="button"
          onClick={() => {
            setDraft(EMPTY);
            setFilters(EMPTY);
            setPage(1);
          }}
        >
          Clear
        </button>
      </form>
      {/* The server filters and pages the log: the table neither searches nor sorts it. */}
      <DataTable
        query={{ data: rows.data, error: field ? null : rows.error }}
        quietLoading={!!rows.error}
        rowKey={(row) => String(row.id)}
        testId="audit-table"
        empty="No audit entries match."
        columns={[
          { header: "When", cell: (row) => new Date(row.at).toLocaleString() },
          { header: "Who", cell: (row) => row.username },
          {
            header: "Operation",
            cell: (row) => (
              <>
                <code>{row.operation}</code> <span className="muted">{row.actionKind}</span>
              </>
            ),
          },
          { header: "Resource", cell: (row) => row.resource },
          { header: "From", cell: (row) => row.ip },
          {
            header: "Details",
            cell: (row) => (
              <code className="break-all">{row.parameters ? JSON.stringify(row.parameters) : ""}</code>
            ),
          },
        ]}
      />
      <div className="row" style={{ marginTop: "0.75rem" }}>
        <button type="button" disabled={page === 1} onClick={() => setPage(page - 1)}>
          Newer
        </button>
        <span className="muted">page {page}</span>
        <button
          type="button"
          disabled={(rows.data?.length ?? 0) < PER_PAGE}
          onClick={() => setPage(page + 1)}
        >
          Older
        </button>
      </div>
    </div>
  );
}
