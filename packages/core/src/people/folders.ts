import { isUniqueViolation, type PermissionLevel } from "@millrace/db";
import { folderLevel, folderLevels, likePrefix } from "../access.ts";
import { recordAudit } from "../audit/index.ts";
import { refuseJobCredential } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../workspaces.ts";
import { ALL_GROUP } from "./groups.ts";

export const FOLDER_NAME = /^[A-Za-z0-9_-]{1,50}$/;
export const LEVELS = ["owner", "writer", "viewer"] as const satisfies readonly PermissionLevel[];

export interface FolderPermissionView {
  /** `u/<username>` or `g/<group>`. */
  principal: string;
  level: PermissionLevel;
}

export interface FolderView {
  name: string;
  summary: string | null;
  createdBy: string | null;
  createdAt: Date;
  permissions: FolderPermissionView[];
  /** The caller's own level (admins: owner). */
  myLevel: PermissionLevel;
}

interface FolderRow {
  name: string;
  summary: string | null;
  created_by: string | null;
  created_at: Date;
}

async function folderRows(ctx: CoreContext, workspaceId: string, name?: string): Promise<FolderRow[]> {
  const { rows } = await ctx.pool.query<FolderRow>(
    `SELECT f.name, f.summary, u.username AS created_by, f.created_at
       FROM folder f LEFT JOIN "user" u ON u.id = f.created_by
      WHERE f.workspace_id = $1 AND ($2::text IS NULL OR f.name = $2)
      ORDER BY f.name`,
    [workspaceId, name ?? null],
  );
  return rows;
}

async function permissionsOf(ctx: CoreContext, workspaceId: string) {
  const { rows } = await ctx.pool.query<{ folder_name: string; principal: string; level: PermissionLevel }>(
    `SELECT folder_name, principal, level::text AS level FROM folder_permission
      WHERE workspace_id = $1 ORDER BY principal`,
    [workspaceId],
  );
  const byFolder = new Map<string, FolderPermissionView[]>();
  for (const row of rows) {
    byFolder.set(row.folder_name, [
      ...(byFolder.get(row.folder_name) ?? []),
      { principal: row.principal, level: row.level },
    ]);
  }
  return byFolder;
}

/** The folders the caller can see: every folder for admins, else those they hold a permission on. */
export async function listFolders(ctx: CoreContext, membership: Membership): Promise<FolderView[]> {
  requirePermission(membership, "folder.read");
  const workspaceId = membership.workspace.id;
  const admin = membership.role === "admin";
  const [rows, perms, mine] = await Promise.all([
    folderRows(ctx, workspaceId),
    permissionsOf(ctx, workspaceId),
    admin ? Promise.resolve(null) : folderLevels(ctx, membership),
  ]);
  return rows.flatMap((row) => {
    const myLevel = mine ? mine.get(row.name) : "owner";
    if (!myLevel) return [];
    return [
      {
        name: row.name,
        summary: row.summary,
        createdBy: row.created_by,
        createdAt: row.created_at,
        permissions: perms.get(row.name) ?? [],
        myLevel,
      },
    ];
  });
}

export async function getFolder(ctx: CoreContext, membership: Membership, name: string): Promise<FolderView> {
  const folder = (await listFolders(ctx, membership)).find((f) => f.name === name);
  if (!folder) throw notFound(`folder ${name}`);
  return folder;
}

/** Editing a folder (its summary or who may use it) takes ownership of it, or the admin role. */
async function requireOwner(ctx: CoreContext, membership: Membership, name: string): Promise<void> {
  requirePermission(membership, "folder.write");
  const exists = await folderRows(ctx, membership.workspace.id, name);
  const level = exists.length ? await folderLevel(ctx, membership, name) : null;
  if (!level) throw notFound(`folder ${name}`);
  if (level !== "owner")
    throw new AppError("FORBIDDEN", `only an owner of folder ${name} or an admin may change it`);
}

