import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listScheduleRuns,
  listSchedules,
  previewTicks,
  scheduleExists,
  setScheduleEnabled,
  updateSchedule,
  type ScheduleView,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryInt } from "../define.ts";
import type { Route } from "../router.ts";
import { queryFlag, textAnswer, workspacePath } from "./params.ts";

/** windmill-client's Schedule, plus Millrace's next and last run times. */
const windmillScheduleShape = z.object({
  workspace_id: z.string(),
  path: z.string(),
  edited_by: z.string(),
  edited_at: z.string(),
  schedule: z.string(),
  timezone: z.string(),
  enabled: z.boolean(),
  script_path: z.string(),
  is_flow: z.boolean(),
  args: z.unknown(),
  extra_perms: z.record(z.string(), z.boolean()),
  email: z.string(),
  permissioned_as: z.string(),
  error: z.string().nullable(),
  summary: z.string().nullable(),
  next_run_at: z.string().nullable(),
  last_run_at: z.string().nullable(),
});

/** Windmill's Schedule, plus Millrace's next and last run times and the last tick's error. */
function windmillSchedule(schedule: ScheduleView): z.infer<typeof windmillScheduleShape> {
  return {
    workspace_id: schedule.workspaceId,
    path: schedule.path,
    edited_by: schedule.permissionedAs.replace(/^u\//, ""),
    edited_at: schedule.updatedAt.toISOString(),
    schedule: schedule.schedule,
    timezone: schedule.timezone,
    enabled: schedule.enabled,
    script_path: schedule.scriptPath,
    is_flow: schedule.isFlow,
    args: schedule.args,
    extra_perms: {},
    email: schedule.email ?? "",
    permissioned_as: schedule.permissionedAs,
    error: schedule.error,
    summary: schedule.summary || null,
    next_run_at: schedule.nextRunAt?.toISOString() ?? null,
    last_run_at: schedule.lastRunAt?.toISOString() ?? null,
  };
}

/** ScriptArgs: a JSON object (null or absent: none). */
const scriptArgs = z.record(z.string(), z.unknown(), { error: "must be a JSON object" }).nullish();

const pageQuery = { page: queryInt.optional(), per_page: queryInt.optional() };

export const scheduleRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/schedules/preview",
    summary: "previewSchedule",
    tag: "schedule",
    // Checked by previewTicks, which names the field and says what is wrong with it.
    body: z.object({ schedule: z.unknown(), timezone: z.unknown().optional() }),
    response: z.array(z.string()),
    handler: async (ctx, { body }) => {
      await ctx.principal();
      const ticks = previewTicks(body.schedule, body.timezone, 5);
      return json(ticks.map((tick) => tick.toISOString()));
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/schedules/create",
    summary: "createSchedule",
    tag: "schedule",
    body: z.object({
      path: z.string(),
      schedule: z.string(),
      timezone: z.string().nullish(),
      script_path: z.string(),
      is_flow: z.boolean().nullish(),
      args: scriptArgs,
      enabled: z.boolean().nullish(),
      summary: z.string().nullish(),
    }),
    response: textAnswer("the path of the new schedule"),
    handler: async (ctx, { body }) => {
      const created = await createSchedule(ctx.services, await ctx.membership(), {
        path: body.path,
        schedule: body.schedule,
        timezone: body.timezone ?? null,
        scriptPath: body.script_path,
        isFlow: body.is_flow ?? false,
        args: body.args ?? {},
        enabled: body.enabled ?? true,
        summary: body.summary ?? null,
      });
      return text(created.path, 201);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/schedules/update/*path",
    summary: "updateSchedule",
    tag: "schedule",
    params: workspacePath,
    body: z.object({
      schedule: z.string(),
      timezone: z.string().nullish(),
      args: scriptArgs,
      summary: z.string().nullish(),
    }),
    response: textAnswer("the path of the schedule"),
    handler: async (ctx, { params, body }) => {
      const updated = await updateSchedule(ctx.services, await ctx.membership(), params.path, {
        schedule: body.schedule,
        timezone: body.timezone ?? null,
        args: body.args ?? {},
        // Absent leaves the summary as it is; null clears it.
        ...(body.summary !== undefined ? { summary: body.summary ?? null } : {}),
      });
      return text(updated.path);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/schedules/setenabled/*path",
    summary: "setScheduleEnabled",
    tag: "schedule",
    params: workspacePath,
    body: z.object({
      enabled: z.boolean({
        error: (issue) =>
          issue.input === undefined ? "is required (true or false)" : "must be true or false",
      }),
    }),
    response: textAnswer("schedule <path> enabled|disabled"),
    handler: async (ctx, { params, body }) => {
      const schedule = await setScheduleEnabled(
        ctx.services,
        await ctx.membership(),
        params.path,
        body.enabled,
      );
      return text(`schedule ${schedule.path} ${body.enabled ? "enabled" : "disabled"}`);
    },
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/schedules/delete/*path",
    summary: "deleteSchedule",
    tag: "schedule",
    params: workspacePath,
    response: textAnswer("schedule <path> deleted"),
    handler: async (ctx, { params }) => {
      await deleteSchedule(ctx.services, await ctx.membership(), params.path);
      return text(`schedule ${params.path} deleted`);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/schedules/get/*path",
    summary: "getSchedule",
    tag: "schedule",
    params: workspacePath,
    // windmill-client's GetScheduleResponse: Schedule & UserDraftOverlay (no drafts here).
    response: windmillScheduleShape.extend({ is_draft: z.literal(false) }),
    handler: async (ctx, { params }) =>
      json({
        ...windmillSchedule(await getSchedule(ctx.services, await ctx.membership(), params.path)),
        is_draft: false,
      }),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/schedules/exists/*path",
    summary: "existsSchedule",
    tag: "schedule",
    params: workspacePath,
    response: z.boolean(),
    handler: async (ctx, { params }) =>
      json(await scheduleExists(ctx.services, await ctx.membership(), params.path)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/schedules/list",
    summary: "listSchedules",
    tag: "schedule",
    query: z.object({
      ...pageQuery,
      path_start: z.string().optional(),
      /** The script or flow the schedules run. */
      path: z.string().optional(),
      is_flow: queryFlag.optional(),
      schedule_path: z.string().optional(),
    }),
    response: z.array(windmillScheduleShape),
    handler: async (ctx, { query }) => {
      const schedules = await listSchedules(ctx.services, await ctx.membership(), {
        page: query.page,
        perPage: query.per_page,
        pathStart: query.path_start ?? null,
        scriptPath: query.path ?? null,
        isFlow: query.is_flow ?? null,
      });
      const exact = query.schedule_path;
      return json(schedules.filter((s) => !exact || s.path === exact).map(windmillSchedule));
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/schedules/list_with_jobs",
    summary: "listSchedulesWithJobs",
    tag: "schedule",
    query: z.object(pageQuery),
    response: z.array(
      windmillScheduleShape.extend({
        jobs: z.array(z.object({ id: z.string(), success: z.boolean(), duration_ms: z.number() })),
      }),
    ),
    handler: async (ctx, { query }) => {
      const membership = await ctx.membership();
      const schedules = await listSchedules(ctx.services, membership, {
        page: query.page,
        perPage: query.per_page,
      });
      const runs = await listScheduleRuns(
        ctx.services,
        membership,
        schedules.map((s) => s.path),
        20,
      );
      return json(
        schedules.map((schedule) => ({
          ...windmillSchedule(schedule),
          jobs: (runs.get(schedule.path) ?? [])
            .filter((run) => run.completedAt)
            .map((run) => ({
              id: run.id,
              success: run.status === "success",
              duration_ms: run.startedAt ? run.completedAt!.getTime() - run.startedAt.getTime() : 0,
            })),
        })),
      );
    },
  }),
];
