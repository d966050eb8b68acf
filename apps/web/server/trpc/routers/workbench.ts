import { z } from "zod";
import { AppError, waitForJob } from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";
import { jobView } from "./job.ts";

/** The script workbench's own reads (components/script-editor.tsx). */
export const workbenchRouter = router({
  /**
   * A run once it has finished (woken by the job's completion, not polled), or null when it has not
   * finished within `timeoutMs`. The workbench asks for a Test's run right after starting it, so
   * that the result shows the moment it is in, while the run view follows the logs live.
   */
  finishedRun: workspaceProcedure
    .input(z.object({ id: z.string(), timeoutMs: z.number().int().min(0).max(20_000).default(20_000) }))
    .query(async ({ ctx, input }) => {
      try {
        return jobView(await waitForJob(ctx.services, ctx.membership, input.id, input.timeoutMs));
      } catch (error) {
        if (error instanceof AppError && error.code === "LIMIT_EXCEEDED") return null;
        throw error;
      }
    }),
});
