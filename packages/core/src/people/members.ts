import type { PermissionLevel, WorkspaceRole } from "@millrace/db";
import { recordAudit } from "../audit/index.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";

export const ROLES = ["admin", "developer", "operator"] as const satisfies readonly WorkspaceRole[];

export interface MemberView {
  userId: string;
  email: string;
  username: string;
  name: string | null;
  role: WorkspaceRole;
  /** The membership or the whole account is disabled. */
  disabled: boolean;
  isSuperAdmin: boolean;
  createdAt: Date;
  groups: string[];
  /** Folders the member may write in, read, and owns (through their own grants and groups). */
  foldersWrite: string[];
  foldersRead: string[];
  foldersOwner: string[];
}

interface MemberRow {
  user_id: string;
  email: string;
  username: string;
  name: string | null;
  role: WorkspaceRole;
  disabled: boolean;
  is_super_admin: boolean;
  created_at: Date;
}

const RANK: Record<PermissionLevel, number> = { viewer: 1, writer: 2, owner: 3 };

/**
 * Every member with their groups and folder access. Computed from three small queries rather than
 * per member, since governance reads it for every workspace.
 */
export async function listMembers(ctx: CoreContext, membership: Membership): Promise<MemberView[]> {
  requirePermission(membership, "member.read");
  return membersOf(ctx, membership.workspace.id);
}

export async function membersOf(ctx: CoreContext, workspaceId: string): Promise<MemberView[]> {
  const [members, groups, perms] = await Promise.all([
    ctx.pool.query<MemberRow>(
      `SELECT u.id AS user_id, u.email, u.username, u.name, m.role::text AS role,
              (m.disabled OR u.disabled) AS disabled, u.is_super_admin, m.created_at
         FROM workspace_member m JOIN "user" u ON u.id = m.user_id
        WHERE m.workspace_id = $1
        ORDER BY u.username`,
      [workspaceId],
    ),
    ctx.pool.query<{ user_id: string; group_name: string }>(
      `SELECT user_id, group_name FROM group_member WHERE workspace_id = $1 ORDER BY group_name`,
      [workspaceId],
    ),
    ctx.pool.query<{ folder_name: string; principal: string; level: PermissionLevel }>(
      `SELECT folder_name, principal, level::text AS level FROM folder_permission WHERE workspace_id = $1`,
      [workspaceId],
    ),
  ]);
  const groupsOf = new Map<string, string[]>();
  for (const row of groups.rows)
    groupsOf.set(row.user_id, [...(groupsOf.get(row.user_id) ?? []), row.group_name]);
  return members.rows.map((row) => {
    const userGroups = groupsOf.get(row.user_id) ?? [];
    const principals = new Set([`u/${row.username}`, "g/all", ...userGroups.map((g) => `g/${g}`)]);
    const levels = new Map<string, PermissionLevel>();
    for (const perm of perms.rows) {
      if (!principals.has(perm.principal)) continue;
      const current = levels.get(perm.folder_name);
      if (!current || RANK[perm.level] > RANK[current]) levels.set(perm.folder_name, perm.level);
    }
    const admin = row.role === "admin";
    const folders = (min: PermissionLevel) =>
      [...levels]
        .filter(([, level]) => admin || RANK[level] >= RANK[min])
        .map(([name]) => name)
        .sort();
    return {
      userId: row.user_id,
      email: row.email,
      username: row.username,
      name: row.name,
      role: row.role,
      disabled: row.disabled,
      isSuperAdmin: row.is_super_admin,
      createdAt: row.created_at,
      groups: userGroups,
      foldersWrite: folders("writer"),
      foldersRead: folders("viewer"),
      foldersOwner: folders("owner"),
    };
  });
}

export async function getMember(
  ctx: CoreContext,
  membership: Membership,
  username: string,
): Promise<MemberView> {
  requirePermission(membership, "member.read");
  const member = (await membersOf(ctx, membership.workspace.id)).find((m) => m.username === username);
  if (!member) throw notFound(`user ${username} in this workspace`);
  return member;
}

/** Windmill's `is_admin` / `operator` flags to a role (admin wins over operator). */
export function roleFromFlags(isAdmin: unknown, operator: unknown, field = "is_admin"): WorkspaceRole {
  if (isAdmin !== undefined && isAdmin !== null && typeof isAdmin !== "boolean")
    throw invalidInput(field, "must be true or false");
  if (operator !== undefined && operator !== null && typeof operator !== "boolean")
    throw invalidInput("operator", "must be true or false");
  if (isAdmin) return "admin";
  return operator ? "operator" : "developer";
}

