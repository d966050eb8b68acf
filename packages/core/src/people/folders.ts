import { isUniqueViolation, type PermissionLevel } from "@millrace/db";
import { folderLevel, folderLevels, likePrefix } from "../access.ts";
import { recordAudit } from "../audit/index.ts";
import { refuseJobCredential } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import { ALL_GROUP } from "./groups.ts";

export const FOLDER_NAME = /^[A-Za-z0-9_-]{1,50}$/;
export const LEVELS = ["owner", "writer", "viewer"] as const satisfies readonly PermissionLevel[];

/**
 * Whether a grant applies now. A folder imported from a Windmill repository names whoever had
 * rights in the workspace it came from, as Windmill keeps them (extra_perms is a map of strings that
 * Windmill matches against `u/<username>` and `g/<group>` when it checks access):
 * - `active`: a member (`u/<username>`), an existing group or `g/all`;
 * - `pending`: `u/<name>` that is no member of this workspace, or `g/<name>` that is no group of it
 *   yet. Stored as is; it takes effect when a member with exactly that username joins (or an
 *   admin, the only role that creates groups, creates that group). Until then it gives nothing.
 * - `inert`: a key that is neither (an email such as `someone@example.dev`, which Windmill's
 *   repositories hold when an owner was added by email). Windmill's access check never matches
 *   such a key, so it grants nothing there; Millrace keeps it (a `wmill sync push` of the same
 *   folder.meta.yaml must find nothing to change) and it grants nothing here either: access is
 *   checked against `u/<username>` and `g/<group>` only (access.ts), and no username holds `@`.
 */
export type GrantStatus = "active" | "pending" | "inert";

export interface FolderPermissionView {
  /** `u/<username>` or `g/<group>` (or, inert, a key Windmill kept: see GrantStatus). */
  principal: string;
  level: PermissionLevel;
  status: GrantStatus;
  /** An owner's own entry in Windmill's extra_perms, null when it has none (see schema.prisma). */
  ownerExtra: boolean | null;
}

/**
 * Windmill's extra_perms of a folder: every grant but the owners (writer: true, viewer: false),
 * plus the owners that the folder's extra_perms listed, with their value. `everyOwner`: owners it
 * did not list too, as may-write (what Windmill's API answers: folders/get, folders/list); the
 * repository form (tarball, git sync) keeps only those listed, so that a file reads back as it was.
 */
