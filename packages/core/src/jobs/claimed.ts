// A claimed job as a worker receives it, and the columns and lock every claim reads: shared by the
// claim (claim.ts) and by the enqueue that writes a flow's next step already claimed (enqueue.ts),
// which claim.ts itself calls to put jobs back in the queue.
import type { Language } from "@millrace/runtime";
import type { JobKind, RetryPolicy } from "./job-input.ts";

/** What a worker needs to run a claimed job: ids, code and limits, no user rows. */
export interface ClaimedJob {
  id: string;
  /** The pg-boss job this claim came from; completion only counts for it. */
  bossJobId: string;
  workspaceId: string;
  kind: JobKind;
  scriptPath: string | null;
  scriptHash: string | null;
  /** The script version's dependency lock (null: none, or not computed when enqueued). */
  lock: string | null;
  language: Language;
  content: string;
  args: Record<string, unknown>;
  argOrder: string[];
  tag: string;
  priority: number;
  timeoutSecs: number;
  memoryLimitMb: number | null;
  retry: RetryPolicy | null;
  retryAttempt: number;
  permissionedAs: string;
  createdBy: string;
  workerName: string;
  /**
   * The job's WM_TOKEN, issued with its claim (null: the job runs no user code, or not as a user).
   * Revoked when the job completes or goes back to the queue.
   */
  callbackToken: string | null;
  /** A flow step: its flow job, whose engine the step's completion advances (flows/engine). */
  parentJobId: string | null;
  /** When the job was due: its wait in the queue ends at the claim (millrace_job_queue_wait_seconds). */
  scheduledFor: Date | null;
}

export const CLAIMED_COLUMN_NAMES = [
  "id",
  "boss_job_id",
  "workspace_id",
  "kind",
  "script_path",
  "language",
  "content",
  "args",
  "arg_order",
  "tag",
  "priority",
  "timeout_secs",
  "memory_limit_mb",
  "retry",
  "retry_attempt",
  "permissioned_as",
  "created_by",
  "worker_name",
  "script_hash",
  "lock",
  "parent_job_id",
  "scheduled_for_ms",
];

/**
 * Columns read as an expression of the job row. The due time comes as epoch milliseconds, a
 * float: node-postgres parses a timestamp with a regular expression and time zone arithmetic,
 * ~3 % of a worker's main thread per claimed job in a no-op drain, and the worker only subtracts
 * it from the clock.
 */
const CLAIMED_EXPRESSIONS: Record<string, (row: string) => string> = {
  scheduled_for_ms: (row) => `(extract(epoch FROM ${row}scheduled_for) * 1000)::float8`,
};

/** The claimed columns of the job row `alias` (none: the row being written, as in RETURNING). */
export function claimedColumns(alias?: string): string[] {
  const row = alias ? `${alias}.` : "";
  return CLAIMED_COLUMN_NAMES.map((column) => {
    const expression = CLAIMED_EXPRESSIONS[column];
    return expression ? `${expression(row)} AS ${column}` : `${row}${column}`;
  });
}

export const CLAIMED_COLUMNS = claimedColumns().join(", ");

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function toClaimed(row: any, callbackToken: string | null): ClaimedJob {
  return {
    id: row.id,
    bossJobId: row.boss_job_id,
    workspaceId: row.workspace_id,
    kind: row.kind,
    scriptPath: row.script_path,
    scriptHash: row.script_hash,
    lock: row.lock,
    language: row.language,
    content: row.content ?? "",
    args: row.args ?? {},
    argOrder: row.arg_order ?? [],
    tag: row.tag,
    priority: row.priority,
    timeoutSecs: row.timeout_secs,
    memoryLimitMb: row.memory_limit_mb,
    retry: row.retry,
    retryAttempt: row.retry_attempt,
    permissionedAs: row.permissioned_as,
    createdBy: row.created_by,
    workerName: row.worker_name,
    callbackToken,
    parentJobId: row.parent_job_id ?? null,
    scheduledFor: row.scheduled_for_ms === null ? null : new Date(row.scheduled_for_ms),
  };
}

/**
 * The advisory lock `millrace backup restore` holds, exclusively, while nothing may be claimed (it
 * is replacing the database): every claim first takes it shared, or claims nothing. The CLI has
 * its own copy (apps/cli/src/backup/restore.ts), to start without this package.
 */
export const CLAIM_PAUSE_LOCK_SQL = "hashtext('millrace-claim-pause')";
