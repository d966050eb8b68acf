import { randomBytes } from "node:crypto";
import type { Pool } from "@millrace/db";
import { hashToken } from "../auth/tokens.ts";

/** A job token outlives the job's own timeout by this much (queue-to-start slack, clock skew). */
export const JOB_TOKEN_MARGIN_SECS = 120;

export interface JobTokenInput {
  jobId: string;
  workspaceId: string;
  /** `u/<username>`: the job calls back with that user's rights, in its workspace only. */
  permissionedAs: string;
  timeoutSecs: number;
}

/**
 * Creates the WM_TOKEN of one job: an `api_token` of kind `job`, scoped to the job's workspace,
 * acting as the user the job is permissioned as, expiring shortly after the job's timeout. Null
 * when the job does not run as a user (e.g. started with SUPERADMIN_SECRET): such a job gets no
 * token rather than one with borrowed rights.
 */
export async function createJobToken(pool: Pool, input: JobTokenInput): Promise<string | null> {
  const username = /^u\/(.+)$/.exec(input.permissionedAs)?.[1];
  if (!username) return null;
  const token = `jt_${randomBytes(24).toString("base64url")}`;
  const { rowCount } = await pool.query(
    `INSERT INTO api_token (id, token_hash, token_prefix, label, kind, user_id, workspace_id, expires_at, created_at)
     SELECT gen_random_uuid(), $1, $2, $3, 'job', u.id, $4, now() + make_interval(secs => $5), now()
       FROM "user" u
      WHERE u.username = $6 AND NOT u.disabled`,
    [
      hashToken(token),
      token.slice(0, 10),
      `job ${input.jobId}`,
      input.workspaceId,
      input.timeoutSecs + JOB_TOKEN_MARGIN_SECS,
      username,
    ],
  );
  return rowCount ? token : null;
}

/**
 * Ends a job token as soon as its job is over; expiry is only the backstop (a dead worker's job
 * tokens expire, and retention's deleteExpiredTokens drops them).
 */
export async function revokeJobToken(pool: Pool, token: string): Promise<void> {
  await pool.query("DELETE FROM api_token WHERE token_hash = $1 AND kind = 'job'", [hashToken(token)]);
}
