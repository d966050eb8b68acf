import { z } from "zod";
import {
  AppError,
  createSchedule,
  deleteSchedule,
  getSchedule,
  listScheduleRuns,
  listSchedules,
  previewTicks,
  setScheduleEnabled,
  updateSchedule,
  type ScheduleRun,
  type ScheduleView,
} from "@millrace/core";
import { authedProcedure, router, workspaceProcedure } from "../init.ts";

function scheduleView(schedule: ScheduleView) {
  return {
    path: schedule.path,
    schedule: schedule.schedule,
    timezone: schedule.timezone,
    scriptPath: schedule.scriptPath,
    isFlow: schedule.isFlow,
    args: schedule.args,
    enabled: schedule.enabled,
    summary: schedule.summary,
    nextRunAt: schedule.nextRunAt?.toISOString() ?? null,
    lastRunAt: schedule.lastRunAt?.toISOString() ?? null,
    error: schedule.error,
    permissionedAs: schedule.permissionedAs,
    updatedAt: schedule.updatedAt.toISOString(),
  };
}

function runView(run: ScheduleRun) {
  return {
    id: run.id,
    status: run.status,
    scheduledFor: run.scheduledFor.toISOString(),
    startedAt: run.startedAt?.toISOString() ?? null,
    completedAt: run.completedAt?.toISOString() ?? null,
  };
}

const timing = {
  schedule: z.string().max(200),
  timezone: z.string().max(100),
  args: z.record(z.string(), z.unknown()).default({}),
  summary: z.string().nullable().optional(),
};

export const scheduleRouter = router({
  list: workspaceProcedure.query(async ({ ctx }) => {
    const schedules = await listSchedules(ctx.services, ctx.membership, { perPage: 1000 });
    const runs = await listScheduleRuns(
      ctx.services,
      ctx.membership,
      schedules.map((s) => s.path),
      5,
    );
    return schedules.map((s) => ({ ...scheduleView(s), runs: (runs.get(s.path) ?? []).map(runView) }));
  }),

  get: workspaceProcedure.input(z.object({ path: z.string() })).query(async ({ ctx, input }) => {
    const schedule = await getSchedule(ctx.services, ctx.membership, input.path);
    const runs = await listScheduleRuns(ctx.services, ctx.membership, [schedule.path], 20);
    return { ...scheduleView(schedule), runs: (runs.get(schedule.path) ?? []).map(runView) };
  }),

  create: workspaceProcedure
    .input(
      z.object({
        path: z.string(),
        scriptPath: z.string(),
        enabled: z.boolean().default(true),
        ...timing,
      }),
    )
    .mutation(async ({ ctx, input }) =>
      scheduleView(await createSchedule(ctx.services, ctx.membership, input)),
    ),

  update: workspaceProcedure
    .input(z.object({ path: z.string(), ...timing }))
    .mutation(async ({ ctx, input }) => {
      const { path, ...update } = input;
      return scheduleView(await updateSchedule(ctx.services, ctx.membership, path, update));
    }),

  setEnabled: workspaceProcedure
    .input(z.object({ path: z.string(), enabled: z.boolean() }))
    .mutation(async ({ ctx, input }) =>
      scheduleView(await setScheduleEnabled(ctx.services, ctx.membership, input.path, input.enabled)),
    ),

  delete: workspaceProcedure.input(z.object({ path: z.string() })).mutation(async ({ ctx, input }) => {
    await deleteSchedule(ctx.services, ctx.membership, input.path);
    return { path: input.path };
  }),

  /** The next runs as the form is typed in: an invalid cron or zone answers with the field at fault. */
  preview: authedProcedure
    .input(
      z.object({
        schedule: z.string().max(200),
        timezone: z.string().max(100),
        count: z.number().int().default(5),
      }),
    )
    .query(({ input }) => {
      try {
        return {
          ticks: previewTicks(input.schedule, input.timezone, input.count).map((t) => t.toISOString()),
        };
      } catch (error) {
        if (error instanceof AppError && error.code === "INVALID_INPUT") {
          return { ticks: null, error: error.message, field: error.field ?? null };
        }
        throw error;
      }
    }),
});
