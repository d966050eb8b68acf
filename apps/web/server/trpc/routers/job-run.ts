import { z } from "zod";
import { cancelJob, getJob, invalidInput, runPreview, runScriptByPath } from "@millrace/core";
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
  /**
   * Runs a job's code again with its arguments: a script job runs the latest deployed version of
   * its path, a preview job (code never deployed) its own code again.
   */
  runAgain: workspaceProcedure.input(z.object({ id: z.string() })).mutation(async ({ ctx, input }) => {
    const job = await getJob(ctx.services, ctx.membership, input.id, { withLogs: false });
    const args = (job.args ?? {}) as Record<string, unknown>;
    if (job.kind === "preview") {
      return {
        id: await runPreview(ctx.services, ctx.membership, {
          language: job.language,
          content: job.content ?? "",
          args,
          path: job.scriptPath,
        }),
      };
    }
    if (job.kind !== "script" || !job.scriptPath)
      throw invalidInput("id", `a ${job.kind} job cannot be run again`);
    return { id: await runScriptByPath(ctx.services, ctx.membership, job.scriptPath, args) };
  }),
  cancel: workspaceProcedure
    .input(z.object({ id: z.string(), reason: z.string().max(1000).optional() }))
    .mutation(async ({ ctx, input }) =>
      cancelJob(ctx.services, ctx.membership, input.id, input.reason ?? null),
    ),
});
