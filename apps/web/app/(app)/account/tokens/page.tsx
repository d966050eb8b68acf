"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent, type HTMLAttributes } from "react";
import { toast } from "sonner";
import { DataTable } from "@/components/data-table";
import { PlainPage } from "@/components/people/plain-page";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

export default function TokensPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [includeSessions, setIncludeSessions] = useState(false);
  const tokens = useQuery(trpc.people.tokens.queryOptions({ includeSessions }));
  const workspaces = useQuery(trpc.workspace.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries(trpc.people.tokens.queryFilter());
  const [label, setLabel] = useState("");
  const [expiresAt, setExpiresAt] = useState("");
  const [workspaceId, setWorkspaceId] = useState("");
  const [created, setCreated] = useState<string | null>(null);
  const create = useMutation(
    trpc.people.createToken.mutationOptions({
      onSuccess: async ({ token }) => {
        toast.success("Created a token: copy it now");
        setCreated(token);
        setLabel("");
        await refresh();
      },
    }),
  );
  const revoke = useMutation(
    trpc.people.deleteToken.mutationOptions({
      onSuccess: async (_data, { tokenPrefix }) => {
        toast.success(`Revoked token ${tokenPrefix}…`);
        await refresh();
      },
    }),
  );
  const field = errorField(create.error);

  function submit(event: FormEvent) {
    event.preventDefault();
    setCreated(null);
    create.mutate({
      label: label || null,
      expiresAt: expiresAt ? new Date(expiresAt).toISOString() : null,
      workspaceId: workspaceId || null,
    });
  }

  return (
    <PlainPage title="API tokens">
      <p className="muted">
        Send a token as <code>Authorization: Bearer &lt;token&gt;</code>. Only its hash is stored: copy it
        when it is shown, it cannot be shown again.
      </p>
      {created && (
        <div className="panel" role="status">
          New token: <code data-testid="new-token">{created}</code>
        </div>
      )}
      <form className="panel row" onSubmit={submit}>
        <label>
          Label
          <input
            name="label"
            value={label}
            onChange={(e) => setLabel(e.target.value)}
            aria-invalid={field === "label"}
          />
          {field === "label" && <span className="field-error">{errorMessage(create.error)}</span>}
        </label>
        <label>
          Expires <span className="hint">optional</span>
          <input
            name="expiration"
            type="datetime-local"
            value={expiresAt}
            onChange={(e) => setExpiresAt(e.target.value)}
            aria-invalid={field === "expiration"}
          />
          {field === "expiration" && <span className="field-error">{errorMessage(create.error)}</span>}
        </label>
        <label>
          Workspace <span className="hint">optional scope</span>
          <select
            name="workspace_id"
            value={workspaceId}
            onChange={(e) => setWorkspaceId(e.target.value)}
            aria-invalid={field === "workspace_id"}
          >
            <option value="">every workspace</option>
            {workspaces.data?.map((w) => (
              <option key={w.id} value={w.id}>
                {w.id}
              </option>
            ))}
          </select>
          {field === "workspace_id" && <span className="field-error">{errorMessage(create.error)}</span>}
        </label>
        <button className="primary" type="submit" disabled={create.isPending}>
          Create token
        </button>
        {create.error && !field && <div className="error">{errorMessage(create.error)}</div>}
      </form>
      <h2>Your tokens</h2>
      <label className="row" style={{ alignItems: "center", flexDirection: "row" }}>
        <input
          type="checkbox"
          name="include_sessions"
          checked={includeSessions}
          onChange={(e) => setIncludeSessions(e.target.checked)}
        />
        Show sign-in sessions too
      </label>
      {revoke.error && <div className="error">{errorMessage(revoke.error)}</div>}
      <DataTable
        query={tokens}
        rowKey={(t) => t.tokenPrefix}
        rowProps={(t) => ({ "data-token": t.tokenPrefix }) as HTMLAttributes<HTMLTableRowElement>}
        search={{
          label: "Search tokens",
          placeholder: "Search by label, prefix, kind, workspace…",
          fields: (t) => [t.label, t.tokenPrefix, t.kind, t.workspaceId ?? "all"],
        }}
        empty="No tokens yet."
        noMatch={(query) => <>No token matches “{query}”.</>}
        columns={[
          { header: "Label", sortBy: (t) => t.label ?? "", cell: (t) => t.label },
          { header: "Prefix", cell: (t) => <code>{t.tokenPrefix}…</code> },
          { header: "Kind", sortBy: (t) => t.kind, cell: (t) => t.kind },
          { header: "Workspace", cell: (t) => t.workspaceId ?? <span className="muted">all</span> },
          { header: "Expires", sortBy: (t) => t.expiresAt ?? "", cell: (t) => dateOrNever(t.expiresAt) },
          { header: "Last used", sortBy: (t) => t.lastUsedAt ?? "", cell: (t) => dateOrNever(t.lastUsedAt) },
        ]}
        actions={[
          {
            label: "Revoke",
            confirm: (t) => ({
              title: `Revoke token ${t.label ? `“${t.label}” ` : ""}(${t.tokenPrefix}…)?`,
              description: "Whatever uses it can no longer sign in with it.",
              action: "Revoke token",
              destructive: true,
            }),
            onSelect: (t) => revoke.mutate({ tokenPrefix: t.tokenPrefix }),
          },
        ]}
      />
    </PlainPage>
  );
}

function dateOrNever(iso: string | null) {
  return iso ? new Date(iso).toLocaleString() : <span className="muted">never</span>;
}
