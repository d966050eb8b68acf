import {
  addGroupMember,
  createGroup,
  deleteGroup,
  getGroup,
  listGroups,
  removeGroupMember,
  updateGroup,
} from "@millrace/core";
import type { GroupView } from "@millrace/core";
import { json, readJson, readObject, text } from "../../http.ts";
import type { Route } from "../router.ts";
import { optionalString, requiredString } from "./params.ts";

function windmillGroup(group: GroupView) {
  return { name: group.name, summary: group.summary ?? undefined, members: group.members, extra_perms: {} };
}

export const groupRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/w/:workspace/groups/list",
    handler: async (ctx) => json((await listGroups(ctx.services, await ctx.membership())).map(windmillGroup)),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/groups/listnames",
    handler: async (ctx) => json((await listGroups(ctx.services, await ctx.membership())).map((g) => g.name)),
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/groups/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const group = await createGroup(ctx.services, await ctx.membership(), {
        name: requiredString(body, "name"),
        summary: optionalString(body, "summary") ?? null,
      });
      return text(`Created group ${group.name}`, 201);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/groups/get/:name",
    handler: async (ctx) =>
      json(windmillGroup(await getGroup(ctx.services, await ctx.membership(), ctx.params.name ?? ""))),
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/groups/update/:name",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      await updateGroup(ctx.services, await ctx.membership(), ctx.params.name ?? "", {
        summary: optionalString(body, "summary") ?? null,
      });
      return text(`Updated group ${ctx.params.name}`);
    },
  },

  {
    method: "DELETE",
    pattern: "/api/w/:workspace/groups/delete/:name",
    handler: async (ctx) => {
      await deleteGroup(ctx.services, await ctx.membership(), ctx.params.name ?? "");
      return text(`Deleted group ${ctx.params.name}`);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/groups/adduser/:name",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const username = requiredString(body, "username");
      await addGroupMember(ctx.services, await ctx.membership(), ctx.params.name ?? "", username);
      return text(`Added ${username} to group ${ctx.params.name}`);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/groups/removeuser/:name",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const username = requiredString(body, "username");
      await removeGroupMember(ctx.services, await ctx.membership(), ctx.params.name ?? "", username);
      return text(`Removed ${username} from group ${ctx.params.name}`);
    },
  },
];
