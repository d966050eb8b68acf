import {
  createResource,
  createResourceType,
  deleteResource,
  deleteResourceType,
  getResource,
  getResourceType,
  getResourceValueInterpolated,
  listResources,
  listResourceTypes,
  resourceExists,
  resourceTypeExists,
  updateResource,
  updateResourceType,
  type ResourceTypeView,
  type ResourceView,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryInt } from "../define.ts";
import type { Route } from "../router.ts";
import { callMeta, queryFlag, textAnswer, workspaceName, workspacePath } from "./params.ts";

/** windmill-client's ListableResource (lists carry no value) and Resource. */
const windmillResourceShape = z.object({
  workspace_id: z.string(),
  path: z.string(),
  description: z.string().nullable(),
  resource_type: z.string(),
  value: z.unknown().optional(),
  is_oauth: z.boolean(),
  is_linked: z.boolean(),
  is_refreshed: z.boolean(),
  extra_perms: z.record(z.string(), z.boolean()),
  created_by: z.string(),
  edited_at: z.string(),
});

/** windmill-client's ResourceType. */
const windmillResourceTypeShape = z.object({
  workspace_id: z.string().nullable(),
  name: z.string(),
  schema: z.unknown(),
  description: z.string(),
  edited_at: z.string().optional(),
});

/** Windmill's Resource / ListableResource (lists carry no value). */
function windmillResource(
  resource: Omit<ResourceView, "value"> & { value?: unknown },
): z.infer<typeof windmillResourceShape> {
  return {
    workspace_id: resource.workspaceId,
    path: resource.path,
    description: resource.description,
    resource_type: resource.resourceType,
    ...("value" in resource ? { value: resource.value } : {}),
    is_oauth: false,
    is_linked: false,
    is_refreshed: false,
    extra_perms: {},
    created_by: resource.createdBy,
    edited_at: resource.updatedAt.toISOString(),
  };
}

function windmillResourceType(type: ResourceTypeView): z.infer<typeof windmillResourceTypeShape> {
  return {
    workspace_id: type.workspaceId,
    name: type.name,
    schema: type.schema ?? {},
    description: type.description,
    ...(type.createdAt ? { edited_at: type.createdAt.toISOString() } : {}),
  };
}

const resourceBody = {
  path: z.string(),
  value: z.unknown(),
  description: z.string().nullish(),
  resource_type: z.string(),
};

