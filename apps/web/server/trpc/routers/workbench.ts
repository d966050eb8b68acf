import { z } from "zod";
import { AppError, runPreview, waitForJob } from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";
import { jobView } from "./job.ts";

/**
 * How long a Test waits for its run in the same request. Most tests finish well within it, and
 * then the result arrives with the answer that starts the run: one round trip from click to
 * result. A longer run is followed live (logs as they come) once this has passed.
 */
const TEST_WAIT_MS = 1500;

/** The script workbench's own calls (components/script-editor.tsx). */
export const workbenchRouter = router({
  /** Runs the editor's code as it is (a preview job), answering with the run if it ends soon. */
  test: workspaceProcedure
    .input(z.object({ language: z.string(), content: z.string(), args: z.record(z.string(), z.unknown()) }))
    .mutation(async ({ ctx, input }) => {
      const id = await runPreview(ctx.services, ctx.membership, input);
      try {
        return { id, job: jobView(await waitForJob(ctx.services, ctx.membership, id, TEST_WAIT_MS)) };
      } catch (error) {
        if (error instanceof AppError && error.code === "LIMIT_EXCEEDED") return { id, job: null };
        throw error;
      }
    }),
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
