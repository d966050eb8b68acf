import { isUniqueViolation, prepared, type Workspace, type WorkspaceRole } from "@millrace/db";
import { recordAudit } from "./audit/index.ts";
import type { Principal } from "./auth/principal.ts";
import {
  BEARER_COLUMNS,
  BEARER_FROM,
  hashToken,
  principalOfBearerRow,
  sameSecret,
  SUPERADMIN_SECRET_PRINCIPAL,
  type BearerRow,
} from "./auth/tokens.ts";
import type { CoreContext } from "./context.ts";
import { AppError, invalidInput, notFound } from "./errors.ts";

export const WORKSPACE_ID = /^[a-z0-9][a-z0-9_-]{0,49}$/;

export interface Membership {
  workspace: Workspace;
  role: WorkspaceRole;
  principal: Principal;
}

const MEMBERSHIP_COLUMNS = `w.id AS workspace_id, w.name AS workspace_name, w.created_by AS workspace_created_by,
       w.created_at AS workspace_created_at, m.role`;

interface MembershipRow {
  workspace_id: string | null;
  workspace_name: string;
  workspace_created_by: string | null;
  workspace_created_at: Date;
  role: WorkspaceRole | null;
}

/**
 * The membership a row (MEMBERSHIP_COLUMNS) grants. A non-member (or a token scoped to another
 * workspace) gets NOT_FOUND so that a workspace's existence does not leak. A superadmin is admin
 * of every workspace.
 */
function membershipOfRow(
  principal: Principal,
  workspaceId: string,
  row: MembershipRow | undefined,
): Membership {
  const missing = notFound(`workspace ${workspaceId}`);
  if (principal.workspaceScope && principal.workspaceScope !== workspaceId) throw missing;
  if (!row?.workspace_id) throw missing;
  const workspace: Workspace = {
    id: row.workspace_id,
    name: row.workspace_name,
    createdBy: row.workspace_created_by,
    createdAt: row.workspace_created_at,
    deleted: false,
  };
  if (principal.isSuperAdmin) return { workspace, role: "admin", principal };
  if (!row.role) throw missing;
  return { workspace, role: row.role, principal };
}

/** Loads the caller's membership in one query (see membershipOfRow). */
export async function requireMembership(
  ctx: CoreContext,
  principal: Principal,
  workspaceId: string,
): Promise<Membership> {
  // Raw SQL: this runs on every workspace request, including the run_wait_result hot path.
  const { rows } = await ctx.pool.query<MembershipRow>(
    prepared(
      `SELECT ${MEMBERSHIP_COLUMNS}
         FROM workspace w
         LEFT JOIN workspace_member m ON m.workspace_id = w.id AND m.user_id = $2 AND NOT m.disabled
        WHERE w.id = $1 AND NOT w.deleted`,
      [workspaceId, principal.userId],
    ),
  );
  return membershipOfRow(principal, workspaceId, rows[0]);
}

/**
 * A bearer token's principal and its membership in `workspaceId`, in one query instead of two:
 * every workspace call of the REST API starts with both. Refused exactly as principalFromBearer,
 * then `vet` (the caller's own checks of the principal), then requireMembership would refuse.
 */
export async function membershipFromBearer(
  ctx: CoreContext,
  token: string,
  superadminSecret: string | undefined,
  workspaceId: string,
  vet: (principal: Principal) => Principal = (principal) => principal,
): Promise<Membership> {
  if (superadminSecret && sameSecret(token, superadminSecret)) {
    return requireMembership(ctx, vet(SUPERADMIN_SECRET_PRINCIPAL), workspaceId);
  }
  const { rows } = await ctx.pool.query<BearerRow & MembershipRow>(
    prepared(
      `SELECT ${BEARER_COLUMNS}, ${MEMBERSHIP_COLUMNS}
         FROM ${BEARER_FROM}
         LEFT JOIN workspace w ON w.id = $2 AND NOT w.deleted
         LEFT JOIN workspace_member m ON m.workspace_id = w.id AND m.user_id = u.id AND NOT m.disabled
        WHERE t.token_hash = $1`,
      [hashToken(token), workspaceId],
    ),
  );
  const principal = vet(principalOfBearerRow(ctx, rows[0]));
  return membershipOfRow(principal, workspaceId, rows[0]);
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
