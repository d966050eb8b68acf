"use client";
// The `autoscaling` part of a worker group's config form (group-config-editor.tsx): Windmill's
// { enabled, min_workers, max_workers, cooldown_seconds, integration } with the three integrations.

/** The fields this form shows the server's message beside; any other goes under the form. */
export const AUTOSCALING_FIELDS = [
  "autoscaling.integration.type",
  "autoscaling.min_workers",
  "autoscaling.max_workers",
  "autoscaling.cooldown_seconds",
  "autoscaling.integration.command",
  "autoscaling.integration.path",
  "autoscaling.integration.tag",
  "autoscaling.integration.timeout_seconds",
  "autoscaling.integration.deployment",
  "autoscaling.integration.namespace",
  "autoscaling.integration.kubeconfig",
];

export type IntegrationType = "local" | "script" | "kubernetes";

/** The stored shape (see autoscalingConfigSchema in @millrace/core). */
export interface AutoscalingConfigValue {
  enabled: boolean;
  min_workers: number;
  max_workers: number;
  cooldown_seconds?: number;
  integration: {
    type: IntegrationType;
    command?: string[];
    path?: string;
    tag?: string;
    timeout_seconds?: number;
    deployment?: string;
    namespace?: string;
    kubeconfig?: string;
  };
}

export interface AutoscalingForm {
  /** "none": the config has no autoscaling key. */
  type: IntegrationType | "none";
  enabled: boolean;
  min: string;
  max: string;
  cooldown: string;
  command: string;
  path: string;
  tag: string;
  timeout: string;
  deployment: string;
  namespace: string;
  kubeconfig: string;
}

export function autoscalingForm(value: AutoscalingConfigValue | undefined): AutoscalingForm {
  return {
    type: value?.integration.type ?? "none",
    enabled: value?.enabled ?? true,
    min: value?.min_workers?.toString() ?? "0",
    max: value?.max_workers?.toString() ?? "3",
    cooldown: value?.cooldown_seconds?.toString() ?? "",
    command: (value?.integration.command ?? []).join("\n"),
    path: value?.integration.path ?? "",
    tag: value?.integration.tag ?? "",
    timeout: value?.integration.timeout_seconds?.toString() ?? "",
    deployment: value?.integration.deployment ?? "",
    namespace: value?.integration.namespace ?? "",
    kubeconfig: value?.integration.kubeconfig ?? "",
  };
}

// Sent as typed when not a number: the server names the field and says what is wrong.
const number = (text: string) => (Number.isNaN(Number(text)) || text.trim() === "" ? text : Number(text));

/** The config's `autoscaling` value, or undefined to leave it out. */
export function autoscalingValue(form: AutoscalingForm): Record<string, unknown> | undefined {
  if (form.type === "none") return undefined;
  const integration: Record<string, unknown> = { type: form.type };
  if (form.type === "script") {
    const command = form.command
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean);
    if (command.length > 0) integration.command = command;
    if (form.path.trim()) integration.path = form.path.trim();
    if (form.tag.trim()) integration.tag = form.tag.trim();
    if (form.timeout.trim()) integration.timeout_seconds = number(form.timeout);
  }
  if (form.type === "kubernetes") {
    if (form.deployment.trim()) integration.deployment = form.deployment.trim();
    if (form.namespace.trim()) integration.namespace = form.namespace.trim();
    if (form.kubeconfig.trim()) integration.kubeconfig = form.kubeconfig.trim();
  }
  return {
    enabled: form.enabled,
    min_workers: number(form.min),
    max_workers: number(form.max),
    ...(form.cooldown.trim() ? { cooldown_seconds: number(form.cooldown) } : {}),
    integration,
  };
}

export function AutoscalingFields({
  form,
  onChange,
  errorFor,
}: {
  form: AutoscalingForm;
  onChange: (patch: Partial<AutoscalingForm>) => void;
  /** The server's message when it names this field (`autoscaling.min_workers`…), else null. */
  errorFor: (field: string) => string | null;
}) {
  const input = (name: keyof AutoscalingForm, field: string, label: string, hint?: string) => (
    <label style={{ flex: 1 }}>
      <span>
        {label} {hint && <span className="hint">{hint}</span>}
      </span>
      <input
        name={`autoscaling.${field}`}
        value={form[name] as string}
        aria-invalid={!!errorFor(`autoscaling.${field}`)}
        onChange={(e) => onChange({ [name]: e.target.value })}
      />
      {errorFor(`autoscaling.${field}`) && (
        <span className="field-error">{errorFor(`autoscaling.${field}`)}</span>
      )}
    </label>
  );
  return (
    <fieldset className="stack" aria-label="Autoscaling">
      <legend>Autoscaling</legend>
      <div className="row">
        <label style={{ flex: 1 }}>
          <span>
            Integration <span className="hint">who starts and stops the group&apos;s workers</span>
          </span>
          <select
            name="autoscaling.integration.type"
            value={form.type}
            onChange={(e) => onChange({ type: e.target.value as AutoscalingForm["type"] })}
          >
            <option value="none">No autoscaling</option>
            <option value="local">local (MODE=pool processes)</option>
            <option value="script">script (a command or an admins script)</option>
            <option value="kubernetes">kubernetes (the group&apos;s Deployment)</option>
          </select>
          {errorFor("autoscaling.integration.type") && (
            <span className="field-error">{errorFor("autoscaling.integration.type")}</span>
          )}
        </label>
        {form.type !== "none" && (
          <label style={{ flexDirection: "row", alignItems: "center", gap: "0.5rem" }}>
            <input
              type="checkbox"
              name="autoscaling.enabled"
              checked={form.enabled}
              onChange={(e) => onChange({ enabled: e.target.checked })}
            />
            Enabled
          </label>
        )}
      </div>
      {form.type !== "none" && (
        <>
          <div className="row">
            {input("min", "min_workers", "Min workers", "0: none when idle")}
            {input("max", "max_workers", "Max workers")}
            {input("cooldown", "cooldown_seconds", "Cooldown (seconds)", "default 60")}
          </div>
          {form.type === "script" && (
            <div className="row">
              <label style={{ flex: 2 }}>
                <span>
                  Command{" "}
                  <span className="hint">one argument per line; gets group, count, reason, event type</span>
                </span>
                <textarea
                  name="autoscaling.integration.command"
                  rows={2}
                  value={form.command}
                  onChange={(e) => onChange({ command: e.target.value })}
                />
                {errorFor("autoscaling.integration.command") && (
                  <span className="field-error">{errorFor("autoscaling.integration.command")}</span>
                )}
              </label>
              {input("path", "integration.path", "or script path", "in the admins workspace")}
            </div>
          )}
          {form.type === "script" && (
            <div className="row">
              {input("tag", "integration.tag", "Script tag", "the script's job's worker tag (optional)")}
              {input("timeout", "integration.timeout_seconds", "Command timeout (seconds)", "default 60")}
            </div>
          )}
          {form.type === "kubernetes" && (
            <div className="row">
              {input("deployment", "integration.deployment", "Deployment", "default millrace-worker-<group>")}
              {input("namespace", "integration.namespace", "Namespace", "default: the pod's")}
              {input("kubeconfig", "integration.kubeconfig", "Kubeconfig path", "default: in-cluster")}
            </div>
          )}
        </>
      )}
    </fieldset>
  );
}
