"use client";
import Link from "@/components/ui/link";

export interface GovernanceView {
  generatedAt: string;
  staleScriptDays: number;
  runsWindowDays: number;
  workspaces: {
    id: string;
    name: string;
    members: number;
    admins: { username: string; email: string }[];
    scripts: number;
    flows: number;
    schedules: number;
    runsLast30Days: number;
    warnings: string[];
    staleScripts: { path: string; lastDeployedAt: string }[];
    tags: string[];
  }[];
  tags: Record<string, string[]>;
}

const WARNING_TEXT: Record<string, string> = {
  no_admin: "No admin: nobody can manage this workspace",
  single_admin: "Single admin: consider adding a backup admin",
};

export function GovernanceReport({ report, apiPath }: { report: GovernanceView; apiPath: string }) {
  return (
    <div className="stack">
      <p className="muted">
        Generated {new Date(report.generatedAt).toLocaleString()} · runs over the last {report.runsWindowDays}{" "}
        days · scripts unchanged for {report.staleScriptDays}+ days are stale · as JSON:{" "}
        <code>GET {apiPath}</code>
      </p>
      {report.workspaces.length === 0 && <div className="panel empty">No workspaces yet.</div>}
      {report.workspaces.length > 0 && (
        <div className="overflow-x-auto">
          <table>
            <thead>
              <tr>
                <th>Workspace</th>
                <th>Members</th>
                <th>Admins</th>
                <th>Scripts</th>
                <th>Flows</th>
                <th>Schedules</th>
                <th>Runs ({report.runsWindowDays} d)</th>
                <th>Tags</th>
                <th>Warnings</th>
              </tr>
            </thead>
            <tbody>
              {report.workspaces.map((w) => (
                <tr key={w.id} data-workspace={w.id}>
                  <td>
                    <Link href={`/w/${w.id}/members`}>{w.name}</Link> <code className="muted">{w.id}</code>
                  </td>
                  <td>{w.members}</td>
                  <td title={w.admins.map((a) => a.email).join(", ")}>{w.admins.length}</td>
                  <td>{w.scripts}</td>
                  <td>{w.flows}</td>
                  <td>{w.schedules}</td>
                  <td>{w.runsLast30Days}</td>
                  <td>{w.tags.join(", ")}</td>
                  <td>
                    {w.warnings.map((warning) => (
                      <div key={warning} className="status status-failure">
                        {WARNING_TEXT[warning] ?? warning}
                      </div>
                    ))}
                    {w.staleScripts.length > 0 && (
                      <details>
                        <summary>{w.staleScripts.length} stale script(s)</summary>
                        <ul>
                          {w.staleScripts.map((s) => (
                            <li key={s.path}>
                              <code>{s.path}</code>{" "}
                              <span className="muted">{new Date(s.lastDeployedAt).toLocaleDateString()}</span>
                            </li>
                          ))}
                        </ul>
                      </details>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Tags</h2>
      {Object.keys(report.tags).length === 0 ? (
        <div className="panel empty">No tag in use.</div>
      ) : (
        <div className="overflow-x-auto">
          <table>
            <thead>
              <tr>
                <th>Tag</th>
                <th>Used by</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(report.tags).map(([tag, workspaces]) => (
                <tr key={tag}>
                  <td>
                    <code>{tag}</code>
                  </td>
                  <td>{workspaces.join(", ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
