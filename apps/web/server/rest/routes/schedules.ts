import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  invalidInput,
  listScheduleRuns,
  listSchedules,
  previewTicks,
  scheduleExists,
  setScheduleEnabled,
  updateSchedule,
  type ScheduleView,
} from "@millrace/core";
import { json, readJson, readObject, text } from "../../http.ts";
import type { RestContext, Route } from "../router.ts";
import { intParam, optionalString, requiredString } from "./params.ts";
import { boolParam, optionalBoolean } from "./variables.ts";

/** Windmill's Schedule, plus Millrace's next and last run times and the last tick's error. */
function windmillSchedule(schedule: ScheduleView) {
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

function args(body: Record<string, unknown>): unknown {
  return body.args ?? {};
}

const path = (ctx: RestContext) => ctx.params.path ?? "";

export const scheduleRoutes: Route[] = [
  {
    method: "POST",
    pattern: "/api/schedules/preview",
    handler: async (ctx) => {
      await ctx.principal();
      const body = readObject(await readJson(ctx.request));
      const ticks = previewTicks(body.schedule, body.timezone, 5);
      return json(ticks.map((tick) => tick.toISOString()));
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/schedules/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const created = await createSchedule(ctx.services, await ctx.membership(), {
        path: requiredString(body, "path"),
        schedule: requiredString(body, "schedule"),
        timezone: optionalString(body, "timezone") ?? null,
        scriptPath: requiredString(body, "script_path"),
        isFlow: optionalBoolean(body, "is_flow") ?? false,
        args: args(body),
        enabled: optionalBoolean(body, "enabled") ?? true,
        summary: optionalString(body, "summary") ?? null,
      });
      return text(created.path, 201);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/schedules/update/*path",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const updated = await updateSchedule(ctx.services, await ctx.membership(), path(ctx), {
        schedule: requiredString(body, "schedule"),
        timezone: optionalString(body, "timezone") ?? null,
        args: args(body),
        ...(body.summary !== undefined ? { summary: optionalString(body, "summary") ?? null } : {}),
      });
      return text(updated.path);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/schedules/setenabled/*path",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const enabled = optionalBoolean(body, "enabled");
      if (enabled === undefined) throw invalidInput("enabled", "is required (true or false)");
      const schedule = await setScheduleEnabled(ctx.services, await ctx.membership(), path(ctx), enabled);
      return text(`schedule ${schedule.path} ${enabled ? "enabled" : "disabled"}`);
    },
  },

  {
    method: "DELETE",
    pattern: "/api/w/:workspace/schedules/delete/*path",
    handler: async (ctx) => {
      await deleteSchedule(ctx.services, await ctx.membership(), path(ctx));
      return text(`schedule ${path(ctx)} deleted`);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/schedules/get/*path",
    handler: async (ctx) =>
      json(windmillSchedule(await getSchedule(ctx.services, await ctx.membership(), path(ctx)))),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/schedules/exists/*path",
    handler: async (ctx) => json(await scheduleExists(ctx.services, await ctx.membership(), path(ctx))),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/schedules/list",
    handler: async (ctx) => {
      const membership = await ctx.membership();
      const exact = ctx.url.searchParams.get("schedule_path");
      const schedules = await listSchedules(ctx.services, membership, {
        page: intParam(ctx, "page"),
        perPage: intParam(ctx, "per_page"),
        pathStart: ctx.url.searchParams.get("path_start") || null,
        scriptPath: ctx.url.searchParams.get("path") || null,
        isFlow: boolParam(ctx, "is_flow") ?? null,
      });
      return json(schedules.filter((s) => !exact || s.path === exact).map(windmillSchedule));
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/schedules/list_with_jobs",
    handler: async (ctx) => {
      const membership = await ctx.membership();
      const schedules = await listSchedules(ctx.services, membership, {
        page: intParam(ctx, "page"),
        perPage: intParam(ctx, "per_page"),
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
  },
];
