import { getGlobalSetting, invalidInput, setGlobalSetting } from "@millrace/core";
import { json, readJson, readObject, text } from "../../http.ts";
import type { Route } from "../router.ts";

export const settingRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/settings/global/:key",
    handler: async (ctx) =>
      json(await getGlobalSetting(ctx.services, await ctx.principal(), ctx.params.key ?? "")),
  },

  {
    method: "POST",
    pattern: "/api/settings/global/:key",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      // A misspelt body must not silently remove the setting: removal is an explicit null.
      if (!("value" in body)) throw invalidInput("value", "is required (send null to remove the setting)");
      const key = ctx.params.key ?? "";
      await setGlobalSetting(ctx.services, await ctx.principal(), key, body.value);
      return text(body.value === null ? `Removed ${key}` : `Set ${key}`);
    },
  },
];
