import { createWorkspace, listWorkspaces } from "@millrace/core";
import { json, readJson, readObject, text } from "../../http.ts";
import type { Route } from "../router.ts";
import { optionalString, requiredString } from "./params.ts";

export const workspaceRoutes: Route[] = [
  {
    method: "POST",
    pattern: "/api/workspaces/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const workspace = await createWorkspace(ctx.services, await ctx.principal(), {
        id: requiredString(body, "id"),
        name: requiredString(body, "name"),
        username: optionalString(body, "username") ?? null,
      });
      return text(`Created workspace ${workspace.id}`, 201);
    },
  },

  {
    method: "GET",
    pattern: "/api/workspaces/list",
    handler: async (ctx) => {
      const workspaces = await listWorkspaces(ctx.services, await ctx.principal());
      return json(workspaces.map((w) => ({ id: w.id, name: w.name, owner: "", role: w.role })));
    },
  },
];
