"use client";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { PlainPage } from "@/components/people/plain-page";
import { RestoreChangesView } from "@/components/restore/restore-changes";
import { useConfirm } from "@/components/ui/confirm";
import { errorField, errorMessage } from "@/lib/errors";
import { useTRPC } from "@/lib/trpc";

interface Source {
  url: string;
  branch: string;
  username: string;
  password: string;
  workspaceId: string;
}

/** Superadmins: a workspace comes back from its git repository (checked first, then applied). */
export default function RestorePage() {
  const trpc = useTRPC();
  const confirm = useConfirm();
  const [source, setSource] = useState<Source>({
    url: "",
    branch: "main",
    username: "",
    password: "",
    workspaceId: "",
  });
  const restore = useMutation(trpc.gitSync.restore.mutationOptions());
  const set = (key: keyof Source, value: string) => {
    setSource((current) => ({ ...current, [key]: value }));
    restore.reset();
  };
  const run = (yes: boolean) =>
    restore.mutate({
      git: {
        url: source.url.trim(),
        branch: source.branch.trim() || undefined,
        username: source.username || undefined,
        password: source.password || undefined,
      },
      workspaceId: source.workspaceId.trim() || undefined,
      // Check never applies anything; Apply applies what Check showed.
      yes,
      dryRun: !yes,
    });
  const report = restore.data;
  const field = errorField(restore.error);

  return (
    <PlainPage title="Restore a workspace from git">
      <form
        className="panel stack"
        aria-label="Restore source"
        onSubmit={(event) => {
          event.preventDefault();
          run(false);
        }}
      >
        <label>
          Git URL
          <input
            name="url"
            placeholder="https://github.com/acme/millrace-workspace.git"
            value={source.url}
            aria-invalid={field === "git.url"}
            onChange={(e) => set("url", e.target.value)}
          />
        </label>
        <div className="row">
          <label>
            Branch
            <input
              name="branch"
              value={source.branch}
              aria-invalid={field === "git.branch"}
              onChange={(e) => set("branch", e.target.value)}
            />
          </label>
          <label>
            Username
            <input
              name="username"
              autoComplete="off"
              value={source.username}
              onChange={(e) => set("username", e.target.value)}
            />
          </label>
          <label>
            Password or token
            <input
              name="password"
              type="password"
              autoComplete="new-password"
              value={source.password}
              onChange={(e) => set("password", e.target.value)}
            />
          </label>
          <label>
            Workspace id
            <span className="hint">optional: defaults to the id in .millrace/workspace.yaml</span>
            <input
              name="workspace_id"
              value={source.workspaceId}
              onChange={(e) => set("workspaceId", e.target.value)}
            />
          </label>
        </div>
        <div className="row" style={{ alignItems: "center" }}>
          <button className="primary" type="submit" disabled={restore.isPending}>
            {restore.isPending ? "Working…" : "Check"}
          </button>
          <span className="muted">
            Check reads the repository, validates every file and compares it with the workspace; nothing is
            applied until you press Apply.
          </span>
        </div>
        {restore.error && <div className="error">{errorMessage(restore.error)}</div>}
      </form>

      {report && (
        <section className="panel stack" aria-label="Restore report" style={{ marginTop: "1rem" }}>
          <h2 style={{ margin: 0 }}>
            Workspace <code>{report.workspaceId}</code>
          </h2>
          {report.applied && (
            <div className="status status-success" data-testid="restore-applied">
              Applied in {Math.round(report.durationMs)} ms
            </div>
          )}
          {report.errors.length > 0 && (
            <div className="error" role="alert">
              The repository has {report.errors.length} problem(s): nothing was applied.
              <table style={{ marginTop: "0.5rem" }}>
                <thead>
                  <tr>
                    <th>File</th>
                    <th>Field</th>
                    <th>Problem</th>
                  </tr>
                </thead>
                <tbody>
                  {report.errors.map((error, i) => (
                    <tr key={`${error.file}-${error.field ?? ""}-${i}`}>
                      <td>
                        <code>{error.file}</code>
                      </td>
                      <td>{error.field ? <code>{error.field}</code> : "—"}</td>
                      <td>{error.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {report.skipped.length > 0 && (
            <div className="muted">
              Skipped:{" "}
              {report.skipped.map((s) => (
                <span key={s.file} style={{ marginRight: "0.5rem" }}>
                  <code>{s.file}</code> ({s.reason})
                </span>
              ))}
            </div>
          )}
          {report.diff.added.length + report.diff.changed.length + report.diff.deleted.length > 0 && (
            <div className="stack" data-testid="restore-diff">
              <strong>
                {report.applied ? "Changed" : "Differences with the workspace"}: {report.diff.added.length}{" "}
                added, {report.diff.changed.length} changed, {report.diff.deleted.length} deleted
              </strong>
              <RestoreChangesView changes={report.changes} />
            </div>
          )}
          {Object.keys(report.counts).length > 0 && (
            <div>
              <strong>Counts</strong>
              <table>
                <tbody>
                  {Object.entries(report.counts).map(([kind, count]) => (
                    <tr key={kind}>
                      <td>{kind}</td>
                      <td>{count}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {report.undecryptableSecrets.length > 0 && (
            <div>
              <strong>Secrets that could not be decrypted</strong> (restored empty: set them again):
              <ul style={{ margin: "0.25rem 0 0" }}>
                {report.undecryptableSecrets.map((p) => (
                  <li key={p}>
                    <code>{p}</code>
                  </li>
                ))}
              </ul>
            </div>
          )}
          {report.usersNeedingPasswordReset.length > 0 && (
            <div>
              <strong>Users needing a password reset</strong>:
              <ul style={{ margin: "0.25rem 0 0" }}>
                {report.usersNeedingPasswordReset.map((u) => (
                  <li key={u}>{u}</li>
                ))}
              </ul>
            </div>
          )}
          {!report.applied && report.errors.length === 0 && (
            <div className="row" style={{ alignItems: "center" }}>
              <button
                className="primary"
                type="button"
                disabled={restore.isPending}
                onClick={async () => {
                  const confirmed = await confirm({
                    title: `Apply the repository to ${report.workspaceId}?`,
                    description: "The files listed above are added, changed or deleted in the workspace.",
                    action: "Apply",
                    destructive: true,
                  });
                  if (confirmed) run(true);
                }}
              >
                Apply
              </button>
              <span className="muted">The workspace becomes exactly what the repository holds.</span>
            </div>
          )}
        </section>
      )}
    </PlainPage>
  );
}
