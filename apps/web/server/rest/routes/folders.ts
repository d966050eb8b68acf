import {
  createFolder,
  deleteFolder,
  getFolder,
  invalidInput,
  listFolders,
  setFolderPermission,
  updateFolder,
  type FolderView,
} from "@millrace/core";
import { AppError } from "@millrace/core";
import { json, readJson, readObject, text } from "../../http.ts";
import type { Route } from "../router.ts";
import { optionalString, requiredString } from "./params.ts";

/** Windmill's Folder: `owners` and `extra_perms` (principal → may write) from our grants. */
function windmillFolder(folder: FolderView) {
  return {
    name: folder.name,
    summary: folder.summary ?? undefined,
    owners: folder.permissions.filter((p) => p.level === "owner").map((p) => p.principal),
    extra_perms: Object.fromEntries(folder.permissions.map((p) => [p.principal, p.level !== "viewer"])),
    created_by: folder.createdBy ?? undefined,
    edited_at: folder.createdAt.toISOString(),
  };
}

function stringList(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw invalidInput(field, "must be a list of u/<username> or g/<group>");
  }
  return value as string[];
}

function permsObject(value: unknown): Record<string, boolean> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw invalidInput("extra_perms", "must be an object of principal: true (write) or false (read)");
  }
  return value as Record<string, boolean>;
}

/** Windmill sends owners as `u/<name>` or `g/<name>`; a bare name means a user. */
function ownerPrincipal(owner: string): string {
  return owner.includes("/") ? owner : `u/${owner}`;
}

export const folderRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/w/:workspace/folders/list",
    handler: async (ctx) =>
      json((await listFolders(ctx.services, await ctx.membership())).map(windmillFolder)),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/folders/listnames",
    handler: async (ctx) =>
      json((await listFolders(ctx.services, await ctx.membership())).map((f) => f.name)),
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/folders/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const folder = await createFolder(ctx.services, await ctx.membership(), {
        name: requiredString(body, "name"),
        summary: optionalString(body, "summary") ?? null,
        owners: stringList(body.owners, "owners")?.map(ownerPrincipal),
        extraPerms: permsObject(body.extra_perms),
      });
      return text(`Created folder ${folder.name}`, 201);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/folders/get/:name",
    handler: async (ctx) =>
      json(windmillFolder(await getFolder(ctx.services, await ctx.membership(), ctx.params.name ?? ""))),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/folders/exists/:name",
    handler: async (ctx) => {
      // Membership first: a non-member gets 404, a member "false" for a folder they cannot see.
      const membership = await ctx.membership();
      try {
        await getFolder(ctx.services, membership, ctx.params.name ?? "");
        return json(true);
      } catch (error) {
        if (error instanceof AppError && error.code === "NOT_FOUND") return json(false);
        throw error;
      }
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/folders/update/:name",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      await updateFolder(ctx.services, await ctx.membership(), ctx.params.name ?? "", {
        summary: "summary" in body ? (optionalString(body, "summary") ?? null) : undefined,
        owners: stringList(body.owners, "owners")?.map(ownerPrincipal),
        extraPerms: permsObject(body.extra_perms),
      });
      return text(`Updated folder ${ctx.params.name}`);
    },
  },

  {
    method: "DELETE",
    pattern: "/api/w/:workspace/folders/delete/:name",
    handler: async (ctx) => {
      await deleteFolder(ctx.services, await ctx.membership(), ctx.params.name ?? "");
      return text(`Deleted folder ${ctx.params.name}`);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/folders/addowner/:name",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const owner = ownerPrincipal(requiredString(body, "owner"));
      await setFolderPermission(ctx.services, await ctx.membership(), ctx.params.name ?? "", owner, "owner");
      return text(`Added ${owner} as owner of ${ctx.params.name}`);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/folders/removeowner/:name",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const owner = ownerPrincipal(requiredString(body, "owner"));
      // Windmill's `write`: keep the former owner as a writer instead of removing them.
      const level = body.write === true ? "writer" : null;
      await setFolderPermission(ctx.services, await ctx.membership(), ctx.params.name ?? "", owner, level);
      return text(`Removed ${owner} from the owners of ${ctx.params.name}`);
    },
  },
];