async function checkedPrincipal(
  ctx: CoreContext,
  workspaceId: string,
  principal: unknown,
  field: string,
): Promise<string> {
  if (typeof principal !== "string") throw invalidInput(field, "must be u/<username> or g/<group>");
  const match = /^([ug])\/([A-Za-z0-9_-]+)$/.exec(principal);
  if (!match) throw invalidInput(field, `must be u/<username> or g/<group>, got "${principal}"`);
  const [, kind, name] = match;
  if (kind === "u") {
    const member = await ctx.db.workspaceMember.findFirst({
      where: { workspaceId, user: { username: name } },
    });
    if (!member) throw invalidInput(field, `${name} is not a member of this workspace`);
  } else if (name !== ALL_GROUP) {
    const group = await ctx.db.group.findUnique({
      where: { workspaceId_name: { workspaceId, name: name! } },
    });
    if (!group) throw invalidInput(field, `group ${name} does not exist`);
  }
  return principal;
}

function checkedLevel(level: unknown, field = "level"): PermissionLevel {
  if (typeof level !== "string" || !(LEVELS as readonly string[]).includes(level)) {
    throw invalidInput(field, `must be one of ${LEVELS.join(", ")}`);
  }
  return level as PermissionLevel;
}

export interface CreateFolderInput {
  name: string;
  summary?: string | null;
  /** Extra owners besides the creator (`u/…` or `g/…`). */
  owners?: string[];
  /** Windmill's extra_perms: principal → true (writer) or false (viewer). */
  extraPerms?: Record<string, boolean>;
}

/** Creates a folder; its creator owns it (so that a developer can use the folder they made). */
export async function createFolder(
  ctx: CoreContext,
  membership: Membership,
  input: CreateFolderInput,
): Promise<FolderView> {
  requirePermission(membership, "folder.write");
  if ((input.owners?.length ?? 0) > 0 || Object.keys(input.extraPerms ?? {}).length > 0) {
    refuseJobCredential(membership.principal, "grant permissions on folders");
  }
  if (typeof input.name !== "string" || !FOLDER_NAME.test(input.name)) {
    throw invalidInput("name", "use 1-50 letters, digits, _ or -");
  }
  if ((input.summary ?? "").length > 1000) throw invalidInput("summary", "at most 1000 characters");
  const workspaceId = membership.workspace.id;
  const perms = await desiredPermissions(ctx, workspaceId, input.owners ?? [], input.extraPerms ?? {});
  const creator = `u/${membership.principal.username}`;
  const isRealUser = await ctx.db.user.findUnique({ where: { id: membership.principal.userId } });
  if (isRealUser) perms.set(creator, "owner");
  try {
    await ctx.db.folder.create({
      data: {
        workspaceId,
        name: input.name,
        summary: input.summary ?? null,
        createdBy: isRealUser ? membership.principal.userId : null,
        permissions: { create: [...perms].map(([principal, level]) => ({ principal, level })) },
      },
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError("CONFLICT", `name: folder ${input.name} already exists`, "name");
    }
    throw error;
  }
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "folder.create",
    resource: input.name,
    parameters: Object.fromEntries(perms),
  });
  return getFolder(ctx, membership, input.name);
}

async function desiredPermissions(
  ctx: CoreContext,
  workspaceId: string,
  owners: unknown,
  extraPerms: unknown,
): Promise<Map<string, PermissionLevel>> {
  if (!Array.isArray(owners)) throw invalidInput("owners", "must be a list of u/<username> or g/<group>");
  if (typeof extraPerms !== "object" || extraPerms === null || Array.isArray(extraPerms)) {
    throw invalidInput("extra_perms", "must be an object of principal: true (write) or false (read)");
  }
  const perms = new Map<string, PermissionLevel>();
  for (const [principal, write] of Object.entries(extraPerms)) {
    if (typeof write !== "boolean") throw invalidInput(`extra_perms.${principal}`, "must be true or false");
    perms.set(
      await checkedPrincipal(ctx, workspaceId, principal, "extra_perms"),
      write ? "writer" : "viewer",
    );
  }
  for (const owner of owners) perms.set(await checkedPrincipal(ctx, workspaceId, owner, "owners"), "owner");
  return perms;
}

export interface UpdateFolderInput {
  summary?: string | null;
  owners?: string[];
  extraPerms?: Record<string, boolean>;
}

/**
 * Windmill's folder update: `owners` replaces the owners, `extra_perms` the other grants; a field
 * left out keeps what it covers.
 */
