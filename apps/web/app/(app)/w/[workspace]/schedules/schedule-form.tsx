"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { toast } from "sonner";
import { ArgsForm } from "@/components/args-form";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export interface ScheduleFormValues {
  path: string;
  scriptPath: string;
  schedule: string;
  timezone: string;
  args: Record<string, unknown>;
  summary: string;
  enabled: boolean;
}

function browserTimezone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/** Waits until the value stops changing, so the preview does not query on every keystroke. */
function useSettled<T>(value: T, ms = 250): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

function FieldError({ show, message }: { show: boolean; message: string | undefined }) {
  if (!show || !message) return null;
  return (
    <span className="field-error" role="alert">
      {message}
    </span>
  );
}

/** The create and edit form: cron with seconds, IANA time zone, target script and its args. */
export function ScheduleForm({
  workspace,
  initial,
}: {
  workspace: string;
  /** Set when editing: the path and target then stay as they are (as in Windmill). */
  initial?: ScheduleFormValues;
}) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const editing = initial !== undefined;
  const [values, setValues] = useState<ScheduleFormValues>(
    initial ?? {
      path: "",
      scriptPath: "",
      schedule: "0 0 * * * *",
      timezone: browserTimezone(),
      args: {},
      summary: "",
      enabled: true,
    },
  );
  const set = (patch: Partial<ScheduleFormValues>) => setValues((current) => ({ ...current, ...patch }));
  const scripts = useQuery(trpc.script.list.queryOptions({ workspace }));
  const script = useQuery({
    ...trpc.script.get.queryOptions({ workspace, path: values.scriptPath }),
    enabled: values.scriptPath !== "",
  });
  const timing = useSettled({ schedule: values.schedule, timezone: values.timezone });
  const preview = useQuery(trpc.schedule.preview.queryOptions({ ...timing, count: 5 }));

  const onSaved = async () => {
    toast.success(`Saved schedule ${values.path}`);
    await queryClient.invalidateQueries(trpc.schedule.pathFilter());
    router.push(`/w/${workspace}/schedules`);
  };
  const create = useMutation(trpc.schedule.create.mutationOptions({ onSuccess: onSaved }));
  const update = useMutation(trpc.schedule.update.mutationOptions({ onSuccess: onSaved }));
  const saving = editing ? update : create;
  const field = saving.error ? errorField(saving.error) : undefined;
  const message = saving.error ? errorMessage(saving.error) : undefined;
  const IN_PLACE = ["path", "summary", "script_path", "is_flow", "schedule", "timezone", "args"];
  const shownInPlace = !!field && (IN_PLACE.includes(field) || field.startsWith("args."));
  const previewField = preview.data?.ticks === null ? (preview.data.field ?? undefined) : undefined;
  const previewError = preview.data?.ticks === null ? preview.data.error : undefined;

  const submit = () => {
    const common = {
      workspace,
      schedule: values.schedule,
      timezone: values.timezone,
      args: values.args,
      summary: values.summary,
    };
    if (editing) update.mutate({ ...common, path: values.path });
    else
      create.mutate({ ...common, path: values.path, scriptPath: values.scriptPath, enabled: values.enabled });
  };

  return (
    <form
      className="stack"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <div className="panel stack">
        <label>
          Path
          <span className="hint">u/&lt;user&gt;/&lt;name&gt; or f/&lt;folder&gt;/&lt;name&gt;</span>
          <input
            name="path"
            value={values.path}
            disabled={editing}
            aria-invalid={field === "path"}
            onChange={(e) => set({ path: e.target.value })}
          />
          <FieldError show={field === "path"} message={message} />
        </label>
        <label>
          Summary
          <input name="summary" value={values.summary} onChange={(e) => set({ summary: e.target.value })} />
          <FieldError show={field === "summary"} message={message} />
        </label>
        <label>
          Script
          <select
            name="script_path"
            value={values.scriptPath}
            disabled={editing}
            aria-invalid={field === "script_path"}
            onChange={(e) => set({ scriptPath: e.target.value, args: {} })}
          >
            <option value="">Choose a script…</option>
            {editing && <option value={values.scriptPath}>{values.scriptPath}</option>}
            {(scripts.data ?? [])
              .filter((s) => !editing || s.path !== values.scriptPath)
              .map((s) => (
                <option key={s.path} value={s.path}>
                  {s.path}
                </option>
              ))}
          </select>
          <FieldError show={field === "script_path" || field === "is_flow"} message={message} />
        </label>
      </div>

      <div className="panel stack">
        <div className="row">
          <label style={{ flex: 2 }}>
            Cron
            <span className="hint">6 fields: second minute hour day-of-month month day-of-week</span>
            <input
              name="schedule"
              value={values.schedule}
              aria-invalid={field === "schedule" || previewField === "schedule"}
              onChange={(e) => set({ schedule: e.target.value })}
            />
            <FieldError show={field === "schedule"} message={message} />
            <FieldError show={field !== "schedule" && previewField === "schedule"} message={previewError} />
          </label>
          <label style={{ flex: 1 }}>
            Time zone
            <span className="hint">IANA name, e.g. Europe/Paris</span>
            <input
              name="timezone"
              value={values.timezone}
              aria-invalid={field === "timezone" || previewField === "timezone"}
              onChange={(e) => set({ timezone: e.target.value })}
            />
            <FieldError show={field === "timezone"} message={message} />
            <FieldError show={field !== "timezone" && previewField === "timezone"} message={previewError} />
          </label>
        </div>
        <div data-testid="next-runs">
          <span className="muted">Next runs: </span>
          {preview.data?.ticks ? (
            <ol style={{ margin: "0.25rem 0 0 1.25rem", padding: 0 }}>
              {preview.data.ticks.map((tick) => (
                <li key={tick}>
                  <time dateTime={tick}>{new Date(tick).toLocaleString()}</time>{" "}
                  <span className="muted">({tick.replace(".000Z", "Z")})</span>
                </li>
              ))}
            </ol>
          ) : (
            <span className="muted">{preview.isLoading ? "…" : "none (fix the cron or time zone)"}</span>
          )}
        </div>
      </div>

      <div className="panel stack">
        <strong>Arguments</strong>
        {values.scriptPath === "" && <p className="muted">Choose a script to fill in its arguments.</p>}
        {script.data && (
          <ArgsForm
            schema={script.data.schema}
            values={values.args}
            onChange={(args) => set({ args })}
            errorField={field}
            errorText={message}
          />
        )}
        <FieldError show={field === "args"} message={message} />
      </div>

      {!editing && (
        <label style={{ flexDirection: "row", alignItems: "center" }}>
          <input
            type="checkbox"
            name="enabled"
            checked={values.enabled}
            onChange={(e) => set({ enabled: e.target.checked })}
          />
          Enabled
        </label>
      )}
      {saving.error && !shownInPlace && <div className="error">{message}</div>}
      <div className="row">
        <button className="primary" type="submit" disabled={saving.isPending}>
          {editing ? "Save schedule" : "Create schedule"}
        </button>
      </div>
    </form>
  );
}
