import { z } from "zod";
import { cancelJob, runPreview, runScriptByPath } from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";

export const jobRunRouter = router({
  runScript: workspaceProcedure
    .input(z.object({ path: z.string(), args: z.record(z.string(), z.unknown()) }))
    .mutation(async ({ ctx, input }) => ({
      id: await runScriptByPath(ctx.services, ctx.membership, input.path, input.args),
    })),
  runPreview: workspaceProcedure
    .input(z.object({ language: z.string(), content: z.string(), args: z.record(z.string(), z.unknown()) }))
    .mutation(async ({ ctx, input }) => ({ id: await runPreview(ctx.services, ctx.membership, input) })),
  cancel: workspaceProcedure
    .input(z.object({ id: z.string(), reason: z.string().max(1000).optional() }))
    .mutation(async ({ ctx, input }) =>
      cancelJob(ctx.services, ctx.membership, input.id, input.reason ?? null),
    ),
});
