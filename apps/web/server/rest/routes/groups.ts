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
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";
import { textAnswer, workspaceName } from "./params.ts";

/** windmill-client's Group. */
const windmillGroupShape = z.object({
  name: z.string(),
  summary: z.string().optional(),
  members: z.array(z.string()),
  extra_perms: z.record(z.string(), z.boolean()),
});

function windmillGroup(group: GroupView): z.infer<typeof windmillGroupShape> {
  return { name: group.name, summary: group.summary ?? undefined, members: group.members, extra_perms: {} };
}

const usernameBody = z.object({ username: z.string() });

export const groupRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/groups/list",
    summary: "listGroups",
    tag: "group",
    response: z.array(windmillGroupShape),
    handler: async (ctx) => json((await listGroups(ctx.services, await ctx.membership())).map(windmillGroup)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/groups/listnames",
    summary: "listGroupNames",
    tag: "group",
    response: z.array(z.string()),
    handler: async (ctx) => json((await listGroups(ctx.services, await ctx.membership())).map((g) => g.name)),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/groups/create",
    summary: "createGroup",
    tag: "group",
    body: z.object({ name: z.string(), summary: z.string().nullish() }),
    response: textAnswer("Created group <name>"),
    handler: async (ctx, { body }) => {
      const group = await createGroup(ctx.services, await ctx.membership(), {
        name: body.name,
        summary: body.summary ?? null,
      });
      return text(`Created group ${group.name}`, 201);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/groups/get/:name",
    summary: "getGroup",
    tag: "group",
    params: workspaceName,
    response: windmillGroupShape,
    handler: async (ctx, { params }) =>
      json(windmillGroup(await getGroup(ctx.services, await ctx.membership(), params.name))),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/groups/update/:name",
    summary: "updateGroup",
    tag: "group",
    params: workspaceName,
    body: z.object({ summary: z.string().nullish() }),
    response: textAnswer("Updated group <name>"),
    handler: async (ctx, { params, body }) => {
      await updateGroup(ctx.services, await ctx.membership(), params.name, { summary: body.summary ?? null });
      return text(`Updated group ${params.name}`);
    },
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/groups/delete/:name",
    summary: "deleteGroup",
    tag: "group",
    params: workspaceName,
    response: textAnswer("Deleted group <name>"),
    handler: async (ctx, { params }) => {
      await deleteGroup(ctx.services, await ctx.membership(), params.name);
      return text(`Deleted group ${params.name}`);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/groups/adduser/:name",
    summary: "addUserToGroup",
    tag: "group",
    params: workspaceName,
    body: usernameBody,
    response: textAnswer("Added <username> to group <name>"),
    handler: async (ctx, { params, body }) => {
      await addGroupMember(ctx.services, await ctx.membership(), params.name, body.username);
      return text(`Added ${body.username} to group ${params.name}`);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/groups/removeuser/:name",
    summary: "removeUserToGroup",
    tag: "group",
    params: workspaceName,
    body: usernameBody,
    response: textAnswer("Removed <username> from group <name>"),
    handler: async (ctx, { params, body }) => {
      await removeGroupMember(ctx.services, await ctx.membership(), params.name, body.username);
      return text(`Removed ${body.username} from group ${params.name}`);
    },
  }),
];
