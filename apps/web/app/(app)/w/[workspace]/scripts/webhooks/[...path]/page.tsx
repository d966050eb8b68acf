"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "@/components/ui/link";
import { use, useEffect, useState } from "react";
import { DataTable } from "@/components/data-table";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

function Copyable({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <label>
      {label}
      <div className="row" style={{ alignItems: "center", flexWrap: "nowrap" }}>
        <input readOnly value={value} data-testid={testId} style={{ flex: 1, fontFamily: "monospace" }} />
        <button type="button" onClick={() => void navigator.clipboard?.writeText(value)}>
          Copy
        </button>
      </div>
    </label>
  );
}

/** A script's webhooks: its async and sync URLs, tokens that may run only this script, curl. */
export default function ScriptWebhooksPage({
  params,
}: {
  params: Promise<{ workspace: string; path: string[] }>;
}) {
  const { workspace, path: segments } = use(params);
  const path = segments.map(decodeURIComponent).join("/");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [origin, setOrigin] = useState("");
  const [label, setLabel] = useState("");
  const [created, setCreated] = useState<string | null>(null);
  useEffect(() => setOrigin(window.location.origin), []);

  const script = useQuery(trpc.script.get.queryOptions({ workspace, path }));
  const tokens = useQuery(trpc.webhook.tokens.queryOptions({ workspace, path }));
  const refresh = () => queryClient.invalidateQueries(trpc.webhook.tokens.queryFilter({ workspace, path }));
  const create = useMutation(
    trpc.webhook.createToken.mutationOptions({
      onSuccess: async ({ token }) => {
        setCreated(token);
        setLabel("");
        await refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.webhook.revokeToken.mutationOptions({ onSuccess: refresh }));

  const asyncUrl = `${origin}/api/w/${workspace}/jobs/run/p/${path}`;
  const syncUrl = `${origin}/api/w/${workspace}/jobs/run_wait_result/p/${path}`;
  const token = created ?? "$TOKEN";
  const exampleArgs = Object.fromEntries(
    (script.data?.schema.order ?? []).map((name) => [
      name,
      script.data?.schema.properties[name]?.default ?? "…",
    ]),
  );
  // Double quotes wherever the token goes: the shell expands $TOKEN there, not inside '…'.
  const curlJson = [
    `curl -X POST '${syncUrl}' \\`,
    `  -H "Authorization: Bearer ${token}" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d '${JSON.stringify(exampleArgs)}'`,
  ].join("\n");
  const curlText = [
    `# any body that is not JSON reaches the script as its \`body\` argument`,
    `curl -X POST "${asyncUrl}?token=${token}" \\`,
    `  -H 'Content-Type: text/plain' --data-binary 'hello'`,
  ].join("\n");

  return (
    <div>
      <div className="toolbar">
        <h1>Webhooks of {path}</h1>
        <Link href={`/w/${workspace}/scripts/get/${path}`}>Back to the script</Link>
      </div>
      {script.error && <div className="error">{errorMessage(script.error)}</div>}
      {script.data && (
        <div className="stack">
          <div className="panel stack">
            <p className="muted" style={{ margin: 0 }}>
              POST to these URLs to run the latest version of the script. A JSON object body becomes the
              arguments; any other body (text, form, XML…) is passed as <code>{"{ body }"}</code>.
              Authenticate with <code>Authorization: Bearer &lt;token&gt;</code> or{" "}
              <code>?token=&lt;token&gt;</code>.
            </p>
            <Copyable label="Async: answers with the job id" value={asyncUrl} testId="webhook-async-url" />
            <Copyable
              label="Sync: waits and answers with the result"
              value={syncUrl}
              testId="webhook-sync-url"
            />
          </div>

          <div className="panel stack">
            <strong>Tokens for this script</strong>
            <p className="muted" style={{ margin: 0 }}>
              A webhook token runs this script as you, and can call nothing else. It is shown once.
            </p>
            <form
              className="row"
              onSubmit={(event) => {
                event.preventDefault();
                create.mutate({ workspace, path, label: label || undefined });
              }}
            >
              <label>
                Label
                <input
                  name="label"
                  value={label}
                  placeholder="github"
                  onChange={(e) => setLabel(e.target.value)}
                />
              </label>
              <button className="primary" type="submit" disabled={create.isPending}>
                Create webhook token
              </button>
            </form>
            {create.error && <div className="error">{errorMessage(create.error)}</div>}
            {created && (
              <div className="stack" data-testid="new-token">
                <Copyable label="New token (copy it now: it will not be shown again)" value={created} />
              </div>
            )}
            {revoke.error && <div className="error">{errorMessage(revoke.error)}</div>}
            <DataTable
              query={tokens}
              rowKey={(t) => t.tokenPrefix}
              empty="No webhook tokens yet."
              columns={[
                { header: "Token", cell: (t) => <code>{t.tokenPrefix}…</code> },
                { header: "Label", sortBy: (t) => t.label ?? "", cell: (t) => t.label },
                { header: "Owner", sortBy: (t) => t.ownerEmail, cell: (t) => t.ownerEmail },
                {
                  header: "Created",
                  sortBy: (t) => t.createdAt,
                  cell: (t) => new Date(t.createdAt).toLocaleString(),
                },
                {
                  header: "Last used",
                  sortBy: (t) => t.lastUsedAt ?? "",
                  cell: (t) => (t.lastUsedAt ? new Date(t.lastUsedAt).toLocaleString() : "never"),
                },
              ]}
              actions={[
                {
                  label: "Revoke",
                  confirm: (t) => ({
                    title: `Revoke webhook token ${t.label ? `“${t.label}” ` : ""}(${t.tokenPrefix}…)?`,
                    description: "Whatever calls the webhook with it is refused from now on.",
                    action: "Revoke token",
                    destructive: true,
                  }),
                  onSelect: (t) => revoke.mutate({ workspace, tokenPrefix: t.tokenPrefix }),
                },
              ]}
            />
          </div>

          <div className="panel stack">
            <strong>Examples</strong>
            <pre data-testid="curl-example" style={{ margin: 0, whiteSpace: "pre-wrap" }}>
              {curlJson}
            </pre>
            <pre style={{ margin: 0, whiteSpace: "pre-wrap" }}>{curlText}</pre>
          </div>
        </div>
      )}
    </div>
  );
}
