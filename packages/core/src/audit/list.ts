import type { Prisma } from "@millrace/db";
import { ownRowsOnly } from "../access.ts";
import type { CoreContext } from "../context.ts";
import { invalidInput, notFound } from "../errors.ts";
import { can, requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";

export type ActionKind = "Created" | "Updated" | "Delete" | "Execute";

/**
 * The rows a member sees: the workspace's (admins) or their own in it, and their own instance
 * rows (sign-ins, tokens). A caller bounded by other users (a job's token) sees what each of them
 * would (see ownRowsOnly).
 */
function visibleRows(membership: Membership): Prisma.AuditLogWhereInput[] {
  const inWorkspace = ownRowsOnly(membership, (role) => can(role, "audit.read_all"));
  const instance = ownRowsOnly(membership, () => false)!;
  return [
    { workspaceId: membership.workspace.id, ...(inWorkspace ? { actor: inWorkspace.username } : {}) },
    { workspaceId: null, actor: instance.username },
  ];
}

export interface AuditRow {
  id: number;
  workspaceId: string | null;
  at: Date;
  username: string;
  operation: string;
  actionKind: ActionKind;
  resource: string | null;
  parameters: unknown;
  ip: string | null;
}

/** Windmill's action kinds, from the operation's last word. */
export function actionKind(operation: string): ActionKind {
  const verb = operation.split(".").slice(1).join(".");
  if (operation.startsWith("jobs.run") || /login|decrypt|logout/.test(verb)) return "Execute";
  if (/^(create|add|add_global|add_to_workspace|adduser|add_owner|token\.create)/.test(verb))
    return "Created";
  if (/^(delete|remove|removeuser|remove_owner|archive|token\.delete)/.test(verb)) return "Delete";
  return "Updated";
}

export interface AuditListInput {
  page?: number;
  perPage?: number;
  /** Inclusive. */
  before?: Date;
  /** Exclusive. */
  after?: Date;
  username?: string;
  /** Exact operation or a prefix of one (`folder.` matches every folder operation). */
  operation?: string;
  operations?: string[];
  excludeOperations?: string[];
  /** Exact resource or a prefix of one. */
  resource?: string;
  actionKind?: ActionKind;
  /** Superadmins only: rows of every workspace and of the instance. */
  allWorkspaces?: boolean;
}

export const DEFAULT_AUDIT_PER_PAGE = 30;
export const MAX_AUDIT_PER_PAGE = 100;

/**
 * The audit rows the caller may see, newest first. Admins see every row of the workspace; other
 * members only their own. Everybody also sees their own instance-level rows (sign-ins, tokens);
 * superadmins can ask for every row of the instance.
 */
export async function listAudit(
  ctx: CoreContext,
  membership: Membership,
  input: AuditListInput = {},
): Promise<AuditRow[]> {
  requirePermission(membership, "audit.read");
  const perPage = input.perPage ?? DEFAULT_AUDIT_PER_PAGE;
  const page = input.page ?? 1;
  if (!Number.isInteger(page) || page < 1) throw invalidInput("page", "must be at least 1");
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_AUDIT_PER_PAGE) {
    throw invalidInput("per_page", `must be between 1 and ${MAX_AUDIT_PER_PAGE}`);
  }
  if (input.allWorkspaces && !membership.principal.isSuperAdmin) {
    throw invalidInput("all_workspaces", "only superadmins may read every workspace's audit log");
  }
  const and: Prisma.AuditLogWhereInput[] = [];
  if (!input.allWorkspaces) and.push({ OR: visibleRows(membership) });
  if (input.username) and.push({ actor: input.username });
  if (input.operation) and.push({ operation: { startsWith: input.operation } });
  if (input.operations?.length) and.push({ operation: { in: input.operations } });
  if (input.excludeOperations?.length) and.push({ operation: { notIn: input.excludeOperations } });
  if (input.resource) and.push({ resource: { startsWith: input.resource } });
  if (input.before) and.push({ at: { lte: input.before } });
  if (input.after) and.push({ at: { gt: input.after } });
  // action_kind is derived from the operation, so it filters after the page is read; pages stay
  // bounded because callers filter by it only on top of the other filters.
  const rows = await ctx.db.auditLog.findMany({
    where: { AND: and },
    orderBy: { id: "desc" },
    skip: input.actionKind ? 0 : (page - 1) * perPage,
    take: input.actionKind ? MAX_AUDIT_PER_PAGE * 10 : perPage,
  });
  const views = rows.map(auditView);
  if (!input.actionKind) return views;
  return views
    .filter((row) => row.actionKind === input.actionKind)
    .slice((page - 1) * perPage, page * perPage);
}

function auditView(row: {
  id: bigint;
  workspaceId: string | null;
  at: Date;
  actor: string;
  operation: string;
  resource: string | null;
  parameters: unknown;
  ip: string | null;
}): AuditRow {
  return {
    id: Number(row.id),
    workspaceId: row.workspaceId,
    at: row.at,
    username: row.actor,
    operation: row.operation,
    actionKind: actionKind(row.operation),
    resource: row.resource,
    parameters: row.parameters,
    ip: row.ip,
  };
}

export async function getAudit(ctx: CoreContext, membership: Membership, id: number): Promise<AuditRow> {
  requirePermission(membership, "audit.read");
  if (!Number.isSafeInteger(id) || id < 1) throw notFound(`audit log ${id}`);
  const row = await ctx.db.auditLog.findFirst({
    where: {
      id: BigInt(id),
      OR: visibleRows(membership),
    },
  });
  if (!row) throw notFound(`audit log ${id}`);
  return auditView(row);
}

/**
 * Deletes audit rows older than the retention period in small batches, so that the log's own
 * inserts never wait long behind it. Returns how many it deleted.
 */
export async function deleteExpiredAudit(
  ctx: Pick<CoreContext, "pool">,
  options: { retentionDays: number; batchSize?: number; pauseMs?: number; signal?: AbortSignal },
): Promise<number> {
  const { retentionDays, batchSize = 1000, pauseMs = 50, signal } = options;
  if (!Number.isFinite(retentionDays) || retentionDays <= 0) {
    throw new RangeError(`retentionDays must be a positive number, got ${retentionDays}`);
  }
  let deleted = 0;
  while (!signal?.aborted) {
    const { rowCount } = await ctx.pool.query(
      `DELETE FROM audit_log WHERE id IN (
         SELECT id FROM audit_log WHERE at < (now() AT TIME ZONE 'UTC') - make_interval(days => $1)
          ORDER BY at LIMIT $2)`,
      [Math.floor(retentionDays), batchSize],
    );
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < batchSize) break;
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  return deleted;
}
