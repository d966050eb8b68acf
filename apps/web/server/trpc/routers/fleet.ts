import { z } from "zod";
import {
  fleetHistory,
  getAlertSettings,
  HISTORY_WINDOWS_MINUTES,
  listInstanceAlerts,
  loadProfile,
  saveAlertSettings,
} from "@millrace/core";
import { authedProcedure, router } from "../init.ts";

// Thin adapters over core's fleet history. Visible to whoever sees the Workers page (any signed-in
// user, as worker.list): instance-level figures only.
export const fleetRouter = router({
  history: authedProcedure
    .input(z.object({ minutes: z.union(HISTORY_WINDOWS_MINUTES.map((m) => z.literal(m))).default(60) }))
    .query(({ ctx, input }) => fleetHistory(ctx.services, ctx.principal, input.minutes)),

  /** The last day of jobs per tag, for the sizing simulator's "use my data". */
  loadProfile: authedProcedure.query(({ ctx }) => loadProfile(ctx.services, ctx.principal)),

  // The instance's alerts and their settings: superadmins only (checked in core).
  alerts: authedProcedure.query(({ ctx }) => listInstanceAlerts(ctx.services, ctx.principal)),
  alertSettings: authedProcedure.query(({ ctx }) => getAlertSettings(ctx.services, ctx.principal)),
  saveAlertSettings: authedProcedure
    .input(
      z.object({
        webhookUrl: z.string().nullable(),
        script: z.string().nullable(),
        queueWaitSecs: z.union([z.number(), z.record(z.string(), z.number())]).nullable(),
        workerOfflineSecs: z.number().nullable(),
      }),
    )
    .mutation(({ ctx, input }) => saveAlertSettings(ctx.services, ctx.principal, input)),
});
