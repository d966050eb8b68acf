import { isUniqueViolation, prepared, type Workspace, type WorkspaceRole } from "@millrace/db";
import { recordAudit } from "./audit/index.ts";
import type { Principal } from "./auth/principal.ts";
import type { CoreContext } from "./context.ts";
import { AppError, invalidInput, notFound } from "./errors.ts";

export const WORKSPACE_ID = /^[a-z0-9][a-z0-9_-]{0,49}$/;

export interface Membership {
  workspace: Workspace;
  role: WorkspaceRole;
  principal: Principal;
}

/**
 * Loads the caller's membership in one query. A non-member (or a token scoped to another
 * workspace) gets NOT_FOUND so that a workspace's existence does not leak. A superadmin is admin
 * of every workspace.
 */
export async function requireMembership(
  ctx: CoreContext,
  principal: Principal,
  workspaceId: string,
): Promise<Membership> {
  const missing = notFound(`workspace ${workspaceId}`);
  if (principal.workspaceScope && principal.workspaceScope !== workspaceId) throw missing;
  // Raw SQL: this runs on every workspace request, including the run_wait_result hot path.
  const { rows } = await ctx.pool.query<{
    id: string;
    name: string;
    created_by: string | null;
    created_at: Date;
    role: WorkspaceRole | null;
  }>(
    prepared(
      `SELECT w.id, w.name, w.created_by, w.created_at, m.role
         FROM workspace w
         LEFT JOIN workspace_member m ON m.workspace_id = w.id AND m.user_id = $2 AND NOT m.disabled
        WHERE w.id = $1 AND NOT w.deleted`,
      [workspaceId, principal.userId],
    ),
  );
  const row = rows[0];
  if (!row) throw missing;
  const workspace: Workspace = {
    id: row.id,
    name: row.name,
    createdBy: row.created_by,
    createdAt: row.created_at,
    deleted: false,
  };
  if (principal.isSuperAdmin) return { workspace, role: "admin", principal };
  if (!row.role) throw missing;
  return { workspace, role: row.role, principal };
}

export interface CreateWorkspaceInput {
  id: string;
  name: string;
  /**
   * Windmill's `username`. Millrace usernames are instance-wide, so it cannot rename the creator;
   * when it names another account (by username or email), that account becomes the workspace's
   * admin, which is how provisioning scripts hand a new workspace to its team lead. A superadmin
   * creator then stays out of the members (they administer every workspace anyway); any other
   * creator stays an admin beside it.
   */
  username?: string | null;
}

export async function createWorkspace(
  ctx: CoreContext,
  principal: Principal,
  input: CreateWorkspaceInput,
): Promise<Workspace> {
  if (!WORKSPACE_ID.test(input.id)) {
    throw invalidInput("id", "use 1-50 lowercase letters, digits, - or _, starting with a letter or digit");
  }
  const name = input.name.trim();
  if (!name || name.length > 100) throw invalidInput("name", "must be 1-100 characters");
  const isRealUser = await ctx.db.user.findUnique({ where: { id: principal.userId }, select: { id: true } });
  const named = input.username?.trim()
    ? await ctx.db.user.findFirst({
        where: { OR: [{ email: input.username.trim().toLowerCase() }, { username: input.username.trim() }] },
        select: { id: true },
      })
    : null;
  const extraAdmin = named && named.id !== principal.userId ? named.id : null;
  const creatorJoins = !!isRealUser && !(extraAdmin && principal.isSuperAdmin);
  let workspace: Workspace;
  try {
    workspace = await ctx.db.workspace.create({
      data: {
        id: input.id,
        name,
        createdBy: isRealUser ? principal.userId : null,
        // The creator administers the new workspace (the SUPERADMIN_SECRET principal is no user).
        members: {
          create: [
            ...(creatorJoins ? [{ userId: principal.userId, role: "admin" as const }] : []),
            ...(extraAdmin ? [{ userId: extraAdmin, role: "admin" as const }] : []),
          ],
        },
      },
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("CONFLICT", `workspace ${input.id} already exists`, "id");
    throw error;
  }
  await recordAudit(ctx.pool, principal, {
    workspaceId: workspace.id,
    operation: "workspaces.create",
    resource: workspace.id,
    parameters: { name, username: input.username ?? null },
  });
  return workspace;
}

export interface WorkspaceSummary {
  id: string;
  name: string;
  role: WorkspaceRole;
}

/** Workspaces the caller belongs to; a superadmin sees every workspace. */
export async function listWorkspaces(ctx: CoreContext, principal: Principal): Promise<WorkspaceSummary[]> {
  if (principal.isSuperAdmin) {
    const all = await ctx.db.workspace.findMany({ where: { deleted: false }, orderBy: { id: "asc" } });
    return all.map((w) => ({ id: w.id, name: w.name, role: "admin" as const }));
  }
  const memberships = await ctx.db.workspaceMember.findMany({
    where: {
      userId: principal.userId,
      disabled: false,
      workspace: { deleted: false },
      ...(principal.workspaceScope ? { workspaceId: principal.workspaceScope } : {}),
    },
    include: { workspace: true },
    orderBy: { workspaceId: "asc" },
  });
  return memberships.map((m) => ({ id: m.workspace.id, name: m.workspace.name, role: m.role }));
}
