import { getGlobalSetting, setGlobalSetting } from "@millrace/core";
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
];
