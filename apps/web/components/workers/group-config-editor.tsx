"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { toast } from "sonner";
import { useConfirm } from "@/components/ui/confirm";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import {
  AUTOSCALING_FIELDS,
  AutoscalingFields,
  autoscalingForm,
  autoscalingValue,
  type AutoscalingConfigValue,
  type AutoscalingForm,
} from "./autoscaling-fields";

/** The config fields as stored (see WorkerGroupConfig in @millrace/core). */
export interface GroupConfig {
  worker_tags?: string[];
  init_bash?: string;
  periodic_script_bash?: string;
  periodic_script_interval_seconds?: number;
  dedicated_worker?: string;
  network?: boolean;
  autoscaling?: AutoscalingConfigValue;
}

function splitTags(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((tag) => tag.trim())
    .filter(Boolean);
}

/** The form as the user left it; empty fields are left out so that defaults apply. */
function toConfig(form: FormState): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  const tags = splitTags(form.tags);
  if (tags.length > 0) config.worker_tags = tags;
  if (form.initBash.trim()) config.init_bash = form.initBash;
  if (form.periodicBash.trim()) config.periodic_script_bash = form.periodicBash;
  // Sent as typed: the server says what is wrong with "abc" or 2.5 next to the field.
  if (form.interval.trim()) {
    const n = Number(form.interval);
    config.periodic_script_interval_seconds = Number.isNaN(n) ? form.interval : n;
  }
  if (form.dedicated.trim()) config.dedicated_worker = form.dedicated.trim();
  if (!form.network) config.network = false;
  const autoscaling = autoscalingValue(form.autoscaling);
  if (autoscaling) config.autoscaling = autoscaling;
  return config;
}

const INLINE_FIELDS = [
  "worker_tags",
  "init_bash",
  "periodic_script_bash",
  "periodic_script_interval_seconds",
  "dedicated_worker",
  "network",
];

interface FormState {
  tags: string;
  initBash: string;
  periodicBash: string;
  interval: string;
  dedicated: string;
  network: boolean;
  autoscaling: AutoscalingForm;
}

function fromConfig(config: GroupConfig | null): FormState {
  return {
    tags: (config?.worker_tags ?? []).join(", "),
    initBash: config?.init_bash ?? "",
    periodicBash: config?.periodic_script_bash ?? "",
    interval: config?.periodic_script_interval_seconds?.toString() ?? "",
    dedicated: config?.dedicated_worker ?? "",
    network: config?.network ?? true,
    autoscaling: autoscalingForm(config?.autoscaling),
  };
}

function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: string;
  error?: string | null;
  children: ReactNode;
}) {
  return (
    <label>
      <span>
        {label} {hint && <span className="hint">{hint}</span>}
      </span>
      {children}
      {error && <span className="field-error">{error}</span>}
    </label>
  );
}

/** Superadmin editor of one worker group's config; errors show next to the field they name. */
export function GroupConfigEditor({ group, config }: { group: string; config: GroupConfig | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [form, setForm] = useState(() => fromConfig(config));
  const [saved, setSaved] = useState(false);
  const refresh = () => queryClient.invalidateQueries(trpc.worker.groups.queryFilter());
  const update = useMutation(
    trpc.worker.updateGroup.mutationOptions({
      onSuccess: async (stored) => {
        setForm(fromConfig(stored));
        setSaved(true);
        toast.success(`Saved the config of worker group ${group}`);
        await refresh();
      },
    }),
  );
  const remove = useMutation(
    trpc.worker.deleteGroup.mutationOptions({
      onSuccess: async () => {
        toast.success(`Deleted the config of worker group ${group}`);
        await refresh();
      },
    }),
  );
  const confirm = useConfirm();
  const field = errorField(update.error) ?? (update.error ? "config" : undefined);
  const errorFor = (...prefixes: string[]) =>
    field && prefixes.some((p) => field === p || field.startsWith(`${p}[`))
      ? errorMessage(update.error)
      : null;
  const set = (patch: Partial<FormState>) => {
    setForm((current) => ({ ...current, ...patch }));
    setSaved(false);
  };
  const otherError =
    field && !INLINE_FIELDS.includes(field.replace(/\[\d+\]$/, "")) && !AUTOSCALING_FIELDS.includes(field);

  return (
    <form
      className="stack"
      aria-label={`Config of worker group ${group}`}
      onSubmit={(event) => {
        event.preventDefault();
        update.mutate({ name: group, config: toConfig(form) });
      }}
    >
      <Field
        label="Tags"
        hint="comma separated; empty: the group serves every default tag (WORKER_TAGS on a worker wins)"
        error={errorFor("worker_tags")}
      >
        <input
          name="worker_tags"
          value={form.tags}
          aria-invalid={!!errorFor("worker_tags")}
          onChange={(e) => set({ tags: e.target.value })}
        />
      </Field>
      <Field
        label="Init script"
        hint="bash, run when a worker of the group starts"
        error={errorFor("init_bash")}
      >
        <textarea
          name="init_bash"
          rows={3}
          value={form.initBash}
          onChange={(e) => set({ initBash: e.target.value })}
        />
      </Field>
      <div className="row">
        <div style={{ flex: 3 }}>
          <Field label="Periodic script" hint="bash" error={errorFor("periodic_script_bash")}>
            <textarea
              name="periodic_script_bash"
              rows={2}
              value={form.periodicBash}
              onChange={(e) => set({ periodicBash: e.target.value })}
            />
          </Field>
        </div>
        <div style={{ flex: 1 }}>
          <Field label="Every (seconds)" error={errorFor("periodic_script_interval_seconds")}>
            <input
              name="periodic_script_interval_seconds"
              inputMode="numeric"
              value={form.interval}
              aria-invalid={!!errorFor("periodic_script_interval_seconds")}
              onChange={(e) => set({ interval: e.target.value })}
            />
          </Field>
        </div>
      </div>
      <Field
        label="Dedicated worker"
        hint="<workspace>:<script path>, or empty"
        error={errorFor("dedicated_worker")}
      >
        <input
          name="dedicated_worker"
          value={form.dedicated}
          aria-invalid={!!errorFor("dedicated_worker")}
          onChange={(e) => set({ dedicated: e.target.value })}
        />
      </Field>
      <label style={{ flexDirection: "row", alignItems: "center", gap: "0.5rem" }}>
        <input
          type="checkbox"
          name="network"
          checked={form.network}
          onChange={(e) => set({ network: e.target.checked })}
        />
        Network access for the group&apos;s jobs
        {errorFor("network") && <span className="field-error">{errorFor("network")}</span>}
      </label>
      <AutoscalingFields
        form={form.autoscaling}
        onChange={(patch) => set({ autoscaling: { ...form.autoscaling, ...patch } })}
        errorFor={(name) => (field === name ? errorMessage(update.error) : null)}
      />
      {otherError && <div className="error">{errorMessage(update.error)}</div>}
      {remove.error && <div className="error">{errorMessage(remove.error)}</div>}
      <div className="row">
        <button className="primary" type="submit" disabled={update.isPending}>
          {update.isPending ? "Saving…" : "Save config"}
        </button>
        {config && (
          <button
            type="button"
            disabled={remove.isPending}
            onClick={async () => {
              if (
                await confirm({
                  title: `Delete the config of worker group ${group}?`,
                  description: "Its workers go back to the default config within seconds.",
                  action: "Delete config",
                  destructive: true,
                })
              )
                remove.mutate({ name: group });
            }}
          >
            Delete config
          </button>
        )}
        {saved && <span className="muted">Saved: running workers reload it within seconds.</span>}
      </div>
    </form>
  );
}