export function checkedRole(role: unknown, field = "role"): WorkspaceRole {
  if (typeof role !== "string" || !(ROLES as readonly string[]).includes(role)) {
    throw invalidInput(field, `must be one of ${ROLES.join(", ")}`);
  }
  return role as WorkspaceRole;
}

async function userByEmailOrUsername(ctx: CoreContext, who: string, field: string) {
  const key = who.trim().toLowerCase();
  if (!key) throw invalidInput(field, "is required");
  const user = await ctx.db.user.findFirst({ where: { OR: [{ email: key }, { username: key }] } });
  if (!user) {
    throw new AppError(
      "NOT_FOUND",
      `${field}: no user ${who} on this instance (a superadmin creates accounts first)`,
      field,
    );
  }
  return user;
}

export interface AddMemberInput {
  /** Email or username of an existing account. */
  email: string;
  role: WorkspaceRole;
}

/** Adds an existing account to the workspace (Windmill's add_user). */
export async function addMember(ctx: CoreContext, membership: Membership, input: AddMemberInput) {
  requirePermission(membership, "member.manage");
  const role = checkedRole(input.role);
  const user = await userByEmailOrUsername(ctx, input.email, "email");
  const workspaceId = membership.workspace.id;
  const existing = await ctx.db.workspaceMember.findUnique({
    where: { workspaceId_userId: { workspaceId, userId: user.id } },
  });
  if (existing) throw new AppError("CONFLICT", `email: ${user.email} is already a member`, "email");
  await ctx.db.workspaceMember.create({ data: { workspaceId, userId: user.id, role } });
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "users.add_to_workspace",
    resource: user.username,
    parameters: { role },
  });
  return { username: user.username, email: user.email, role };
}

export interface UpdateMemberInput {
  role?: WorkspaceRole;
  disabled?: boolean;
}

async function activeAdminCount(ctx: CoreContext, workspaceId: string): Promise<number> {
  const { rows } = await ctx.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM workspace_member m JOIN "user" u ON u.id = m.user_id
      WHERE m.workspace_id = $1 AND m.role = 'admin' AND NOT m.disabled AND NOT u.disabled`,
    [workspaceId],
  );
  return rows[0]?.n ?? 0;
}

async function memberRow(ctx: CoreContext, workspaceId: string, username: string) {
  const row = await ctx.db.workspaceMember.findFirst({
    where: { workspaceId, user: { username } },
    include: { user: true },
  });
  if (!row) throw notFound(`user ${username} in this workspace`);
  return row;
}

/**
 * A workspace admin may not take away the last admin (a superadmin may, and governance then
 * flags the workspace): otherwise nobody could manage it any more.
 */
async function guardLastAdmin(ctx: CoreContext, membership: Membership, wasActiveAdmin: boolean) {
  if (!wasActiveAdmin || membership.principal.isSuperAdmin) return;
  if ((await activeAdminCount(ctx, membership.workspace.id)) <= 1) {
    throw new AppError("CONFLICT", "this is the workspace's last admin: make someone else admin first");
  }
}

export async function updateMember(
  ctx: CoreContext,
  membership: Membership,
  username: string,
  input: UpdateMemberInput,
): Promise<void> {
  requirePermission(membership, "member.manage");
  const workspaceId = membership.workspace.id;
  const row = await memberRow(ctx, workspaceId, username);
  const role = input.role === undefined ? row.role : checkedRole(input.role);
  const disabled = input.disabled ?? row.disabled;
  const wasActiveAdmin = row.role === "admin" && !row.disabled;
  if (wasActiveAdmin && (role !== "admin" || disabled)) await guardLastAdmin(ctx, membership, true);
  await ctx.db.workspaceMember.update({
    where: { workspaceId_userId: { workspaceId, userId: row.userId } },
    data: { role, disabled },
  });
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "users.update",
    resource: username,
    parameters: { role, disabled },
  });
}

export async function removeMember(
  ctx: CoreContext,
  membership: Membership,
  username: string,
): Promise<void> {
  requirePermission(membership, "member.manage");
  const workspaceId = membership.workspace.id;
  const row = await memberRow(ctx, workspaceId, username);
  await guardLastAdmin(ctx, membership, row.role === "admin" && !row.disabled);
  await ctx.pool.query(`DELETE FROM group_member WHERE workspace_id = $1 AND user_id = $2`, [
    workspaceId,
    row.userId,
  ]);
  await ctx.pool.query(`DELETE FROM folder_permission WHERE workspace_id = $1 AND principal = $2`, [
    workspaceId,
    `u/${username}`,
  ]);
  await ctx.db.workspaceMember.delete({ where: { workspaceId_userId: { workspaceId, userId: row.userId } } });
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "users.delete",
    resource: username,
  });
}