export async function updateFolder(
  ctx: CoreContext,
  membership: Membership,
  name: string,
  input: UpdateFolderInput,
): Promise<FolderView> {
  await requireOwner(ctx, membership, name);
  const workspaceId = membership.workspace.id;
  if (input.summary !== undefined) {
    if ((input.summary ?? "").length > 1000) throw invalidInput("summary", "at most 1000 characters");
    await ctx.db.folder.update({
      where: { workspaceId_name: { workspaceId, name } },
      data: { summary: input.summary },
    });
  }
  if (input.owners !== undefined || input.extraPerms !== undefined) {
    // Who may use a folder is people's decision, never a job's (see requirePermission).
    refuseJobCredential(membership.principal, "change folder permissions");
    const current = (await permissionsOf(ctx, workspaceId)).get(name) ?? [];
    const owners = input.owners ?? current.filter((p) => p.level === "owner").map((p) => p.principal);
    const extra =
      input.extraPerms ??
      Object.fromEntries(
        current.filter((p) => p.level !== "owner").map((p) => [p.principal, p.level === "writer"]),
      );
    const perms = await desiredPermissions(ctx, workspaceId, owners, extra);
    await replacePermissions(ctx, workspaceId, name, perms);
  }
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "folder.update",
    resource: name,
    parameters: { summary: input.summary, owners: input.owners, extra_perms: input.extraPerms },
  });
  return getFolder(ctx, membership, name);
}

async function replacePermissions(
  ctx: CoreContext,
  workspaceId: string,
  name: string,
  perms: Map<string, PermissionLevel>,
): Promise<void> {
  await ctx.db.$transaction([
    ctx.db.folderPermission.deleteMany({ where: { workspaceId, folderName: name } }),
    ctx.db.folderPermission.createMany({
      data: [...perms].map(([principal, level]) => ({ workspaceId, folderName: name, principal, level })),
    }),
  ]);
}

/** Grants `level` on the folder to `principal`, or takes its grant away when level is null. */
export async function setFolderPermission(
  ctx: CoreContext,
  membership: Membership,
  name: string,
  principal: string,
  level: PermissionLevel | null,
): Promise<FolderView> {
  await requireOwner(ctx, membership, name);
  refuseJobCredential(membership.principal, "change folder permissions");
  const workspaceId = membership.workspace.id;
  const checked = await checkedPrincipal(ctx, workspaceId, principal, "principal");
  if (level === null) {
    await ctx.db.folderPermission.deleteMany({
      where: { workspaceId, folderName: name, principal: checked },
    });
  } else {
    const valid = checkedLevel(level);
    await ctx.db.folderPermission.upsert({
      where: { workspaceId_folderName_principal: { workspaceId, folderName: name, principal: checked } },
      create: { workspaceId, folderName: name, principal: checked, level: valid },
      update: { level: valid },
    });
  }
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation:
      level === "owner" ? "folder.add_owner" : level === null ? "folder.remove_owner" : "folder.update",
    resource: name,
    parameters: { principal: checked, level },
  });
  return getFolder(ctx, membership, name);
}

/** Deletes an empty folder; one that still holds items is refused, naming what is left. */
export async function deleteFolder(ctx: CoreContext, membership: Membership, name: string): Promise<void> {
  await requireOwner(ctx, membership, name);
  const workspaceId = membership.workspace.id;
  const prefix = `${likePrefix(`f/${name}/`)}%`;
  const { rows } = await ctx.pool.query<{ path: string }>(
    `SELECT path FROM script WHERE workspace_id = $1 AND path LIKE $2 AND NOT archived
     UNION ALL SELECT path FROM variable WHERE workspace_id = $1 AND path LIKE $2
     UNION ALL SELECT path FROM resource WHERE workspace_id = $1 AND path LIKE $2
     UNION ALL SELECT path FROM schedule WHERE workspace_id = $1 AND path LIKE $2
     LIMIT 3`,
    [workspaceId, prefix],
  );
  if (rows.length) {
    throw new AppError(
      "CONFLICT",
      `folder ${name} is not empty (${rows.map((r) => r.path).join(", ")}…): move or delete its items first`,
    );
  }
  await ctx.db.folder.delete({ where: { workspaceId_name: { workspaceId, name } } });
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "folder.delete",
    resource: name,
  });
}
