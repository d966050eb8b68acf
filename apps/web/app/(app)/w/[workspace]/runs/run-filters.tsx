"use client";
import { useState, type ReactNode } from "react";

/** The Runs page's filters, named as Windmill's job-list parameters (URL, tRPC and REST alike). */
export const FILTER_PARAMS = [
  "script_path_exact",
  "script_path_start",
  "status",
  "trigger",
  "tag",
  "created_by",
  "created_after",
  "created_before",
  "page",
  "per_page",
] as const;
export type FilterParam = (typeof FILTER_PARAMS)[number];
export type Filters = Partial<Record<FilterParam, string>>;

/** Parameters whose errors the form shows beside a control; others are shown above the list. */
export const FORM_FIELDS = new Set<string>([
  "script_path_exact",
  "script_path_start",
  "status",
  "running",
  "success",
  "tag",
  "created_by",
  "created_after",
  "created_before",
  "per_page",
]);

export const STATUSES = ["queued", "running", "success", "failure", "canceled"] as const;
/** What started a run (job.trigger_kind; see jobTrigger in the job router). */
export const TRIGGERS = ["manual", "api", "webhook", "schedule", "job", "flow", "deploy", "preview"] as const;
export type Trigger = (typeof TRIGGERS)[number];
export const TRIGGER_LABELS: Record<string, string> = {
  manual: "manual",
  api: "API",
  webhook: "webhook",
  schedule: "schedule",
  job: "another job",
  flow: "flow step",
  deploy: "deploy (dependencies)",
  preview: "editor test",
};
export const PER_PAGE_CHOICES = ["30", "100", "1000"];

/** `2025-01-31T12:00:00.000Z` → `2025-01-31T13:00` in the browser's time zone, for datetime-local. */
function toLocalInput(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function fromLocalInput(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

const GROUP_STYLE = { display: "flex", flexDirection: "column", gap: "0.25rem", fontWeight: 500 } as const;

function Field({ label, error, children }: { label: string; error?: string; children: ReactNode }) {
  return (
    <label>
      {label}
      {children}
      {error && <span className="field-error">{error}</span>}
    </label>
  );
}

/**
 * The filter form. It edits a draft; "Apply" hands the new filters up (which puts them in the URL).
 * `errors` maps a parameter name to the server's message about it.
 */
export function RunFilters({
  filters,
  errors,
  onApply,
}: {
  filters: Filters;
  errors: Partial<Record<string, string>>;
  onApply: (filters: Filters) => void;
}) {
  const [path, setPath] = useState(filters.script_path_start ?? filters.script_path_exact ?? "");
  const [pathMode, setPathMode] = useState(filters.script_path_start ? "start" : "exact");
  const [status, setStatus] = useState(filters.status ?? "");
  const [trigger, setTrigger] = useState(filters.trigger ?? "");
  const [tag, setTag] = useState(filters.tag ?? "");
  const [createdBy, setCreatedBy] = useState(filters.created_by ?? "");
  const [after, setAfter] = useState(toLocalInput(filters.created_after));
  const [before, setBefore] = useState(toLocalInput(filters.created_before));
  const [perPage, setPerPage] = useState(filters.per_page ?? "30");
  const pathError = errors.script_path_exact ?? errors.script_path_start;
  const invalid = (name: string) => (errors[name] ? { "aria-invalid": true as const } : {});

  return (
    <form
      className="panel row"
      data-testid="run-filters"
      onSubmit={(event) => {
        event.preventDefault();
        onApply({
          [pathMode === "start" ? "script_path_start" : "script_path_exact"]: path.trim() || undefined,
          status: status || undefined,
          trigger: trigger || undefined,
          tag: tag.trim() || undefined,
          created_by: createdBy.trim() || undefined,
          created_after: after ? fromLocalInput(after) : undefined,
          created_before: before ? fromLocalInput(before) : undefined,
          per_page: perPage === "30" ? undefined : perPage,
        });
      }}
    >
      {/* Two controls, so a group rather than one label. */}
      <div role="group" aria-label="Path filter" style={GROUP_STYLE}>
        Path
        <div className="row">
          <select aria-label="Path match" value={pathMode} onChange={(e) => setPathMode(e.target.value)}>
            <option value="exact">is</option>
            <option value="start">starts with</option>
          </select>
          <input
            aria-label="Path"
            placeholder="f/folder/script"
            value={path}
            onChange={(e) => setPath(e.target.value)}
            {...(pathError ? { "aria-invalid": true as const } : {})}
          />
        </div>
        {pathError && <span className="field-error">{pathError}</span>}
      </div>
      <Field label="Status" error={errors.status ?? errors.running ?? errors.success}>
        <select aria-label="Status" value={status} onChange={(e) => setStatus(e.target.value)}>
          <option value="">any</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Trigger" error={errors.trigger}>
        <select aria-label="Trigger" value={trigger} onChange={(e) => setTrigger(e.target.value)}>
          <option value="">any</option>
          {TRIGGERS.map((t) => (
            <option key={t} value={t}>
              {TRIGGER_LABELS[t]}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Tag" error={errors.tag}>
        <input aria-label="Tag" value={tag} onChange={(e) => setTag(e.target.value)} {...invalid("tag")} />
      </Field>
      <Field label="Created by" error={errors.created_by}>
        <input
          aria-label="Created by"
          value={createdBy}
          onChange={(e) => setCreatedBy(e.target.value)}
          {...invalid("created_by")}
        />
      </Field>
      <Field label="Created after" error={errors.created_after}>
        <input
          aria-label="Created after"
          type="datetime-local"
          value={after}
          onChange={(e) => setAfter(e.target.value)}
          {...invalid("created_after")}
        />
      </Field>
      <Field label="Created before" error={errors.created_before}>
        <input
          aria-label="Created before"
          type="datetime-local"
          value={before}
          onChange={(e) => setBefore(e.target.value)}
          {...invalid("created_before")}
        />
      </Field>
      <Field label="Per page" error={errors.per_page}>
        <select aria-label="Per page" value={perPage} onChange={(e) => setPerPage(e.target.value)}>
          {[...new Set([...PER_PAGE_CHOICES, perPage])].map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </Field>
      <button className="primary" type="submit">
        Apply
      </button>
      <button
        type="button"
        onClick={() => {
          onApply({});
        }}
      >
        Clear
      </button>
    </form>
  );
}
