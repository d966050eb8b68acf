import {
  createVariable,
  deleteVariable,
  getVariable,
  getVariableValue,
  invalidInput,
  listVariables,
  updateVariable,
  variableExists,
  type VariableView,
} from "@millrace/core";
import { requestIp } from "../../auth/principal.ts";
import { json, readJson, readObject, text } from "../../http.ts";
import type { Route, RestContext } from "../router.ts";
import { intParam, optionalString, requiredString } from "./params.ts";

/** Windmill's ListableVariable. */
function windmillVariable(variable: VariableView) {
  return {
    workspace_id: variable.workspaceId,
    path: variable.path,
    value: variable.value,
    is_secret: variable.isSecret,
    description: variable.description,
    extra_perms: {},
    is_oauth: false,
    is_expired: false,
    is_linked: false,
    is_refreshed: false,
    account: null,
    edited_at: variable.updatedAt.toISOString(),
    edited_by: variable.createdBy,
  };
}

export function boolParam(ctx: RestContext, name: string): boolean | undefined {
  const raw = ctx.url.searchParams.get(name);
  if (raw === null || raw === "") return undefined;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw invalidInput(name, `must be true or false, got "${raw}"`);
}

export function optionalBoolean(body: Record<string, unknown>, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw invalidInput(field, "must be true or false");
  return value;
}

export function callMeta(ctx: RestContext) {
  return { ip: requestIp(ctx.request.headers) };
}

const path = (ctx: RestContext) => ctx.params.path ?? "";

export const variableRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/w/:workspace/variables/list",
    handler: async (ctx) => {
      const variables = await listVariables(ctx.services, await ctx.membership(), {
        pathStart: ctx.url.searchParams.get("path_start") ?? undefined,
        page: intParam(ctx, "page"),
        perPage: intParam(ctx, "per_page"),
      });
      return json(variables.map(windmillVariable));
    },
  },
  {
    method: "GET",
    pattern: "/api/w/:workspace/variables/get/*path",
    handler: async (ctx) => {
      const variable = await getVariable(ctx.services, await ctx.membership(), path(ctx), {
        decryptSecret: boolParam(ctx, "decrypt_secret"),
        includeEncrypted: boolParam(ctx, "include_encrypted"),
        ...callMeta(ctx),
      });
      return json(windmillVariable(variable));
    },
  },
  {
    method: "GET",
    pattern: "/api/w/:workspace/variables/get_value/*path",
    handler: async (ctx) =>
      json(await getVariableValue(ctx.services, await ctx.membership(), path(ctx), callMeta(ctx))),
  },
  {
    method: "GET",
    pattern: "/api/w/:workspace/variables/exists/*path",
    handler: async (ctx) => json(await variableExists(ctx.services, await ctx.membership(), path(ctx))),
  },
  {
    method: "POST",
    pattern: "/api/w/:workspace/variables/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const variable = await createVariable(
        ctx.services,
        await ctx.membership(),
        {
          path: requiredString(body, "path"),
          value: requiredString(body, "value"),
          isSecret: optionalBoolean(body, "is_secret") ?? false,
          description: optionalString(body, "description") ?? "",
        },
        { alreadyEncrypted: boolParam(ctx, "already_encrypted") ?? false, ...callMeta(ctx) },
      );
      return text(variable.path, 201);
    },
  },
  {
    method: "POST",
    pattern: "/api/w/:workspace/variables/update/*path",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const variable = await updateVariable(
        ctx.services,
        await ctx.membership(),
        path(ctx),
        {
          path: optionalString(body, "path"),
          value: optionalString(body, "value"),
          isSecret: optionalBoolean(body, "is_secret"),
          description: optionalString(body, "description"),
        },
        { alreadyEncrypted: boolParam(ctx, "already_encrypted") ?? false, ...callMeta(ctx) },
      );
      return text(`updated variable ${variable.path}`);
    },
  },
  {
    method: "DELETE",
    pattern: "/api/w/:workspace/variables/delete/*path",
    handler: async (ctx) => {
      await deleteVariable(ctx.services, await ctx.membership(), path(ctx), callMeta(ctx));
      return text(`deleted variable ${path(ctx)}`);
    },
  },
];
