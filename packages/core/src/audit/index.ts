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

/**
 * One audit row. Pass the transaction's client so the row commits (or rolls back) with the change
 * it records. Parameters must never carry secret values.
 */
export async function recordAudit(
  client: { query: Pool["query"] },
  actor: Principal | string,
  entry: AuditEntry,
): Promise<void> {
  await client.query(
    prepared(
      `INSERT INTO audit_log (workspace_id, actor, operation, resource, parameters, ip, at)
     VALUES ($1, $2, $3, $4, $5, $6, now() AT TIME ZONE 'UTC')`,
      [
        entry.workspaceId,
        typeof actor === "string" ? actor : actorName(actor),
        entry.operation,
        entry.resource ?? null,
        entry.parameters === undefined ? null : JSON.stringify(entry.parameters),
        entry.ip ?? (typeof actor === "string" ? null : (actor.ip ?? null)),
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
