import {
  archiveScriptByPath,
  deleteScriptByPath,
  deployScript,
  getScriptByHash,
  getScriptByPath,
  listScripts,
} from "@millrace/core";
import { json, readJson, readObject, text } from "../../http.ts";
import type { Route } from "../router.ts";
import { windmillScript } from "../shapes.ts";
import { intParam, optionalNumber, optionalString, requiredString } from "./params.ts";

export const scriptRoutes: Route[] = [
  {
    method: "POST",
    pattern: "/api/w/:workspace/scripts/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const script = await deployScript(ctx.services, await ctx.membership(), {
        path: requiredString(body, "path"),
        content: requiredString(body, "content"),
        language: requiredString(body, "language"),
        summary: optionalString(body, "summary") ?? "",
        description: optionalString(body, "description") ?? "",
        parentHash: optionalString(body, "parent_hash") ?? null,
        tag: optionalString(body, "tag") ?? null,
        timeout: optionalNumber(body, "timeout") ?? null,
        priority: optionalNumber(body, "priority") ?? null,
        concurrent_limit: optionalNumber(body, "concurrent_limit") ?? null,
        concurrency_time_window_s: optionalNumber(body, "concurrency_time_window_s") ?? null,
        concurrency_key: optionalString(body, "concurrency_key") ?? null,
        retry: body.retry ?? null,
        memory_limit_mb: optionalNumber(body, "memory_limit_mb") ?? null,
        schema: body.schema,
        lock: optionalString(body, "lock") ?? null,
      });
      return text(script.hash, 201);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/scripts/get/p/*path",
    handler: async (ctx) =>
      json(
        windmillScript(await getScriptByPath(ctx.services, await ctx.membership(), ctx.params.path ?? "")),
      ),
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/scripts/archive/p/*path",
    handler: async (ctx) => {
      const path = ctx.params.path ?? "";
      await archiveScriptByPath(ctx.services, await ctx.membership(), path);
      return text(`Script ${path} archived`);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/scripts/delete/p/*path",
    handler: async (ctx) => {
      const path = ctx.params.path ?? "";
      await deleteScriptByPath(ctx.services, await ctx.membership(), path);
      return text(`Script ${path} deleted`);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/scripts/get/h/:hash",
    handler: async (ctx) =>
      json(
        windmillScript(await getScriptByHash(ctx.services, await ctx.membership(), ctx.params.hash ?? "")),
      ),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/scripts/list",
    handler: async (ctx) => {
      const scripts = await listScripts(ctx.services, await ctx.membership(), {
        page: intParam(ctx, "page"),
        perPage: intParam(ctx, "per_page"),
        pathStart: ctx.url.searchParams.get("path_start") ?? undefined,
      });
      return json(scripts.map((script) => windmillScript(script, { withContent: false })));
    },
  },
];
