import {
  createWorkspace,
  listWorkspaces,
  requireSuperadmin,
  workspaceExists,
  type WorkspaceSummary,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryInt } from "../define.ts";
import type { Route } from "../router.ts";

/** windmill-client's Workspace. */
const windmillWorkspaceShape = z.object({
  id: z.string(),
  name: z.string(),
  owner: z.string(),
  role: z.string().optional(),
  color: z.string().optional(),
});

function windmillWorkspace(workspace: WorkspaceSummary): z.infer<typeof windmillWorkspaceShape> {
  return {
    id: workspace.id,
    name: workspace.name,
    owner: "",
    role: workspace.role,
    ...(workspace.color ? { color: workspace.color } : {}),
  };
}

/** windmill-client's UserWorkspaceList (what `workspaces/users` answers). */
const userWorkspaceListShape = z.object({
  email: z.string(),
  workspaces: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      username: z.string(),
      color: z.string(),
      is_dev_workspace: z.boolean(),
      disabled: z.boolean(),
      operator_settings: z.null().optional(),
      parent_workspace_id: z.string().nullable(),
    }),
  ),
});

export const workspaceRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/workspaces/create",
    summary: "createWorkspace",
    tag: "workspace",
    body: z.object({
      id: z.string(),
      name: z.string(),
      username: z.string().nullish(),
      color: z.string().nullish(),
    }),
    response: { contentType: "text/plain", description: "Created workspace <id>" },
    handler: async (ctx, { body }) => {
      const workspace = await createWorkspace(ctx.services, await ctx.principal(), {
        id: body.id,
        name: body.name,
        username: body.username ?? null,
      });
      return text(`Created workspace ${workspace.id}`, 201);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/workspaces/list",
    summary: "listWorkspaces",
    tag: "workspace",
    response: z.array(windmillWorkspaceShape),
    handler: async (ctx) =>
      json((await listWorkspaces(ctx.services, await ctx.principal())).map(windmillWorkspace)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/workspaces/list_as_superadmin",
    summary: "listWorkspacesAsSuperAdmin",
    tag: "workspace",
    query: z.object({ page: queryInt.optional(), per_page: queryInt.optional() }),
    response: z.array(windmillWorkspaceShape),
    handler: async (ctx, { query }) => {
      const principal = await ctx.principal();
      requireSuperadmin(principal, "list every workspace");
      const perPage = Math.min(Math.max(query.per_page ?? 100, 1), 1000);
      const page = Math.max(query.page ?? 1, 1);
      const workspaces = await listWorkspaces(ctx.services, principal);
      return json(workspaces.slice((page - 1) * perPage, page * perPage).map(windmillWorkspace));
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/workspaces/users",
    summary: "listUserWorkspaces",
    tag: "workspace",
    response: userWorkspaceListShape,
    handler: async (ctx) => {
      const principal = await ctx.principal();
      const workspaces = await listWorkspaces(ctx.services, principal);
      return json({
        email: principal.email,
        workspaces: workspaces.map((workspace) => ({
          id: workspace.id,
          name: workspace.name,
          // Millrace usernames are instance-wide: the same in every workspace.
          username: principal.username,
          color: workspace.color ?? "",
          is_dev_workspace: false,
          disabled: false,
          // `wmill workspace merge` finds a fork's parent here.
          parent_workspace_id: workspace.parentWorkspaceId,
        })),
      });
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/workspaces/exists",
    summary: "existsWorkspace",
    tag: "workspace",
    body: z.object({ id: z.string() }),
    response: z.boolean(),
    handler: async (ctx, { body }) =>
      json(await workspaceExists(ctx.services, await ctx.principal(), body.id)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/workspaces/get_workspace_name",
    summary: "getWorkspaceName",
    tag: "workspace",
    response: { contentType: "text/plain", description: "the workspace's name" },
    handler: async (ctx) => text((await ctx.membership()).workspace.name),
  }),
];
