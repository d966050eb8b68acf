"use client";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import { useConfirm } from "@/components/ui/confirm";
import type { GitSyncStatusView } from "@/server/trpc/routers/git-sync";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

interface FormValues {
  remote_url: string;
  branch: string;
  username: string;
  /** Never pre-filled: empty keeps the stored one. */
  password: string;
  forgetPassword: boolean;
  include_kinds: string[];
  include_instance_config: boolean;
  include_password_hashes: boolean;
  enabled: boolean;
}

function initialValues(settings: GitSyncStatusView["settings"]): FormValues {
  return {
    remote_url: settings?.remote_url ?? "",
    branch: settings?.branch ?? "main",
    username: settings?.username ?? "",
    password: "",
    forgetPassword: false,
    include_kinds: settings?.include_kinds ?? [],
    include_instance_config: settings?.include_instance_config ?? false,
    include_password_hashes: settings?.include_password_hashes ?? false,
    enabled: settings?.enabled ?? true,
  };
}

function FieldError({ field, error }: { field: string; error: unknown }) {
  if (!error || errorField(error) !== field) return null;
  return (
    <span className="field-error" role="alert">
      {errorMessage(error)}
    </span>
  );
}

/**
 * The link to the remote. Its values come from the settings once (and again after a save or an
 * unlink), so that the page's auto-refresh never overwrites what is being typed.
 */
export function GitSyncForm({
  workspace,
  settings,
  kinds,
  superadmin,
}: {
  workspace: string;
  settings: GitSyncStatusView["settings"];
  kinds: string[];
  superadmin: boolean;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const [values, setValues] = useState<FormValues>(() => initialValues(settings));
  const set = <K extends keyof FormValues>(key: K, value: FormValues[K]) =>
    setValues((current) => ({ ...current, [key]: value }));
  const refresh = () => queryClient.invalidateQueries(trpc.gitSync.status.pathFilter());

  const save = useMutation(
    trpc.gitSync.save.mutationOptions({
      onSuccess: async (status) => {
        setValues(initialValues(status.settings));
        toast.success(`Git sync settings of ${workspace} saved`);
        await refresh();
      },
    }),
  );
  const unlink = useMutation(
    trpc.gitSync.unlink.mutationOptions({
      onSuccess: async () => {
        setValues(initialValues(null));
        toast.success(`${workspace} is no longer linked to git`);
        save.reset();
        await refresh();
      },
    }),
  );
  const fieldless = save.error && !errorField(save.error);

  return (
    <form
      className="panel stack"
      aria-label="Git sync settings"
      onSubmit={(event) => {
        event.preventDefault();
        unlink.reset();
        save.mutate({
          workspace,
          remote_url: values.remote_url.trim(),
          branch: values.branch.trim() || null,
          username: values.username.trim() || null,
          password: values.forgetPassword ? null : values.password || undefined,
          include_kinds: values.include_kinds,
          // Only superadmins may set these (core refuses them for anyone else).
          include_instance_config: superadmin ? values.include_instance_config : undefined,
          include_password_hashes: superadmin ? values.include_password_hashes : undefined,
          enabled: values.enabled,
        });
      }}
    >
      <label>
        Remote URL
        <span className="hint">HTTPS URL of the repository (credentials go below, not in the URL)</span>
        <input
          name="remote_url"
          placeholder="https://github.com/acme/millrace-workspace.git"
          value={values.remote_url}
          aria-invalid={errorField(save.error) === "remote_url"}
          onChange={(e) => set("remote_url", e.target.value)}
        />
        <FieldError field="remote_url" error={save.error} />
      </label>
      <div className="row">
        <label>
          Branch
          <input
            name="branch"
            value={values.branch}
            aria-invalid={errorField(save.error) === "branch"}
            onChange={(e) => set("branch", e.target.value)}
          />
          <FieldError field="branch" error={save.error} />
        </label>
        <label>
          Username
          <input
            name="username"
            autoComplete="off"
            value={values.username}
            aria-invalid={errorField(save.error) === "username"}
            onChange={(e) => set("username", e.target.value)}
          />
          <FieldError field="username" error={save.error} />
        </label>
        <label>
          Password or token
          <input
            name="password"
            type="password"
            autoComplete="new-password"
            placeholder={settings?.has_secret ? "stored (leave empty to keep it)" : ""}
            value={values.password}
            disabled={values.forgetPassword}
            onChange={(e) => set("password", e.target.value)}
          />
        </label>
        {settings?.has_secret && (
          <div className="stack" style={{ gap: "0.25rem" }}>
            <span className="status status-success" data-testid="secret-stored">
              stored
            </span>
            <label style={{ flexDirection: "row", fontWeight: 400 }}>
              <input
                type="checkbox"
                checked={values.forgetPassword}
                onChange={(e) => set("forgetPassword", e.target.checked)}
              />
              Remove the stored password
            </label>
          </div>
        )}
      </div>

      <fieldset className="row" style={{ border: "1px solid var(--line)", borderRadius: 6 }}>
        <legend>
          What is committed <span className="muted">(none checked: every kind)</span>
        </legend>
        {kinds.map((kind) => (
          <label key={kind} style={{ flexDirection: "row", fontWeight: 400 }}>
            <input
              type="checkbox"
              name="include_kinds"
              value={kind}
              checked={values.include_kinds.includes(kind)}
              onChange={(e) =>
                set(
                  "include_kinds",
                  e.target.checked
                    ? [...values.include_kinds, kind]
                    : values.include_kinds.filter((k) => k !== kind),
                )
              }
            />
            {kind}
          </label>
        ))}
        <FieldError field="include_kinds" error={save.error} />
      </fieldset>

      {superadmin && (
        <fieldset className="row" style={{ border: "1px solid var(--line)", borderRadius: 6 }}>
          <legend>Superadmin only</legend>
          <label style={{ flexDirection: "row", fontWeight: 400 }}>
            <input
              type="checkbox"
              checked={values.include_instance_config}
              onChange={(e) => set("include_instance_config", e.target.checked)}
            />
            Commit the instance config (worker groups, custom tags)
          </label>
          <label style={{ flexDirection: "row", fontWeight: 400 }}>
            <input
              type="checkbox"
              checked={values.include_password_hashes}
              onChange={(e) => set("include_password_hashes", e.target.checked)}
            />
            Commit the members&apos; password hashes
          </label>
        </fieldset>
      )}

      <label style={{ flexDirection: "row", alignItems: "center" }}>
        <input
          type="checkbox"
          role="switch"
          name="enabled"
          aria-checked={values.enabled}
          checked={values.enabled}
          onChange={(e) => set("enabled", e.target.checked)}
        />
        Enabled <span className="hint">(off: the link is kept but nothing is pushed)</span>
      </label>

      {fieldless && <div className="error">{errorMessage(save.error)}</div>}
      {unlink.error && <div className="error">{errorMessage(unlink.error)}</div>}
      <div className="row">
        <button className="primary" type="submit" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Save"}
        </button>
        {settings && (
          <button
            type="button"
            disabled={unlink.isPending}
            onClick={async () => {
              const confirmed = await confirm({
                title: `Unlink ${workspace} from ${settings.remote_url}?`,
                description: "Nothing more is pushed; the remote keeps its commits.",
                action: "Unlink",
                destructive: true,
              });
              if (confirmed) unlink.mutate({ workspace });
            }}
          >
            Unlink
          </button>
        )}
        {save.isSuccess && <span className="muted">Saved.</span>}
      </div>
    </form>
  );
}
