"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { toast } from "sonner";
import { PlainPage } from "@/components/people/plain-page";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

interface Form {
  webhookUrl: string;
  script: string;
  queueWaitSecs: string;
  workerOfflineSecs: string;
}

const EMPTY: Form = { webhookUrl: "", script: "", queueWaitSecs: "", workerOfflineSecs: "" };

/** "600" → 600; `{"*": 600, "gpu": 3600}` → that object; "" → null (unset). */
function parseThresholds(text: string): number | Record<string, number> | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  try {
    return JSON.parse(trimmed) as Record<string, number>;
  } catch {
    // Sent as is: the server names the field and says what it takes.
    return trimmed as unknown as number;
  }
}

/** The instance's alerts (superadmins): what is open, what recovered, and where alerts go. */
export default function AlertsPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const alerts = useQuery({ ...trpc.fleet.alerts.queryOptions(), retry: false, refetchInterval: 10_000 });
  const settings = useQuery({ ...trpc.fleet.alertSettings.queryOptions(), retry: false });
  const [form, setForm] = useState<Form>(EMPTY);
  useEffect(() => {
    if (!settings.data) return;
    const wait = settings.data.queueWaitSecs;
    setForm({
      webhookUrl: settings.data.webhookUrl ?? "",
      script: settings.data.script ?? "",
      queueWaitSecs: wait === null ? "" : typeof wait === "number" ? String(wait) : JSON.stringify(wait),
      workerOfflineSecs:
        settings.data.workerOfflineSecs === null ? "" : String(settings.data.workerOfflineSecs),
    });
  }, [settings.data]);
  const save = useMutation(
    trpc.fleet.saveAlertSettings.mutationOptions({
      onSuccess: async () => {
        toast.success("Alert settings saved");
        await queryClient.invalidateQueries(trpc.fleet.alertSettings.queryFilter());
      },
    }),
  );
  const field = errorField(save.error)?.split(".")[0];

  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate({
      webhookUrl: form.webhookUrl.trim() || null,
      script: form.script.trim() || null,
      queueWaitSecs: parseThresholds(form.queueWaitSecs),
      workerOfflineSecs: form.workerOfflineSecs.trim() ? Number(form.workerOfflineSecs) : null,
    });
  }

  const input = (name: keyof Form, label: string, hint: string, placeholder = "") => (
    <label>
      {label}
      <span className="hint">{hint}</span>
      <input
        name={name}
        value={form[name]}
        placeholder={placeholder}
        onChange={(e) => setForm({ ...form, [name]: e.target.value })}
        aria-invalid={field === name}
      />
      {field === name && <span className="field-error">{errorMessage(save.error)}</span>}
    </label>
  );

  const error = alerts.error ?? settings.error;
  return (
    <PlainPage title="Alerts">
      {error && <div className="error">{errorMessage(error)}</div>}
      {alerts.data && (
        <section aria-label="Open alerts" className="stack">
          <h2>Open</h2>
          {alerts.data.open.length === 0 ? (
            <p className="muted" data-testid="no-open-alerts">
              Nothing is wrong right now.
            </p>
          ) : (
            <ul data-testid="open-alerts">
              {alerts.data.open.map((alert) => (
                <li key={alert.id}>
                  {alert.message}{" "}
                  <span className="muted">since {new Date(alert.raisedAt).toLocaleString()}</span>
                </li>
              ))}
            </ul>
          )}
          {alerts.data.recent.length > 0 && (
            <>
              <h2>Recovered in the last day</h2>
              <ul>
                {alerts.data.recent.map((alert) => (
                  <li key={alert.id}>
                    {alert.message} — {alert.recovery}{" "}
                    <span className="muted">
                      {alert.clearedAt && new Date(alert.clearedAt).toLocaleString()}
                    </span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>
      )}
      {settings.data && (
        <form className="panel stack" aria-label="Alert settings" onSubmit={submit}>
          <h2 className="m-0">Where alerts go</h2>
          <p className="muted m-0">
            Every alert and its recovery is written to the audit log and shown on the Workers page. They can
            also be sent on: each is raised once, and cleared with a recovery message.
          </p>
          {input(
            "webhookUrl",
            "Webhook URL",
            "POSTed as JSON (status, kind, subject, message, and `text` for Slack or Mattermost).",
            "https://hooks.example.com/…",
          )}
          {input(
            "script",
            "Script to run",
            "<workspace>:<script path>, run with the same fields as arguments, as the user who deployed it.",
            "ops:f/alerts/page",
          )}
          {input(
            "queueWaitSecs",
            "Queue wait threshold (seconds)",
            'One number for every tag, or per tag: {"*": 600, "gpu": 3600}. Default 600.',
            "600",
          )}
          {input(
            "workerOfflineSecs",
            "Worker offline after (seconds)",
            "A worker silent this long is offline; a tag with due jobs and no worker for as long is unserved. Default 60.",
            "60",
          )}
          <div className="row">
            <button className="primary" type="submit" disabled={save.isPending}>
              Save
            </button>
            {save.error && !field && <div className="error">{errorMessage(save.error)}</div>}
          </div>
        </form>
      )}
    </PlainPage>
  );
}
