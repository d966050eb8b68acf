"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { toast } from "sonner";
import { ListSearch, matchesQuery } from "@/components/list-search";
import { PlainPage } from "@/components/people/plain-page";
import { useConfirm } from "@/components/ui/confirm";
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
  const confirm = useConfirm();
  const [query, setQuery] = useState("");
  const shown = (tokens.data ?? []).filter((t) =>
    matchesQuery(query, t.label, t.tokenPrefix, t.kind, t.workspaceId ?? "all"),
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
      {tokens.error && <div className="error">{errorMessage(tokens.error)}</div>}
      {revoke.error && <div className="error">{errorMessage(revoke.error)}</div>}
      {tokens.data?.length === 0 && <div className="panel empty">No tokens yet.</div>}
      {tokens.data && tokens.data.length > 0 && (
        <ListSearch
          label="Search tokens"
          placeholder="Search by label, prefix, kind, workspace…"
          value={query}
          onChange={setQuery}
          shown={shown.length}
          total={tokens.data.length}
        />
      )}
      {tokens.data && tokens.data.length > 0 && shown.length === 0 && (
        <div className="panel empty">No token matches “{query}”.</div>
      )}
      {shown.length > 0 && (
        <div className="overflow-x-auto">
          <table>
            <thead>
              <tr>
                <th>Label</th>
                <th>Prefix</th>
                <th>Kind</th>
                <th>Workspace</th>
                <th>Expires</th>
                <th>Last used</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {shown.map((t) => (
                <tr key={t.tokenPrefix} data-token={t.tokenPrefix}>
                  <td>{t.label}</td>
                  <td>
                    <code>{t.tokenPrefix}…</code>
                  </td>
                  <td>{t.kind}</td>
                  <td>{t.workspaceId ?? <span className="muted">all</span>}</td>
                  <td>
                    {t.expiresAt ? (
                      new Date(t.expiresAt).toLocaleString()
                    ) : (
                      <span className="muted">never</span>
                    )}
                  </td>
                  <td>
                    {t.lastUsedAt ? (
                      new Date(t.lastUsedAt).toLocaleString()
                    ) : (
                      <span className="muted">never</span>
                    )}
                  </td>
                  <td>
                    <button
                      type="button"
                      onClick={async () => {
                        if (
                          await confirm({
                            title: `Revoke token ${t.label ? `“${t.label}” ` : ""}(${t.tokenPrefix}…)?`,
                            description: "Whatever uses it can no longer sign in with it.",
                            action: "Revoke token",
                            destructive: true,
                          })
                        )
                          revoke.mutate({ tokenPrefix: t.tokenPrefix });
                      }}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </PlainPage>
  );
}
