import { isUniqueViolation } from "@millrace/db";
import { recordAudit } from "../audit/index.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";

export const GROUP_NAME = /^[A-Za-z0-9_-]{1,50}$/;
/** `g/all` stands for every member of the workspace; no stored group may take its name. */
export const ALL_GROUP = "all";

export interface GroupView {
  name: string;
  summary: string | null;
  /** Usernames. */
  members: string[];
}

function checkedName(name: unknown, field = "name"): string {
  if (typeof name !== "string" || !GROUP_NAME.test(name)) {
    throw invalidInput(field, "use 1-50 letters, digits, _ or -");
  }
  return name;
}

export async function listGroups(ctx: CoreContext, membership: Membership): Promise<GroupView[]> {
  requirePermission(membership, "group.read");
  const groups = await ctx.db.group.findMany({
    where: { workspaceId: membership.workspace.id },
    include: { members: { include: { user: { select: { username: true } } } } },
    orderBy: { name: "asc" },
  });
  return groups.map((group) => ({
    name: group.name,
    summary: group.summary,
    members: group.members.map((m) => m.user.username).sort(),
  }));
}

export async function getGroup(ctx: CoreContext, membership: Membership, name: string): Promise<GroupView> {
  const group = (await listGroups(ctx, membership)).find((g) => g.name === name);
  if (!group) throw notFound(`group ${name}`);
  return group;
}

export async function createGroup(
  ctx: CoreContext,
  membership: Membership,
  input: { name: string; summary?: string | null },
): Promise<GroupView> {
  requirePermission(membership, "group.manage");
  const name = checkedName(input.name);
  if (name === ALL_GROUP) throw invalidInput("name", `"${ALL_GROUP}" is every member already`);
  if ((input.summary ?? "").length > 1000) throw invalidInput("summary", "at most 1000 characters");
  try {
    await ctx.db.group.create({
      data: { workspaceId: membership.workspace.id, name, summary: input.summary ?? null },
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("CONFLICT", `name: group ${name} already exists`, "name");
    throw error;
  }
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: membership.workspace.id,
    operation: "group.create",
    resource: name,
  });
  return { name, summary: input.summary ?? null, members: [] };
}

async function requireGroup(ctx: CoreContext, workspaceId: string, name: string) {
  const group = await ctx.db.group.findUnique({ where: { workspaceId_name: { workspaceId, name } } });
  if (!group) throw notFound(`group ${name}`);
  return group;
}

export async function updateGroup(
  ctx: CoreContext,
  membership: Membership,
  name: string,
  input: { summary?: string | null },
): Promise<void> {
  requirePermission(membership, "group.manage");
  const workspaceId = membership.workspace.id;
  await requireGroup(ctx, workspaceId, name);
  if ((input.summary ?? "").length > 1000) throw invalidInput("summary", "at most 1000 characters");
  await ctx.db.group.update({
    where: { workspaceId_name: { workspaceId, name } },
    data: { summary: input.summary ?? null },
  });
  await recordAudit(ctx.pool, membership.principal, { workspaceId, operation: "group.edit", resource: name });
}

/** Deleting a group also drops the folder permissions it granted. */
export async function deleteGroup(ctx: CoreContext, membership: Membership, name: string): Promise<void> {
  requirePermission(membership, "group.manage");
  const workspaceId = membership.workspace.id;
  await requireGroup(ctx, workspaceId, name);
  await ctx.pool.query(`DELETE FROM folder_permission WHERE workspace_id = $1 AND principal = $2`, [
    workspaceId,
    `g/${name}`,
  ]);
  await ctx.db.group.delete({ where: { workspaceId_name: { workspaceId, name } } });
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "group.delete",
    resource: name,
  });
}

async function memberUserId(ctx: CoreContext, workspaceId: string, username: unknown): Promise<string> {
  if (typeof username !== "string" || !username) throw invalidInput("username", "is required");
  const member = await ctx.db.workspaceMember.findFirst({
    where: { workspaceId, user: { username } },
    select: { userId: true },
  });
  if (!member)
    throw new AppError("NOT_FOUND", `username: ${username} is not a member of this workspace`, "username");
  return member.userId;
}

export async function addGroupMember(
  ctx: CoreContext,
  membership: Membership,
  name: string,
  username: string,
): Promise<void> {
  requirePermission(membership, "group.manage");
  const workspaceId = membership.workspace.id;
  await requireGroup(ctx, workspaceId, name);
  const userId = await memberUserId(ctx, workspaceId, username);
  await ctx.pool.query(
    `INSERT INTO group_member (workspace_id, group_name, user_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    [workspaceId, name, userId],
  );
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "group.adduser",
    resource: name,
    parameters: { username },
  });
}

export async function removeGroupMember(
  ctx: CoreContext,
  membership: Membership,
  name: string,
  username: string,
): Promise<void> {
  requirePermission(membership, "group.manage");
  const workspaceId = membership.workspace.id;
  await requireGroup(ctx, workspaceId, name);
  const userId = await memberUserId(ctx, workspaceId, username);
  const { rowCount } = await ctx.pool.query(
    `DELETE FROM group_member WHERE workspace_id = $1 AND group_name = $2 AND user_id = $3`,
    [workspaceId, name, userId],
  );
  if (!rowCount) throw new AppError("NOT_FOUND", `username: ${username} is not in group ${name}`, "username");
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "group.removeuser",
    resource: name,
    parameters: { username },
  });
}

/**
 * Windmill's granular ACL on a group (`acls/add/group_/<name>`), which `wmill sync push` sends
 * for each member after adding them (`write: false`) and for a group admin (`write: true`).
 * Millrace groups have no admins of their own (workspace admins manage every group): the grant
 * is accepted for a user already in the group and changes nothing; anyone else is refused.
 * Removing one (sent after `groups/removeuser`) changes nothing either.
 */
export async function checkGroupAcl(
  ctx: CoreContext,
  membership: Membership,
  name: string,
  owner: string,
  change: "add" | "remove",
): Promise<void> {
  requirePermission(membership, "group.manage");
  const workspaceId = membership.workspace.id;
  await requireGroup(ctx, workspaceId, name);
  const match = /^u\/(.+)$/.exec(owner);
  if (!match) {
    throw invalidInput(
      "owner",
      `must be u/<username> of a member of group ${name} (groups take no group grants)`,
    );
  }
  if (change === "remove") return;
  const { rowCount } = await ctx.pool.query(
    `SELECT 1 FROM group_member m JOIN "user" u ON u.id = m.user_id
      WHERE m.workspace_id = $1 AND m.group_name = $2 AND u.username = $3`,
    [workspaceId, name, match[1]],
  );
  if (!rowCount) {
    throw invalidInput("owner", `${owner} is not in group ${name}: add them with groups/adduser first`);
  }
}