export const resourceRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/resources/list",
    summary: "listResource",
    tag: "resource",
    query: z.object({
      resource_type: z.string().optional(),
      resource_type_exclude: z.string().optional(),
      path_start: z.string().optional(),
      page: queryInt.optional(),
      per_page: queryInt.optional(),
    }),
    response: z.array(windmillResourceShape.omit({ value: true })),
    handler: async (ctx, { query }) => {
      const resources = await listResources(ctx.services, await ctx.membership(), {
        resourceType: query.resource_type,
        resourceTypeExclude: query.resource_type_exclude,
        pathStart: query.path_start,
        page: query.page,
        perPage: query.per_page,
      });
      return json(resources.map(windmillResource));
    },
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/resources/get/*path",
    summary: "getResource",
    tag: "resource",
    params: workspacePath,
    // windmill-client's GetResourceResponse: ListableResource & UserDraftOverlay (no drafts here).
    response: windmillResourceShape.extend({ is_draft: z.literal(false) }),
    handler: async (ctx, { params }) =>
      json({
        ...windmillResource(await getResource(ctx.services, await ctx.membership(), params.path)),
        is_draft: false,
      }),
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/resources/get_value/*path",
    summary: "getResourceValue",
    tag: "resource",
    params: workspacePath,
    response: z.unknown(),
    handler: async (ctx, { params }) =>
      json((await getResource(ctx.services, await ctx.membership(), params.path)).value),
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/resources/get_value_interpolated/*path",
    summary: "getResourceValueInterpolated",
    tag: "resource",
    params: workspacePath,
    response: z.unknown(),
    handler: async (ctx, { params }) =>
      json(
        await getResourceValueInterpolated(ctx.services, await ctx.membership(), params.path, callMeta(ctx)),
      ),
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/resources/exists/*path",
    summary: "existsResource",
    tag: "resource",
    params: workspacePath,
    response: z.boolean(),
    handler: async (ctx, { params }) =>
      json(await resourceExists(ctx.services, await ctx.membership(), params.path)),
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/resources/create",
    summary: "createResource",
    tag: "resource",
    query: z.object({ update_if_exists: queryFlag.optional() }),
    body: z.object(resourceBody),
    response: textAnswer("the path of the new resource"),
    handler: async (ctx, { query, body }) => {
      const resource = await createResource(
        ctx.services,
        await ctx.membership(),
        {
          path: body.path,
          value: body.value,
          resourceType: body.resource_type,
          description: body.description ?? null,
        },
        { updateIfExists: query.update_if_exists ?? false, ...callMeta(ctx) },
      );
      return text(resource.path, 201);
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/resources/update/*path",
    summary: "updateResource",
    tag: "resource",
    params: workspacePath,
    body: z.object({
      path: z.string().nullish(),
      value: z.unknown().optional(),
      description: z.string().nullish(),
      resource_type: z.string().nullish(),
    }),
    response: textAnswer("updated resource <path>"),
    handler: async (ctx, { params, body }) => {
      const resource = await updateResource(
        ctx.services,
        await ctx.membership(),
        params.path,
        {
          path: body.path ?? undefined,
          value: body.value,
          resourceType: body.resource_type ?? undefined,
          description: body.description ?? undefined,
        },
        callMeta(ctx),
      );
      return text(`updated resource ${resource.path}`);
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/resources/update_value/*path",
    summary: "updateResourceValue",
    tag: "resource",
    params: workspacePath,
    // `{"value": null}` sets null; only a missing `value` is refused.
    body: z.object({ value: z.unknown() }),
    response: textAnswer("updated resource <path>"),
    handler: async (ctx, { params, body }) => {
      await updateResource(
        ctx.services,
        await ctx.membership(),
        params.path,
        { value: body.value },
        callMeta(ctx),
      );
      return text(`updated resource ${params.path}`);
    },
  }),
  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/resources/delete/*path",
    summary: "deleteResource",
    tag: "resource",
    params: workspacePath,
    response: textAnswer("deleted resource <path>"),
    handler: async (ctx, { params }) => {
      await deleteResource(ctx.services, await ctx.membership(), params.path, callMeta(ctx));
      return text(`deleted resource ${params.path}`);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/resources/type/list",
    summary: "listResourceType",
    tag: "resource_type",
    response: z.array(windmillResourceTypeShape),
    handler: async (ctx) =>
      json((await listResourceTypes(ctx.services, await ctx.membership())).map(windmillResourceType)),
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/resources/type/listnames",
    summary: "listResourceTypeNames",
    tag: "resource_type",
    response: z.array(z.string()),
    handler: async (ctx) =>
      json((await listResourceTypes(ctx.services, await ctx.membership())).map((type) => type.name)),
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/resources/type/get/:name",
    summary: "getResourceType",
    tag: "resource_type",
    params: workspaceName,
    response: windmillResourceTypeShape,
    handler: async (ctx, { params }) =>
      json(windmillResourceType(await getResourceType(ctx.services, await ctx.membership(), params.name))),
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/resources/type/exists/:name",
    summary: "existsResourceType",
    tag: "resource_type",
    params: workspaceName,
    response: z.boolean(),
    handler: async (ctx, { params }) =>
      json(await resourceTypeExists(ctx.services, await ctx.membership(), params.name)),
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/resources/type/create",
    summary: "createResourceType",
    tag: "resource_type",
    body: z.object({ name: z.string(), schema: z.unknown().optional(), description: z.string().nullish() }),
    response: textAnswer("the name of the new resource type"),
    handler: async (ctx, { body }) => {
      const type = await createResourceType(
        ctx.services,
        await ctx.membership(),
        { name: body.name, schema: body.schema, description: body.description ?? "" },
        callMeta(ctx),
      );
      return text(type.name, 201);
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/resources/type/update/:name",
    summary: "updateResourceType",
    tag: "resource_type",
    params: workspaceName,
    body: z.object({ schema: z.unknown().optional(), description: z.string().nullish() }),
    response: textAnswer("updated resource type <name>"),
    handler: async (ctx, { params, body }) => {
      const type = await updateResourceType(
        ctx.services,
        await ctx.membership(),
        params.name,
        { schema: body.schema, description: body.description ?? undefined },
        callMeta(ctx),
      );
      return text(`updated resource type ${type.name}`);
    },
  }),
  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/resources/type/delete/:name",
    summary: "deleteResourceType",
    tag: "resource_type",
    params: workspaceName,
    response: textAnswer("deleted resource type <name>"),
    handler: async (ctx, { params }) => {
      await deleteResourceType(ctx.services, await ctx.membership(), params.name, callMeta(ctx));
      return text(`deleted resource type ${params.name}`);
    },
  }),
];
