import {
  createResource,
  createResourceType,
  deleteResource,
  deleteResourceType,
  getResource,
  getResourceType,
  getResourceValueInterpolated,
  invalidInput,
  listResources,
  listResourceTypes,
  resourceExists,
  resourceTypeExists,
  updateResource,
  updateResourceType,
  type ResourceTypeView,
  type ResourceView,
} from "@millrace/core";
import { json, readJson, readObject, text } from "../../http.ts";
import type { RestContext, Route } from "../router.ts";
import { intParam, optionalString, requiredString } from "./params.ts";
import { boolParam, callMeta } from "./variables.ts";

/** Windmill's Resource / ListableResource (lists carry no value). */
function windmillResource(resource: Omit<ResourceView, "value"> & { value?: unknown }) {
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

function windmillResourceType(type: ResourceTypeView) {
  return {
    workspace_id: type.workspaceId,
    name: type.name,
    schema: type.schema ?? {},
    description: type.description,
    ...(type.createdAt ? { edited_at: type.createdAt.toISOString() } : {}),
  };
}

const path = (ctx: RestContext) => ctx.params.path ?? "";

export const resourceRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/w/:workspace/resources/list",
    handler: async (ctx) => {
      const query = ctx.url.searchParams;
      const resources = await listResources(ctx.services, await ctx.membership(), {
        resourceType: query.get("resource_type") ?? undefined,
        resourceTypeExclude: query.get("resource_type_exclude") ?? undefined,
        pathStart: query.get("path_start") ?? undefined,
        page: intParam(ctx, "page"),
        perPage: intParam(ctx, "per_page"),
      });
      return json(resources.map(windmillResource));
    },
  },
  {
    method: "GET",
    pattern: "/api/w/:workspace/resources/get/*path",
    handler: async (ctx) =>
      json(windmillResource(await getResource(ctx.services, await ctx.membership(), path(ctx)))),
  },
  {
    method: "GET",
    pattern: "/api/w/:workspace/resources/get_value/*path",
    handler: async (ctx) => json((await getResource(ctx.services, await ctx.membership(), path(ctx))).value),
  },
  {
    method: "GET",
    pattern: "/api/w/:workspace/resources/get_value_interpolated/*path",
    handler: async (ctx) =>
      json(
        await getResourceValueInterpolated(ctx.services, await ctx.membership(), path(ctx), callMeta(ctx)),
      ),
  },
  {
    method: "GET",
    pattern: "/api/w/:workspace/resources/exists/*path",
    handler: async (ctx) => json(await resourceExists(ctx.services, await ctx.membership(), path(ctx))),
  },
  {
    method: "POST",
    pattern: "/api/w/:workspace/resources/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const resource = await createResource(
        ctx.services,
        await ctx.membership(),
        {
          path: requiredString(body, "path"),
          value: body.value,
          resourceType: requiredString(body, "resource_type"),
          description: optionalString(body, "description") ?? "",
        },
        { updateIfExists: boolParam(ctx, "update_if_exists") ?? false, ...callMeta(ctx) },
      );
      return text(resource.path, 201);
    },
  },
  {
    method: "POST",
    pattern: "/api/w/:workspace/resources/update/*path",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const resource = await updateResource(
        ctx.services,
        await ctx.membership(),
        path(ctx),
        {
          path: optionalString(body, "path"),
          value: body.value,
          resourceType: optionalString(body, "resource_type"),
          description: optionalString(body, "description"),
        },
        callMeta(ctx),
      );
      return text(`updated resource ${resource.path}`);
    },
  },
  {
    method: "POST",
    pattern: "/api/w/:workspace/resources/update_value/*path",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      // `{"value": null}` sets null; only a missing `value` is refused.
      if (!("value" in body)) throw invalidInput("value", "is required");
      await updateResource(
        ctx.services,
        await ctx.membership(),
        path(ctx),
        { value: body.value },
        callMeta(ctx),
      );
      return text(`updated resource ${path(ctx)}`);
    },
  },
  {
    method: "DELETE",
    pattern: "/api/w/:workspace/resources/delete/*path",
    handler: async (ctx) => {
      await deleteResource(ctx.services, await ctx.membership(), path(ctx), callMeta(ctx));
      return text(`deleted resource ${path(ctx)}`);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/resources/type/list",
    handler: async (ctx) =>
      json((await listResourceTypes(ctx.services, await ctx.membership())).map(windmillResourceType)),
  },
  {
    method: "GET",
    pattern: "/api/w/:workspace/resources/type/listnames",
    handler: async (ctx) =>
      json((await listResourceTypes(ctx.services, await ctx.membership())).map((type) => type.name)),
  },
  {
    method: "GET",
    pattern: "/api/w/:workspace/resources/type/get/:name",
    handler: async (ctx) =>
      json(
        windmillResourceType(
          await getResourceType(ctx.services, await ctx.membership(), ctx.params.name ?? ""),
        ),
      ),
  },
  {
    method: "GET",
    pattern: "/api/w/:workspace/resources/type/exists/:name",
    handler: async (ctx) =>
      json(await resourceTypeExists(ctx.services, await ctx.membership(), ctx.params.name ?? "")),
  },
  {
    method: "POST",
    pattern: "/api/w/:workspace/resources/type/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const type = await createResourceType(
        ctx.services,
        await ctx.membership(),
        {
          name: requiredString(body, "name"),
          schema: body.schema,
          description: optionalString(body, "description") ?? "",
        },
        callMeta(ctx),
      );
      return text(type.name, 201);
    },
  },
  {
    method: "POST",
    pattern: "/api/w/:workspace/resources/type/update/:name",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const type = await updateResourceType(
        ctx.services,
        await ctx.membership(),
        ctx.params.name ?? "",
        { schema: body.schema, description: optionalString(body, "description") },
        callMeta(ctx),
      );
      return text(`updated resource type ${type.name}`);
    },
  },
  {
    method: "DELETE",
    pattern: "/api/w/:workspace/resources/type/delete/:name",
    handler: async (ctx) => {
      await deleteResourceType(ctx.services, await ctx.membership(), ctx.params.name ?? "", callMeta(ctx));
      return text(`deleted resource type ${ctx.params.name ?? ""}`);
    },
  },
];
