"use client";
import { useId, type ReactNode } from "react";

/** A script's settings as the editor holds them: the text of each input (empty: not set). */
export interface ScriptSettings {
  description: string;
  tag: string;
  timeout: string;
  concurrentLimit: string;
  concurrencyTimeWindowS: string;
  retryAttempts: string;
  retrySeconds: string;
  priority: string;
  dedicatedWorker: boolean;
}

export const EMPTY_SETTINGS: ScriptSettings = {
  description: "",
  tag: "",
  timeout: "",
  concurrentLimit: "",
  concurrencyTimeWindowS: "",
  retryAttempts: "",
  retrySeconds: "",
  priority: "",
  dedicatedWorker: false,
};

/** The settings a deployed version has, as scriptView answers them. */
export interface DeployedSettings {
  timeout: number | null;
  priority: number | null;
  concurrent_limit: number | null;
  concurrency_time_window_s: number | null;
  retry: { constant?: { attempts: number; seconds: number } } | null;
  dedicated_worker: boolean;
}

const text = (value: number | null | undefined) =>
  value === null || value === undefined ? "" : String(value);

export function settingsOf(
  script: { description?: string; tag?: string | null; settings?: DeployedSettings } | null,
): ScriptSettings {
  if (!script) return EMPTY_SETTINGS;
  const s = script.settings;
  return {
    description: script.description ?? "",
    tag: script.tag ?? "",
    timeout: text(s?.timeout),
    concurrentLimit: text(s?.concurrent_limit),
    concurrencyTimeWindowS: text(s?.concurrency_time_window_s),
    retryAttempts: text(s?.retry?.constant?.attempts),
    retrySeconds: text(s?.retry?.constant?.seconds),
    priority: text(s?.priority),
    dedicatedWorker: !!s?.dedicated_worker,
  };
}

/** A number field's text as deploy takes it: null when empty, NaN stays (the server names the field). */
function numberOrNull(value: string): number | null {
  const trimmed = value.trim();
  return trimmed === "" ? null : Number(trimmed);
}

/** The deploy input's fields for these settings (Windmill's names, checked by core). */
export function deploySettings(settings: ScriptSettings) {
  const attempts = numberOrNull(settings.retryAttempts);
  const seconds = numberOrNull(settings.retrySeconds);
  return {
    description: settings.description,
    tag: settings.tag || null,
    timeout: numberOrNull(settings.timeout),
    priority: numberOrNull(settings.priority),
    concurrent_limit: numberOrNull(settings.concurrentLimit),
    concurrency_time_window_s: numberOrNull(settings.concurrencyTimeWindowS),
    retry:
      attempts === null && seconds === null
        ? null
        : { constant: { attempts: attempts ?? 0, seconds: seconds ?? 0 } },
    dedicated_worker: settings.dedicatedWorker,
  };
}

/** Which setting a deploy error's field names (core's field → the input showing it). */
export const SETTING_FIELDS: Record<string, keyof ScriptSettings> = {
  description: "description",
  tag: "tag",
  timeout: "timeout",
  priority: "priority",
  concurrent_limit: "concurrentLimit",
  concurrency_time_window_s: "concurrencyTimeWindowS",
  retry: "retryAttempts",
  "retry.constant": "retryAttempts",
  "retry.constant.attempts": "retryAttempts",
  "retry.constant.seconds": "retrySeconds",
  dedicated_worker: "dedicatedWorker",
};

function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: string;
  error?: string | null;
  children: (id: string, describedBy: string | undefined) => ReactNode;
}) {
  const id = useId();
  const errorId = `${id}-error`;
  return (
    <div className="flex min-w-0 flex-col gap-1">
      <label htmlFor={id}>
        {label} {hint && <span className="hint">{hint}</span>}
      </label>
      {children(id, error ? errorId : undefined)}
      {error && (
        <span className="field-error" id={errorId} role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

export function SettingsPanel({
  settings,
  onChange,
  language,
  tags,
  disabled,
  errorFor,
}: {
  settings: ScriptSettings;
  onChange: (next: ScriptSettings) => void;
  language: string;
  /** The tags this workspace may use (worker.customTags). */
  tags: string[];
  disabled: boolean;
  /** The deploy error's message when it names this setting. */
  errorFor: (setting: keyof ScriptSettings) => string | null;
}) {
  const set = <K extends keyof ScriptSettings>(key: K, value: ScriptSettings[K]) =>
    onChange({ ...settings, [key]: value });
  const numberInput = (key: keyof ScriptSettings, label: string, hint?: string, min = 0) => (
    <Field label={label} hint={hint} error={errorFor(key)}>
      {(id, describedBy) => (
        <input
          id={id}
          name={key}
          type="number"
          min={min}
          step={1}
          value={settings[key] as string}
          disabled={disabled}
          aria-invalid={!!errorFor(key)}
          aria-describedby={describedBy}
          onChange={(e) => set(key, e.target.value as never)}
        />
      )}
    </Field>
  );
  // A tag the version has that the list no longer offers stays selectable, marked.
  const offered = tags.filter((tag) => tag !== "flow" && tag !== "dependency");
  const unknownTag = settings.tag && !offered.includes(settings.tag) ? settings.tag : null;
  return (
    <div className="stack" data-testid="workbench-settings">
      <Field label="Description" error={errorFor("description")}>
        {(id, describedBy) => (
          <textarea
            id={id}
            name="description"
            rows={3}
            value={settings.description}
            disabled={disabled}
            aria-describedby={describedBy}
            onChange={(e) => set("description", e.target.value)}
          />
        )}
      </Field>
      <Field label="Worker tag" hint="which workers run it" error={errorFor("tag")}>
        {(id, describedBy) => (
          <select
            id={id}
            name="tag"
            value={settings.tag}
            disabled={disabled}
            aria-invalid={!!errorFor("tag")}
            aria-describedby={describedBy}
            onChange={(e) => set("tag", e.target.value)}
          >
            <option value="">Default ({language})</option>
            {offered.map((tag) => (
              <option key={tag} value={tag}>
                {tag}
              </option>
            ))}
            {unknownTag && <option value={unknownTag}>{unknownTag} (not available here)</option>}
          </select>
        )}
      </Field>
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
        {numberInput("timeout", "Timeout", "seconds", 1)}
        {numberInput("priority", "Priority", "1-100, higher first", 1)}
        {numberInput("concurrentLimit", "Concurrency limit", "runs at once", 1)}
        {numberInput("concurrencyTimeWindowS", "Time window", "seconds")}
        {numberInput("retryAttempts", "Retries", "attempts")}
        {numberInput("retrySeconds", "Retry delay", "seconds")}
      </div>
      <label className="flex items-center gap-2">
        <input
          type="checkbox"
          name="dedicatedWorker"
          checked={settings.dedicatedWorker}
          disabled={disabled}
          onChange={(e) => set("dedicatedWorker", e.target.checked)}
          style={{ width: "auto" }}
        />
        Run on dedicated workers <span className="hint">(a worker serving only this script)</span>
      </label>
      {errorFor("dedicatedWorker") && <span className="field-error">{errorFor("dedicatedWorker")}</span>}
    </div>
  );
}
