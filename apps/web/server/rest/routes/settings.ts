import {
  getGlobalSetting,
  listGlobalSettings,
  listWorkerGroupConfigs,
  setGlobalSetting,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";
import { textAnswer } from "./params.ts";

const settingKey = z.object({ key: z.string() });

export const settingRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/settings/global/:key",
    summary: "getGlobal",
    tag: "setting",
    params: settingKey,
    response: z.unknown(),
    handler: async (ctx, { params }) =>
      json(await getGlobalSetting(ctx.services, await ctx.principal(), params.key)),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/settings/global/:key",
    summary: "setGlobal",
    tag: "setting",
    params: settingKey,
    // A misspelt body must not silently remove the setting: removal is an explicit null.
    body: z.object({ value: z.unknown().optional() }).refine((body) => "value" in body, {
      path: ["value"],
      message: "is required (send null to remove the setting)",
    }),
    response: textAnswer("Set <key> / Removed <key>"),
    handler: async (ctx, { params, body }) => {
      await setGlobalSetting(ctx.services, await ctx.principal(), params.key, body.value);
      return text(body.value === null ? `Removed ${params.key}` : `Set ${params.key}`);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/settings/list_global",
    summary: "listGlobalSettings",
    tag: "setting",
    response: z.array(z.object({ name: z.string(), value: z.unknown() })),
    handler: async (ctx) => json(await listGlobalSettings(ctx.services, await ctx.principal())),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/settings/instance_config",
    summary: "getInstanceConfig",
    tag: "setting",
    // windmill-client's InstanceConfig: the settings and the worker group configs, by name.
    response: z.object({
      global_settings: z.record(z.string(), z.unknown()),
      worker_configs: z.record(z.string(), z.record(z.string(), z.unknown())),
    }),
    handler: async (ctx) => {
      const principal = await ctx.principal();
      const [settings, groups] = await Promise.all([
        listGlobalSettings(ctx.services, principal),
        listWorkerGroupConfigs(ctx.services, principal),
      ]);
      return json({
        global_settings: Object.fromEntries(settings.map((s) => [s.name, s.value])),
        worker_configs: Object.fromEntries(groups.map((g) => [g.name, g.config])),
      });
    },
  }),
];
