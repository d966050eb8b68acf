import { prepared, type Pool } from "@millrace/db";
import { actorName, type Principal } from "../auth/principal.ts";

export interface AuditEntry {
  /** Null for instance-level events (sign-in, settings, worker groups). */
  workspaceId: string | null;
  operation: string;
  /** What was acted on: a path, a job id, a user, … */
  resource?: string | null;
  parameters?: unknown;
  /** The caller's address, when the change came over HTTP. */
  ip?: string | null;
}

/** The columns of one audit row (`at` aside), as `recordAudit` writes them. */
export function auditRow(actor: Principal | string, entry: AuditEntry) {
  return {
    workspace_id: entry.workspaceId,
    actor: typeof actor === "string" ? actor : actorName(actor),
    operation: entry.operation,
    resource: entry.resource ?? null,
    parameters: entry.parameters === undefined ? null : entry.parameters,
    ip: entry.ip ?? (typeof actor === "string" ? null : (actor.ip ?? null)),
  };
}

/**
 * One audit row. Pass the transaction's client so the row commits (or rolls back) with the change
 * it records. Parameters must never carry secret values.
 */
export async function recordAudit(
  client: { query: Pool["query"] },
  actor: Principal | string,
  entry: AuditEntry,
): Promise<void> {
  const row = auditRow(actor, entry);
  await client.query(
    prepared(
      `INSERT INTO audit_log (workspace_id, actor, operation, resource, parameters, ip, at)
       VALUES ($1, $2, $3, $4, $5, $6, now() AT TIME ZONE 'UTC')`,
      [
        row.workspace_id,
        row.actor,
        row.operation,
        row.resource,
        row.parameters === null ? null : JSON.stringify(row.parameters),
        row.ip,
      ],
    ),
  );
}
export {
  actionKind,
  deleteExpiredAudit,
  getAudit,
  listAudit,
  DEFAULT_AUDIT_PER_PAGE,
  MAX_AUDIT_PER_PAGE,
  type ActionKind,
  type AuditListInput,
  type AuditRow,
} from "./list.ts";
