"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { use } from "react";
import { DataTable } from "@/components/data-table";
import { StatusBadge } from "@/components/status-badge";
import { errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";
import { GitSyncForm } from "./git-sync-form";

const REFRESH_MS = 3000;

function when(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString() : "—";
}

function shortOid(oid: string | null): string {
  return oid ? oid.slice(0, 10) : "—";
}

export default function GitSyncPage({ params }: { params: Promise<{ workspace: string }> }) {
  const { workspace } = use(params);
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const me = useQuery(trpc.me.queryOptions());
  const status = useQuery({
    ...trpc.gitSync.status.queryOptions({ workspace }),
    refetchInterval: REFRESH_MS,
    retry: false,
  });
  const syncNow = useMutation(
    trpc.gitSync.syncNow.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.gitSync.status.pathFilter()),
    }),
  );
  const data = status.data;
  const failing = data !== undefined && data.failures > 0;

  return (
    <div>
      <h1>Git sync</h1>
      <p className="muted" style={{ marginTop: 0 }}>
        Every change of {workspace} becomes a commit on the remote, authored by whoever made it. A push never
        blocks a deploy: it happens a few seconds later, and a failing remote is retried with backoff.
      </p>
      {status.error && <div className="error">{errorMessage(status.error)}</div>}
      {data && (
        <>
          <GitSyncForm
            workspace={workspace}
            settings={data.settings}
            kinds={data.kinds}
            superadmin={me.data?.isSuperAdmin === true}
          />

          {data.settings && (
            <>
              <h2>Status</h2>
              <section className="panel stack" aria-label="Git sync status" data-testid="git-sync-status">
                <div className="row" style={{ alignItems: "center" }}>
                  <div>
                    <span className="muted">Last commit: </span>
                    <code data-testid="last-commit" title={data.last_commit ?? undefined}>
                      {shortOid(data.last_commit)}
                    </code>{" "}
                    {data.last_commit_at && <span className="muted">at {when(data.last_commit_at)}</span>}
                  </div>
                  <div>
                    <span className="muted">Pending changes: </span>
                    <span data-testid="pending-changes">{data.pending_changes}</span>
                  </div>
                  {!data.settings.enabled && <span className="status status-canceled">disabled</span>}
                  {failing && (
                    <div data-testid="next-attempt">
                      <span className="muted">Next attempt: </span>
                      {when(data.next_attempt_at)}{" "}
                      <span className="muted">
                        ({data.failures} failure{data.failures === 1 ? "" : "s"} in a row)
                      </span>
                    </div>
                  )}
                  <div className="spacer" style={{ flex: 1 }} />
                  <button
                    type="button"
                    disabled={syncNow.isPending}
                    onClick={() => syncNow.mutate({ workspace })}
                  >
                    Sync now
                  </button>
                </div>
                {syncNow.error && <div className="error">{errorMessage(syncNow.error)}</div>}
                {data.last_error && (
                  <div className="error" role="alert" data-testid="last-error">
                    <div>
                      <strong>Last error</strong>
                      {data.last_error_at && <span> ({when(data.last_error_at)})</span>}: {data.last_error}
                    </div>
                    {data.conflict_paths.length > 0 && (
                      <div>
                        Conflicting paths (changed on the remote too):
                        <ul style={{ margin: "0.25rem 0 0" }}>
                          {data.conflict_paths.map((p) => (
                            <li key={p}>
                              <code>{p}</code>
                            </li>
                          ))}
                        </ul>
                      </div>
                    )}
                  </div>
                )}
              </section>
            </>
          )}

          <h2>Recent runs</h2>
          <DataTable
            query={{ data: data.runs }}
            rowKey={(run) => String(run.id)}
            label="Recent runs"
            empty="No sync has run yet."
            columns={[
              { header: "Started", sortBy: (run) => run.started_at, cell: (run) => when(run.started_at) },
              { header: "Trigger", sortBy: (run) => run.trigger, cell: (run) => run.trigger },
              {
                header: "Status",
                sortBy: (run) => run.status,
                cell: (run) => <StatusBadge status={run.status} />,
              },
              { header: "Commits", sortBy: (run) => run.commits, cell: (run) => run.commits },
              {
                header: "Head",
                cell: (run) => <code title={run.head ?? undefined}>{shortOid(run.head)}</code>,
              },
              {
                header: "Finished",
                sortBy: (run) => run.finished_at ?? "",
                cell: (run) => when(run.finished_at),
              },
              {
                header: "Error",
                cell: (run) => (
                  <>
                    {run.error && <span className="field-error">{run.error}</span>}
                    {run.conflict_paths.length > 0 && (
                      <div className="muted">{run.conflict_paths.join(", ")}</div>
                    )}
                  </>
                ),
              },
            ]}
          />
        </>
      )}
    </div>
  );
}
