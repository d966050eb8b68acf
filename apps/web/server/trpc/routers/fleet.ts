import { z } from "zod";
import { fleetHistory, HISTORY_WINDOWS_MINUTES, loadProfile } from "@millrace/core";
import { authedProcedure, router } from "../init.ts";

// Thin adapters over core's fleet history. Visible to whoever sees the Workers page (any signed-in
// user, as worker.list): instance-level figures only.
export const fleetRouter = router({
  history: authedProcedure
    .input(z.object({ minutes: z.union(HISTORY_WINDOWS_MINUTES.map((m) => z.literal(m))).default(60) }))
    .query(({ ctx, input }) => fleetHistory(ctx.services, ctx.principal, input.minutes)),

  /** The last day of jobs per tag, for the sizing simulator's "use my data". */
  loadProfile: authedProcedure.query(({ ctx }) => loadProfile(ctx.services, ctx.principal)),
});
