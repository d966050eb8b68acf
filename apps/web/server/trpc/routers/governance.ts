import { instanceGovernance, workspaceGovernance, type GovernanceReport } from "@millrace/core";
import { authedProcedure, router, workspaceProcedure } from "../init.ts";

function reportView(report: GovernanceReport) {
  return {
    ...report,
    generatedAt: report.generatedAt.toISOString(),
    workspaces: report.workspaces.map((w) => ({
      ...w,
      staleScripts: w.staleScripts.map((s) => ({
        path: s.path,
        lastDeployedAt: s.lastDeployedAt.toISOString(),
      })),
    })),
  };
}

export const governanceRouter = router({
  instance: authedProcedure.query(async ({ ctx }) =>
    reportView(await instanceGovernance(ctx.services, ctx.principal)),
  ),
  workspace: workspaceProcedure.query(async ({ ctx }) =>
    reportView(await workspaceGovernance(ctx.services, ctx.membership)),
  ),
});
