"use client";
import type { HTMLAttributes } from "react";
import { DataTable } from "@/components/data-table";
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
      <DataTable
        query={{ data: report.workspaces }}
        rowKey={(w) => w.id}
        rowProps={(w) => ({ "data-workspace": w.id }) as HTMLAttributes<HTMLTableRowElement>}
        empty="No workspaces yet."
        columns={[
          {
            header: "Workspace",
            sortBy: (w) => w.name,
            cell: (w) => (
              <>
                <Link href={`/w/${w.id}/members`}>{w.name}</Link> <code className="muted">{w.id}</code>
              </>
            ),
          },
          { header: "Members", sortBy: (w) => w.members, cell: (w) => w.members },
          {
            header: "Admins",
            sortBy: (w) => w.admins.length,
            cellProps: (w) => ({ title: w.admins.map((a) => a.email).join(", ") }),
            cell: (w) => w.admins.length,
          },
          { header: "Scripts", sortBy: (w) => w.scripts, cell: (w) => w.scripts },
          { header: "Flows", sortBy: (w) => w.flows, cell: (w) => w.flows },
          { header: "Schedules", sortBy: (w) => w.schedules, cell: (w) => w.schedules },
          {
            header: `Runs (${report.runsWindowDays} d)`,
            sortBy: (w) => w.runsLast30Days,
            cell: (w) => w.runsLast30Days,
          },
          { header: "Tags", cell: (w) => w.tags.join(", ") },
          { header: "Warnings", sortBy: (w) => w.warnings.length, cell: (w) => <Warnings workspace={w} /> },
        ]}
      />
      <h2>Tags</h2>
      <DataTable
        query={{ data: Object.entries(report.tags) }}
        rowKey={([tag]) => tag}
        empty="No tag in use."
        columns={[
          { header: "Tag", sortBy: ([tag]) => tag, cell: ([tag]) => <code>{tag}</code> },
          { header: "Used by", cell: ([, workspaces]) => workspaces.join(", ") },
        ]}
      />
    </div>
  );
}

function Warnings({ workspace }: { workspace: GovernanceView["workspaces"][number] }) {
  return (
    <>
      {workspace.warnings.map((warning) => (
        <div key={warning} className="status status-failure">
          {WARNING_TEXT[warning] ?? warning}
        </div>
      ))}
      {workspace.staleScripts.length > 0 && (
        <details>
          <summary>{workspace.staleScripts.length} stale script(s)</summary>
          <ul>
            {workspace.staleScripts.map((s) => (
              <li key={s.path}>
                <code>{s.path}</code>{" "}
                <span className="muted">{new Date(s.lastDeployedAt).toLocaleDateString()}</span>
              </li>
            ))}
          </ul>
        </details>
      )}
    </>
  );
}
