import { instanceGovernance, workspaceGovernance, type GovernanceReport } from "@millrace/core";
import { json } from "../../http.ts";
import type { Route } from "../router.ts";

/** The governance report as JSON, in the API's snake_case. */
export function governanceJson(report: GovernanceReport) {
  return {
    generated_at: report.generatedAt.toISOString(),
    stale_script_days: report.staleScriptDays,
    runs_window_days: report.runsWindowDays,
    workspaces: report.workspaces.map((w) => ({
      id: w.id,
      name: w.name,
      members: w.members,
      admins: w.admins,
      admin_count: w.admins.length,
      scripts: w.scripts,
      flows: w.flows,
      schedules: w.schedules,
      runs_last_30_days: w.runsLast30Days,
      warnings: w.warnings,
      stale_scripts: w.staleScripts.map((s) => ({
        path: s.path,
        last_deployed_at: s.lastDeployedAt.toISOString(),
      })),
      tags: w.tags,
    })),
    tags: report.tags,
  };
}

export const governanceRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/governance/report",
    handler: async (ctx) =>
      json(governanceJson(await instanceGovernance(ctx.services, await ctx.principal()))),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/governance/report",
    handler: async (ctx) =>
      json(governanceJson(await workspaceGovernance(ctx.services, await ctx.membership()))),
  },
];
