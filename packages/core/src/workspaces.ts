import { isUniqueViolation, prepared, type Workspace, type WorkspaceRole } from "@millrace/db";
import { recordAudit } from "./audit/index.ts";
import { refuseJobCredential, type Principal } from "./auth/principal.ts";
import type { MemberWorkspace, Membership } from "./membership.ts";
import {
  BEARER_COLUMNS,
  BEARER_FROM,
  hashToken,
  principalOfBearerRow,
  sameSecret,
  SUPERADMIN_SECRET_PRINCIPAL,
  withBounds,
  type BearerRow,
} from "./auth/tokens.ts";
import type { CoreContext } from "./context.ts";
import { AppError, invalidInput, notFound } from "./errors.ts";

export const WORKSPACE_ID = /^[a-z0-9][a-z0-9_-]{0,49}$/;

/**
 * The workspace where workers record their groups' init and periodic scripts (which run on the
 * worker machines, outside any sandbox), as in Windmill. Superadmins only: nobody else reads it,
 * whatever its member rows say.
 */
export const ADMINS_WORKSPACE = "admins";

/**
 * Creates the `admins` workspace if it is missing (every start, and before a worker records its
 * init scripts there): Windmill always has it, and `wmill queues` and `wmill hub pull` name it.
 * It has no member rows; superadmins reach it as admins of every workspace (membershipOfRow).
 */
export async function ensureAdminsWorkspace(ctx: Pick<CoreContext, "pool">): Promise<void> {
  await ctx.pool.query(`INSERT INTO workspace (id, name) VALUES ($1, 'Admins') ON CONFLICT (id) DO NOTHING`, [
    ADMINS_WORKSPACE,
  ]);
}

/**
 * Workspace ids nobody creates over the API, superadmins included: `admins` (above), and names
 * that read as the instance's own (`global`, `instance`, `system`, …), which a tenant could use to
 * pass their workspace off as the platform's.
 */
export const RESERVED_WORKSPACE_IDS: readonly string[] = [
  ADMINS_WORKSPACE,
  "global",
  "instance",
  "internal",
  "millrace",
  "root",
  "system",
  "windmill",
];

export type { MemberWorkspace, Membership } from "./membership.ts";

const ROLE_RANK: Record<WorkspaceRole, number> = { operator: 1, developer: 2, admin: 3 };

const MEMBERSHIP_COLUMNS = `w.id AS workspace_id, w.name AS workspace_name, w.created_by AS workspace_created_by,
       w.created_at AS workspace_created_at, w.parent_workspace_id AS workspace_parent_id, w.color AS workspace_color, m.role`;

interface MembershipRow {
  workspace_id: string | null;
  workspace_name: string;
  workspace_created_by: string | null;
  workspace_created_at: Date;
  workspace_parent_id: string | null;
  workspace_color: string | null;
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
  // Made only when thrown: an error's stack costs more than the rest of this check.
  const missing = () => notFound(`workspace ${workspaceId}`);
  if (principal.workspaceScope && principal.workspaceScope !== workspaceId) throw missing();
  if (!row?.workspace_id) throw missing();
  // A superadmin's job token is admin of its own workspace (it passed the scope check above).
  const superAdmin = principal.isSuperAdmin || !!principal.adminOfScope;
  if (workspaceId === ADMINS_WORKSPACE && !superAdmin) throw missing();
  const workspace: MemberWorkspace = {
    id: row.workspace_id,
    name: row.workspace_name,
    createdBy: row.workspace_created_by,
    createdAt: row.workspace_created_at,
    deleted: false,
    parentWorkspaceId: row.workspace_parent_id,
    color: row.workspace_color,
  };
  if (superAdmin) return { workspace, role: "admin", principal };
  if (!row.role) throw missing();
  return { workspace, role: row.role, principal };
}

/**
 * The membership of a caller bounded by other users: each of them must be a member (else the
 * workspace is not found, as for the caller), and the role is the lowest of theirs.
 */
