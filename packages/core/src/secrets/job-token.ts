import { randomBytes } from "node:crypto";
import type { Pool, PoolClient } from "@millrace/db";
import { hashToken } from "../auth/tokens.ts";

/** A job token outlives the job's own timeout by this much (queue-to-start slack, clock skew). */
export const JOB_TOKEN_MARGIN_SECS = 120;

/** Jobs that run user code and so get a WM_TOKEN (noop and dependency jobs call nothing back). */
export const JOB_TOKEN_KINDS = ["script", "preview", "init_script", "periodic_script"] as const;

export interface IssuedJobToken {
  /** What the job gets as WM_TOKEN; never stored. */
  token: string;
  hash: string;
  prefix: string;
}

export function newJobToken(): IssuedJobToken {
  return newJobTokens(1)[0]!;
}

/** `count` fresh job tokens, from one read of the random source (a claim takes up to hundreds). */
export function newJobTokens(count: number): IssuedJobToken[] {
  const random = randomBytes(24 * count);
  return Array.from({ length: count }, (_, i) => {
    const token = `jt_${random.subarray(24 * i, 24 * (i + 1)).toString("base64url")}`;
    return { token, hash: hashToken(token), prefix: token.slice(0, 10) };
  });
}

/**
 * SQL of a data-modifying CTE issuing the WM_TOKEN of each job of `claimed` (a CTE with the job
 * columns `id`, `kind`, `workspace_id`, `permissioned_as`, `timeout_secs`) that runs user code
 * as a user: an `api_token` of kind `job`, scoped to the job's workspace, acting as the user the
 * job is permissioned as, expiring shortly after the job's timeout. `token.hash` and
 * `token.prefix` are SQL expressions over `c`, the row of `claimed`, giving the token made for
 * that job (a lookup by position, not a join: with a CTE's unknown size the planner would pick
 * a nested loop, quadratic in the batch). A job that does not run as an enabled user (e.g. started with SUPERADMIN_SECRET) gets none rather than borrowed
 * rights. Issued in the claim statement itself: one round trip less per job. Returns the `job_id` of
 * each job that got a token (the label format stays in this module).
 */
export function issueJobTokensSql(claimed: string, token: { hash: string; prefix: string }): string {
  return `INSERT INTO api_token (id, token_hash, token_prefix, label, kind, user_id, workspace_id, expires_at, created_at)
    SELECT gen_random_uuid(), ${token.hash}, ${token.prefix}, 'job ' || c.id, 'job', u.id, c.workspace_id,
           now() + make_interval(secs => c.timeout_secs + ${JOB_TOKEN_MARGIN_SECS}), now()
      FROM ${claimed} c
      JOIN "user" u ON u.username = substr(c.permissioned_as, 3) AND NOT u.disabled
     WHERE c.permissioned_as LIKE 'u/%'
       AND c.kind IN (${JOB_TOKEN_KINDS.map((kind) => `'${kind}'`).join(", ")})
    RETURNING substr(label, 5)::uuid AS job_id`;
}

/**
 * Ends job tokens as soon as their jobs are over (completion, release, requeue); expiry is only
 * the backstop (a dead worker's job tokens expire, and retention's deleteExpiredTokens drops them).
 */
export async function revokeJobTokens(client: Pool | PoolClient, tokens: (string | null)[]): Promise<void> {
  const hashes = tokens.filter((token): token is string => !!token).map(hashToken);
  if (hashes.length === 0) return;
  await client.query("DELETE FROM api_token WHERE token_hash = ANY($1) AND kind = 'job'", [hashes]);
}

/** Ends the tokens issued to a job whose worker is gone (zombie or abandoned job), by its label. */
export async function revokeTokensOfJob(client: Pool | PoolClient, jobId: string): Promise<void> {
  await client.query("DELETE FROM api_token WHERE kind = 'job' AND label = $1", [`job ${jobId}`]);
}
