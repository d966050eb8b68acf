import { z } from "zod";
import { createWorkspace, listWorkspaces } from "@millrace/core";
import { authedProcedure, router } from "../init.ts";

export const workspaceRouter = router({
  list: authedProcedure.query(({ ctx }) => listWorkspaces(ctx.services, ctx.principal)),
  create: authedProcedure
    .input(z.object({ id: z.string(), name: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const workspace = await createWorkspace(ctx.services, ctx.principal, input);
      return { id: workspace.id, name: workspace.name };
    }),
});
