import {
  checkVariableFileFields,
  createVariable,
  deleteVariable,
  getVariable,
  getVariableValue,
  listVariables,
  updateVariable,
  variableExists,
  type VariableView,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryInt } from "../define.ts";
import type { Route } from "../router.ts";
import { callMeta, queryFlag, textAnswer, workspacePath } from "./params.ts";

/** windmill-client's ListableVariable. */
const windmillVariableShape = z.object({
  workspace_id: z.string(),
  path: z.string(),
  value: z.string().nullable().optional(),
  is_secret: z.boolean(),
  description: z.string(),
  extra_perms: z.record(z.string(), z.boolean()),
  is_oauth: z.boolean(),
  is_expired: z.boolean(),
  is_linked: z.boolean(),
  is_refreshed: z.boolean(),
  account: z.null(),
  edited_at: z.string(),
  edited_by: z.string(),
});

function windmillVariable(variable: VariableView): z.infer<typeof windmillVariableShape> {
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

const alreadyEncrypted = z.object({ already_encrypted: queryFlag.optional() });

/**
 * Windmill variable keys a repository's files carry and wmill sends as they are (account,
 * is_oauth, is_expired): checked and kept by core's checkVariableFileFields.
 */
const variableFileFields = {
  account: z.unknown().optional(),
  is_oauth: z.unknown().optional(),
  is_expired: z.unknown().optional(),
};

export const variableRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/variables/list",
    summary: "listVariable",
    tag: "variable",
    query: z.object({
      path_start: z.string().optional(),
      page: queryInt.optional(),
      per_page: queryInt.optional(),
    }),
    response: z.array(windmillVariableShape),
    handler: async (ctx, { query }) => {
      const variables = await listVariables(ctx.services, await ctx.membership(), {
        pathStart: query.path_start,
        page: query.page,
        perPage: query.per_page,
      });
      return json(variables.map(windmillVariable));
    },
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/variables/get/*path",
    summary: "getVariable",
    tag: "variable",
    params: workspacePath,
    query: z.object({ decrypt_secret: queryFlag.optional(), include_encrypted: queryFlag.optional() }),
    // windmill-client's GetVariableResponse: ListableVariable & UserDraftOverlay (no drafts here).
    response: windmillVariableShape.extend({ is_draft: z.literal(false) }),
    handler: async (ctx, { params, query }) => {
      const variable = await getVariable(ctx.services, await ctx.membership(), params.path, {
        decryptSecret: query.decrypt_secret,
        includeEncrypted: query.include_encrypted,
        ...callMeta(ctx),
      });
      return json({ ...windmillVariable(variable), is_draft: false });
    },
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/variables/get_value/*path",
    summary: "getVariableValue",
    tag: "variable",
    params: workspacePath,
    response: z.string(),
    handler: async (ctx, { params }) =>
      json(await getVariableValue(ctx.services, await ctx.membership(), params.path, callMeta(ctx))),
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/variables/exists/*path",
    summary: "existsVariable",
    tag: "variable",
    params: workspacePath,
    response: z.boolean(),
    handler: async (ctx, { params }) =>
      json(await variableExists(ctx.services, await ctx.membership(), params.path)),
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/variables/create",
    summary: "createVariable",
    tag: "variable",
    query: alreadyEncrypted,
    body: z.object({
      path: z.string(),
      value: z.string(),
      is_secret: z.boolean().nullish(),
      description: z.string().nullish(),
      ...variableFileFields,
    }),
    response: textAnswer("the path of the new variable"),
    handler: async (ctx, { query, body }) => {
      const variable = await createVariable(
        ctx.services,
        await ctx.membership(),
        {
          path: body.path,
          value: body.value,
          isSecret: body.is_secret ?? false,
          description: body.description ?? "",
          fileFields: checkVariableFileFields(body),
        },
        { alreadyEncrypted: query.already_encrypted ?? false, ...callMeta(ctx) },
      );
      return text(variable.path, 201);
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/variables/update/*path",
    summary: "updateVariable",
    tag: "variable",
    params: workspacePath,
    query: alreadyEncrypted,
    body: z.object({
      path: z.string().nullish(),
      value: z.string().nullish(),
      is_secret: z.boolean().nullish(),
      description: z.string().nullish(),
      ...variableFileFields,
    }),
    response: textAnswer("updated variable <path>"),
    handler: async (ctx, { params, query, body }) => {
      const variable = await updateVariable(
        ctx.services,
        await ctx.membership(),
        params.path,
        {
          path: body.path ?? undefined,
          value: body.value ?? undefined,
          isSecret: body.is_secret ?? undefined,
          description: body.description ?? undefined,
          fileFields: checkVariableFileFields(body) ?? undefined,
        },
        { alreadyEncrypted: query.already_encrypted ?? false, ...callMeta(ctx) },
      );
      return text(`updated variable ${variable.path}`);
    },
  }),
  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/variables/delete/*path",
    summary: "deleteVariable",
    tag: "variable",
    params: workspacePath,
    response: textAnswer("deleted variable <path>"),
    handler: async (ctx, { params }) => {
      await deleteVariable(ctx.services, await ctx.membership(), params.path, callMeta(ctx));
      return text(`deleted variable ${params.path}`);
    },
  }),
];