async function boundedMembership(ctx: CoreContext, own: Membership): Promise<Membership> {
  const bounding = own.principal.boundedBy ?? [];
  if (bounding.length === 0) return own;
  const workspaceId = own.workspace.id;
  const { rows } = await ctx.pool.query<MembershipRow & { user_id: string }>(
    `SELECT ${MEMBERSHIP_COLUMNS}, u.id AS user_id
       FROM "user" u
       JOIN workspace w ON w.id = $1 AND NOT w.deleted
       LEFT JOIN workspace_member m ON m.workspace_id = w.id AND m.user_id = u.id AND NOT m.disabled
      WHERE u.id = ANY($2::uuid[]) AND NOT u.disabled`,
    [workspaceId, bounding.map((user) => user.userId)],
  );
  const bounds = [
    own,
    ...bounding.map((user) =>
      membershipOfRow(
        user,
        workspaceId,
        rows.find((row) => row.user_id === user.userId),
      ),
    ),
  ];
  const role = bounds.reduce<WorkspaceRole>(
    (lowest, m) => (ROLE_RANK[m.role] < ROLE_RANK[lowest] ? m.role : lowest),
    own.role,
  );
  return { workspace: own.workspace, role, principal: own.principal, bounds };
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
  return boundedMembership(ctx, membershipOfRow(principal, workspaceId, rows[0]));
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
  const row = rows[0];
  let principal = principalOfBearerRow(ctx, row);
  if (row?.token_bounded_by?.length) principal = await withBounds(ctx, principal, row.token_bounded_by);
  principal = vet(principal);
  return boundedMembership(ctx, membershipOfRow(principal, workspaceId, row));
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
  // A job's token is limited to its own workspace: a new one would be outside it, and its creator
  // would be admin there.
  refuseJobCredential(principal, "create workspaces");
  if (!WORKSPACE_ID.test(input.id)) {
    throw invalidInput("id", "use 1-50 lowercase letters, digits, - or _, starting with a letter or digit");
  }
  if (RESERVED_WORKSPACE_IDS.includes(input.id)) {
    throw invalidInput(
      "id",
      `"${input.id}" is reserved for Millrace's own use (reserved: ${RESERVED_WORKSPACE_IDS.join(", ")})`,
    );
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
  /** Set on a fork: the workspace it was copied from. */
  parentWorkspaceId: string | null;
  /** Windmill's workspace color (#rrggbb), if set. */
  color: string | null;
}

/** Workspaces the caller belongs to; a superadmin sees every workspace. */
export async function listWorkspaces(ctx: CoreContext, principal: Principal): Promise<WorkspaceSummary[]> {
  // A superadmin's job token (adminOfScope) sees its own workspace as its user would.
  if (principal.isSuperAdmin || (principal.adminOfScope && principal.workspaceScope)) {
    const all = await ctx.db.workspace.findMany({
      where: { deleted: false, ...(principal.workspaceScope ? { id: principal.workspaceScope } : {}) },
      orderBy: { id: "asc" },
    });
    return all.map((w) => ({
      id: w.id,
      name: w.name,
      role: "admin" as const,
      parentWorkspaceId: w.parentWorkspaceId,
      color: w.color,
    }));
  }
  const memberships = await ctx.db.workspaceMember.findMany({
    where: {
      userId: principal.userId,
      disabled: false,
      workspace: { deleted: false, id: { not: ADMINS_WORKSPACE } },
      ...(principal.workspaceScope ? { workspaceId: principal.workspaceScope } : {}),
    },
    include: { workspace: true },
    orderBy: { workspaceId: "asc" },
  });
  return memberships.map((m) => ({
    id: m.workspace.id,
    name: m.workspace.name,
    role: m.role,
    parentWorkspaceId: m.workspace.parentWorkspaceId,
    color: m.workspace.color,
  }));
}

/**
 * Whether a workspace id is taken (Windmill's `workspaces/exists`, which `wmill workspace add`
 * asks before adding or creating a workspace). An id is taken whatever the caller's access to
 * it, as `workspaces/create` answers 409 for it anyway; a deleted workspace still holds its id.
 * A credential limited to one workspace learns only about that one.
 */
export async function workspaceExists(ctx: CoreContext, principal: Principal, id: string): Promise<boolean> {
  if (principal.workspaceScope && principal.workspaceScope !== id) return false;
  const found = await ctx.db.workspace.findUnique({ where: { id }, select: { id: true } });
  return found !== null;
}
