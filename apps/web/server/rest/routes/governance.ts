import { instanceGovernance, workspaceGovernance, type GovernanceReport } from "@millrace/core";
import { z } from "zod";
import { json } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";

/** The governance report (Millrace's own: Windmill has none), in the API's snake_case. */
const governanceShape = z.object({
  generated_at: z.string(),
  stale_script_days: z.number(),
  runs_window_days: z.number(),
  workspaces: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      members: z.number(),
      admins: z.array(z.object({ username: z.string(), email: z.string() })),
      admin_count: z.number(),
      scripts: z.number(),
      flows: z.number(),
      schedules: z.number(),
      runs_last_30_days: z.number(),
      warnings: z.array(z.string()),
      stale_scripts: z.array(z.object({ path: z.string(), last_deployed_at: z.string() })),
      tags: z.array(z.string()),
    }),
  ),
  /** tag → the workspaces that use it. */
  tags: z.record(z.string(), z.array(z.string())),
});

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
  defineRoute({
    method: "GET",
    pattern: "/api/governance/report",
    summary: "the governance report of every workspace (superadmins)",
    tag: "governance",
    response: governanceShape,
    handler: async (ctx) =>
      json(governanceJson(await instanceGovernance(ctx.services, await ctx.principal()))),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/governance/report",
    summary: "the governance report of the workspace (admins)",
    tag: "governance",
    response: governanceShape,
    handler: async (ctx) =>
      json(governanceJson(await workspaceGovernance(ctx.services, await ctx.membership()))),
  }),
];
