import { randomUUID } from "node:crypto";
import { withTransaction, type Pool } from "@millrace/db";
import type { Language } from "@millrace/runtime";
import { ensureQueue, type Boss } from "./boss.ts";

export const JOB_QUEUED_CHANNEL = "millrace_job_queued";

export type JobKind = "script" | "preview";

export interface EnqueueInput {
  workspaceId: string;
  kind: JobKind;
  scriptPath: string | null;
  scriptHash: string | null;
  language: Language;
  content: string;
  args: Record<string, unknown>;
  argOrder: string[];
  /** Already resolved (no `$workspace` / `$args[…]` left). */
  tag: string;
  priority: number;
  scheduledFor: Date | null;
  timeoutSecs: number;
  createdBy: string;
  permissionedAs: string;
}

/**
 * Writes our job row and the pg-boss job that dispatches it in one transaction, then wakes the
 * workers serving the tag (NOTIFY is delivered on commit, so no worker can see the wake-up before
 * the job exists). Both rows share one id.
 */
export async function enqueueJob(pool: Pool, boss: Boss, input: EnqueueInput): Promise<string> {
  await ensureQueue(boss, input.tag);
  const id = randomUUID();
  const scheduledFor = input.scheduledFor ?? new Date();
  await withTransaction(pool, async (client) => {
    await client.query(
      `INSERT INTO job (id, workspace_id, kind, script_path, script_hash, language, content, args, tag,
         priority, created_by, permissioned_as, scheduled_for, timeout_secs, boss_job_id, arg_order)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$1,$15)`,
      [
        id,
        input.workspaceId,
        input.kind,
        input.scriptPath,
        input.scriptHash,
        input.language,
        input.content,
        JSON.stringify(input.args),
        input.tag,
        input.priority,
        input.createdBy,
        input.permissionedAs,
        scheduledFor,
        input.timeoutSecs,
        input.argOrder,
      ],
    );
    await boss.send(
      input.tag,
      { jobId: id },
      {
        id,
        priority: input.priority,
        startAfter: scheduledFor,
        // Millrace handles retries and dead workers itself (zombie monitor); pg-boss must never
        // hand a running job to a second worker, so its expiry sits beyond the job's own timeout.
        retryLimit: 0,
        expireInSeconds: input.timeoutSecs + 300,
        db: { executeSql: (text, values) => client.query(text, values) },
      },
    );
    await client.query("SELECT pg_notify($1, $2)", [JOB_QUEUED_CHANNEL, input.tag]);
  });
  return id;
}
