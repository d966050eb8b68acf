import {
  createFolder,
  deleteFolder,
  describeGrantReport,
  getFolder,
  listFolders,
  setFolderPermission,
  updateFolder,
  windmillExtraPerms,
  type FolderView,
} from "@millrace/core";
import { AppError } from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";

/** windmill-client's Folder. */
const windmillFolderShape = z.object({
  name: z.string(),
  summary: z.string().optional(),
  owners: z.array(z.string()),
  extra_perms: z.record(z.string(), z.boolean()),
  created_by: z.string().optional(),
  edited_at: z.string(),
});

/** Windmill's Folder: `owners` and `extra_perms` (principal → may write) from our grants, as given. */
function windmillFolder(folder: FolderView): z.infer<typeof windmillFolderShape> {
  return {
    name: folder.name,
    summary: folder.summary ?? undefined,
    owners: folder.permissions.filter((p) => p.level === "owner").map((p) => p.principal),
    extra_perms: windmillExtraPerms(folder.permissions, { everyOwner: true }),
    created_by: folder.createdBy ?? undefined,
    edited_at: folder.createdAt.toISOString(),
  };
}

const principalList = z.array(z.string(), { error: "must be a list of u/<username> or g/<group>" });
const permsObject = z.record(z.string(), z.boolean(), {
  error: "must be an object of principal: true (write) or false (read)",
});
const folderName = z.object({ workspace: z.string(), name: z.string() });

/**
 * Windmill sends owners as `u/<name>` or `g/<name>`; a bare name means a user. An email-like owner
 * (Windmill repositories hold some) stays as it is: an inert key (see GrantStatus in core).
 */
function ownerPrincipal(owner: string): string {
  return owner.includes("/") || owner.includes("@") ? owner : `u/${owner}`;
}

export const folderRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/folders/list",
    summary: "listFolders",
    tag: "folder",
    response: z.array(windmillFolderShape),
    handler: async (ctx) =>
      json((await listFolders(ctx.services, await ctx.membership())).map(windmillFolder)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/folders/listnames",
    summary: "listFolderNames",
    tag: "folder",
    response: z.array(z.string()),
    handler: async (ctx) =>
      json((await listFolders(ctx.services, await ctx.membership())).map((f) => f.name)),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/folders/create",
    summary: "createFolder",
    tag: "folder",
    body: z.object({
      name: z.string(),
      summary: z.string().nullish(),
      owners: principalList.nullish(),
      extra_perms: permsObject.nullish(),
    }),
    response: { contentType: "text/plain", description: "Created folder <name>" },
    handler: async (ctx, { body }) => {
      const folder = await createFolder(ctx.services, await ctx.membership(), {
        name: body.name,
        summary: body.summary ?? null,
        owners: body.owners?.map(ownerPrincipal),
        extraPerms: body.extra_perms ?? undefined,
      });
      // Grants to users or groups this workspace does not have are kept (see GrantStatus) and named.
      const note = describeGrantReport(folder.report);
      return text(`Created folder ${folder.name}${note ? ` (${note})` : ""}`, 201);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/folders/get/:name",
    summary: "getFolder",
    tag: "folder",
    params: folderName,
    response: windmillFolderShape,
    handler: async (ctx, { params }) =>
      json(windmillFolder(await getFolder(ctx.services, await ctx.membership(), params.name))),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/folders/exists/:name",
    summary: "existsFolder",
    tag: "folder",
    params: folderName,
    response: z.boolean(),
    handler: async (ctx, { params }) => {
      // Membership first: a non-member gets 404, a member "false" for a folder they cannot see.
      const membership = await ctx.membership();
      try {
        await getFolder(ctx.services, membership, params.name);
        return json(true);
      } catch (error) {
        if (error instanceof AppError && error.code === "NOT_FOUND") return json(false);
        throw error;
      }
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/folders/update/:name",
    summary: "updateFolder",
    tag: "folder",
    params: folderName,
    body: z.object({
      summary: z.string().nullish(),
      owners: principalList.nullish(),
      extra_perms: permsObject.nullish(),
    }),
    response: { contentType: "text/plain", description: "Updated folder <name>" },
    handler: async (ctx, { params, body }) => {
      const folder = await updateFolder(ctx.services, await ctx.membership(), params.name, {
        // Absent leaves the summary as it is; null clears it.
        summary: body.summary === undefined ? undefined : (body.summary ?? null),
        owners: body.owners?.map(ownerPrincipal),
        extraPerms: body.extra_perms ?? undefined,
      });
      const note = describeGrantReport(folder.report);
      return text(`Updated folder ${params.name}${note ? ` (${note})` : ""}`);
    },
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/folders/delete/:name",
    summary: "deleteFolder",
    tag: "folder",
    params: folderName,
    response: { contentType: "text/plain", description: "Deleted folder <name>" },
    handler: async (ctx, { params }) => {
      await deleteFolder(ctx.services, await ctx.membership(), params.name);
      return text(`Deleted folder ${params.name}`);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/folders/addowner/:name",
    summary: "addOwnerToFolder",
    tag: "folder",
    params: folderName,
    body: z.object({ owner: z.string() }),
    response: { contentType: "text/plain", description: "Added <owner> as owner of <name>" },
    handler: async (ctx, { params, body }) => {
      const owner = ownerPrincipal(body.owner);
      await setFolderPermission(ctx.services, await ctx.membership(), params.name, owner, "owner");
      return text(`Added ${owner} as owner of ${params.name}`);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/folders/removeowner/:name",
    summary: "removeOwnerToFolder",
    tag: "folder",
    params: folderName,
    body: z.object({ owner: z.string(), write: z.boolean().nullish() }),
    response: { contentType: "text/plain", description: "Removed <owner> from the owners of <name>" },
    handler: async (ctx, { params, body }) => {
      const owner = ownerPrincipal(body.owner);
      // Windmill's `write`: keep the former owner as a writer instead of removing them.
      const level = body.write === true ? "writer" : null;
      await setFolderPermission(ctx.services, await ctx.membership(), params.name, owner, level);
      return text(`Removed ${owner} from the owners of ${params.name}`);
    },
  }),
];