export function windmillExtraPerms(
  permissions: FolderPermissionView[],
  options: { everyOwner?: boolean } = {},
): Record<string, boolean> {
  return Object.fromEntries(
    permissions.flatMap((p) =>
      p.level !== "owner"
        ? [[p.principal, p.level === "writer"]]
        : p.ownerExtra === null
          ? options.everyOwner
            ? [[p.principal, true]]
            : []
          : [[p.principal, p.ownerExtra]],
    ),
  );
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
  const { rows } = await ctx.pool.query<{
    folder_name: string;
    principal: string;
    level: PermissionLevel;
    status: GrantStatus;
    owner_extra: boolean | null;
  }>(
    // Owners in the order they were given (Windmill's owners list), then the other grants.
    `SELECT fp.folder_name, fp.principal, fp.level::text AS level, fp.owner_extra,
            CASE WHEN fp.principal = 'g/all'
                   OR EXISTS (SELECT 1 FROM workspace_member m JOIN "user" u ON u.id = m.user_id
                               WHERE m.workspace_id = fp.workspace_id AND 'u/' || u.username = fp.principal)
                   OR EXISTS (SELECT 1 FROM "group" g
                               WHERE g.workspace_id = fp.workspace_id AND 'g/' || g.name = fp.principal)
                 THEN 'active'
                 WHEN fp.principal ~ '^[ug]/' THEN 'pending'
                 ELSE 'inert' END AS status
       FROM folder_permission fp
      WHERE fp.workspace_id = $1
      ORDER BY fp.level <> 'owner', fp.position, fp.principal`,
    [workspaceId],
  );
  const byFolder = new Map<string, FolderPermissionView[]>();
  for (const row of rows) {
    byFolder.set(row.folder_name, [
      ...(byFolder.get(row.folder_name) ?? []),
      { principal: row.principal, level: row.level, status: row.status, ownerExtra: row.owner_extra },
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

/** `u/<name>` or `g/<name>` as Windmill names them (usernames of other instances included). */
const PRINCIPAL = /^([ug])\/([A-Za-z0-9_.-]{1,100})$/;
/** An email-like key (`someone@example.dev`): kept, never matched (GrantStatus `inert`). */
const EMAIL_KEY = /^[^\s@/]{1,100}@[^\s@/]{1,200}$/;

/**
 * A grantee as given, with whether it applies now. Unknown members and groups are kept as pending
 * (as Windmill keeps them) and email-like keys as inert; anything else is refused, naming `field`.
 */
async function checkedPrincipal(
  ctx: CoreContext,
  workspaceId: string,
  principal: unknown,
  field: string,
): Promise<{ principal: string; status: GrantStatus }> {
  if (typeof principal !== "string") throw invalidInput(field, "must be u/<username> or g/<group>");
  if (EMAIL_KEY.test(principal)) return { principal, status: "inert" };
  const match = PRINCIPAL.exec(principal);
  if (!match) throw invalidInput(field, `must be u/<username> or g/<group>, got "${principal}"`);
  const [, kind, name] = match;
  if (kind === "u") {
    const member = await ctx.db.workspaceMember.findFirst({
      where: { workspaceId, user: { username: name } },
    });
    return { principal, status: member ? "active" : "pending" };
  }
  if (name === ALL_GROUP) return { principal, status: "active" };
  const group = await ctx.db.group.findUnique({
    where: { workspaceId_name: { workspaceId, name: name! } },
  });
  return { principal, status: group ? "active" : "pending" };
}

/** The grants of `perms` that do not apply now, for the caller to report. */
export interface GrantReport {
  pending: string[];
  inert: string[];
}

function reportOf(perms: DesiredPermissions): GrantReport {
  const report: GrantReport = { pending: [], inert: [] };
  for (const [principal, { status }] of perms) {
    if (status === "pending") report.pending.push(principal);
    if (status === "inert") report.inert.push(principal);
  }
  return report;
}

/** "…: grants waiting for u/admin (not a member yet); grants nothing: x@y" or "". */
export function describeGrantReport(report: GrantReport): string {
  const parts = [];
  if (report.pending.length) parts.push(`pending until they exist here: ${report.pending.join(", ")}`);
  if (report.inert.length)
    parts.push(`kept but granting nothing (not u/<user> or g/<group>): ${report.inert.join(", ")}`);
  return parts.join("; ");
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
): Promise<FolderView & { report: GrantReport }> {
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
  // The creator owns what they made, so that a developer can use their folder. An admin (who owns
  // every folder anyway) who names the owners, as `wmill sync push` of a folder.meta.yaml does,
  // gets exactly those owners: otherwise the next push would find an owner the file lacks.
  const explicitOwners = (input.owners?.length ?? 0) > 0 && membership.role === "admin";
  if (isRealUser && !explicitOwners && perms.get(creator)?.level !== "owner") {
    perms.set(creator, { level: "owner", status: "active", position: -1 });
  }
  try {
    await ctx.db.folder.create({
      data: {
        workspaceId,
        name: input.name,
        summary: input.summary ?? null,
        createdBy: isRealUser ? membership.principal.userId : null,
        permissions: { create: permissionRows(perms) },
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
    parameters: { ...Object.fromEntries([...perms].map(([p, g]) => [p, g.level])), ...grantNotes(perms) },
  });
  return { ...(await getFolder(ctx, membership, input.name)), report: reportOf(perms) };
}

type DesiredPermissions = Map<
  string,
  { level: PermissionLevel; status: GrantStatus; position: number; ownerExtra?: boolean | null }
>;

/** The audit parameters naming grants that do not apply now. */
function grantNotes(perms: DesiredPermissions): Record<string, string[]> {
  const report = reportOf(perms);
  return {
    ...(report.pending.length ? { pending: report.pending } : {}),
    ...(report.inert.length ? { inert: report.inert } : {}),
  };
}

function permissionRows(perms: DesiredPermissions) {
  return [...perms]
    .sort(([, a], [, b]) => a.position - b.position)
    .map(([principal, { level, ownerExtra }], position) => ({
      principal,
      level,
      position,
      ownerExtra: level === "owner" ? (ownerExtra ?? null) : null,
    }));
}

/**
 * Windmill's owners + extra_perms as our grants, each with its status and its place: owners in the
 * order given (wmill compares the list as is), then the other grants. A principal that is an owner
 * and also in extra_perms (as Windmill lists its owners) is an owner.
 */
async function desiredPermissions(
  ctx: CoreContext,
  workspaceId: string,
  owners: unknown,
  extraPerms: unknown,
): Promise<DesiredPermissions> {
  if (!Array.isArray(owners)) throw invalidInput("owners", "must be a list of u/<username> or g/<group>");
  if (typeof extraPerms !== "object" || extraPerms === null || Array.isArray(extraPerms)) {
    throw invalidInput("extra_perms", "must be an object of principal: true (write) or false (read)");
  }
  const perms: DesiredPermissions = new Map();
  const ownerCount = owners.length;
  let index = 0;
  for (const [principal, write] of Object.entries(extraPerms)) {
    if (typeof write !== "boolean") throw invalidInput(`extra_perms.${principal}`, "must be true or false");
    const checked = await checkedPrincipal(ctx, workspaceId, principal, "extra_perms");
    perms.set(checked.principal, {
      level: write ? "writer" : "viewer",
      status: checked.status,
      position: ownerCount + index++,
    });
  }
  for (const [position, owner] of owners.entries()) {
    const checked = await checkedPrincipal(ctx, workspaceId, owner, "owners");
    // An owner that extra_perms lists too keeps that entry (see FolderPermission.ownerExtra).
    const listed = (extraPerms as Record<string, unknown>)[checked.principal];
    perms.set(checked.principal, {
      level: "owner",
      status: checked.status,
      position,
      ownerExtra: typeof listed === "boolean" ? listed : null,
    });
  }
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
): Promise<FolderView & { report: GrantReport }> {
  await requireOwner(ctx, membership, name);
  const workspaceId = membership.workspace.id;
  if (input.summary !== undefined) {
    if ((input.summary ?? "").length > 1000) throw invalidInput("summary", "at most 1000 characters");
    await ctx.db.folder.update({
      where: { workspaceId_name: { workspaceId, name } },
      data: { summary: input.summary },
    });
  }
  let report: GrantReport = { pending: [], inert: [] };
  let notes: Record<string, string[]> = {};
  if (input.owners !== undefined || input.extraPerms !== undefined) {
    // Who may use a folder is people's decision, never a job's (see requirePermission).
    refuseJobCredential(membership.principal, "change folder permissions");
    const current = (await permissionsOf(ctx, workspaceId)).get(name) ?? [];
    const owners = input.owners ?? current.filter((p) => p.level === "owner").map((p) => p.principal);
    const extra = input.extraPerms ?? windmillExtraPerms(current);
    const perms = await desiredPermissions(ctx, workspaceId, owners, extra);
    await replacePermissions(ctx, workspaceId, name, perms);
    report = reportOf(perms);
    notes = grantNotes(perms);
  }
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "folder.update",
    resource: name,
    parameters: { summary: input.summary, owners: input.owners, extra_perms: input.extraPerms, ...notes },
  });
  return { ...(await getFolder(ctx, membership, name)), report };
}

async function replacePermissions(
  ctx: CoreContext,
  workspaceId: string,
  name: string,
  perms: DesiredPermissions,
): Promise<void> {
  await ctx.db.$transaction([
    ctx.db.folderPermission.deleteMany({ where: { workspaceId, folderName: name } }),
    ctx.db.folderPermission.createMany({
      data: permissionRows(perms).map((row) => ({ workspaceId, folderName: name, ...row })),
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
  const { principal: checked, status } = await checkedPrincipal(ctx, workspaceId, principal, "principal");
  if (level === null) {
    // Revoking works on any stored grant, pending and inert ones included.
    await ctx.db.folderPermission.deleteMany({
      where: { workspaceId, folderName: name, principal: checked },
    });
  } else {
    // One grant given by hand (the folder page, `wmill folder add-owner`) must name someone who is
    // here: a typo must not leave a grant waiting for whoever takes that name. Pending grants come
    // only with a whole folder (owners/extra_perms), as a repository import brings them.
    if (status !== "active") {
      throw invalidInput(
        "principal",
        checked.startsWith("g/")
          ? `group ${checked.slice(2)} does not exist`
          : status === "pending"
            ? `${checked.slice(2)} is not a member of this workspace`
            : `must be u/<username> or g/<group>, got "${checked}"`,
      );
    }
    const valid = checkedLevel(level);
    const last = await ctx.db.folderPermission.aggregate({
      where: { workspaceId, folderName: name },
      _max: { position: true },
    });
    await ctx.db.folderPermission.upsert({
      where: { workspaceId_folderName_principal: { workspaceId, folderName: name, principal: checked } },
      create: {
        workspaceId,
        folderName: name,
        principal: checked,
        level: valid,
        position: (last._max.position ?? -1) + 1,
      },
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
