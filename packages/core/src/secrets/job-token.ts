import type { Pool, PoolClient } from "@millrace/db";
import { hashToken, hashTokenSql } from "../auth/tokens.ts";

/** A job token outlives the job's own timeout by this much (queue-to-start slack, clock skew). */
export const JOB_TOKEN_MARGIN_SECS = 120;

/** Jobs that run user code and so get a WM_TOKEN (noop and dependency jobs call nothing back; flowscript: a flow's inline step). */
export const JOB_TOKEN_KINDS = ["script", "preview", "flowscript", "init_script", "periodic_script"] as const;

/**
 * SQL of two CTEs issuing the WM_TOKEN of each job of `claimed` (a CTE with the job columns `id`,
 * `kind`, `workspace_id`, `script_hash`, `permissioned_as`, `timeout_secs`) that runs user code as
 * a user: an `api_token` of kind `job`, scoped to the job's workspace, acting as the user the job
 * is permissioned as within the rights of the users bounding the job (jobBoundsSql: the deployer
 * of its code…), expiring shortly after the job's timeout. A job that does not run as an
 * enabled user (e.g. started with SUPERADMIN_SECRET) gets none rather than borrowed rights.
 *
 * `job_token` yields `job_id` and `token` (the plain token, for the worker to hand to the job;
 * only its hash is stored), `job_token_issued` stores them. The tokens are made here rather than
 * in the worker so that only the jobs that get one pay for it (a claim of hundreds of no-op jobs
 * made and sent hundreds before): 244 random bits from two `gen_random_uuid()`, which reads
 * PostgreSQL's strong random source. `job_token` is MATERIALIZED so that the token returned is
 * the one stored. Issued in the claim statement itself: one round trip less per job.
 * `boundsOfClaimed`: `claimed` also has the jobs' `bounded_by`, to be read from it (its rows are
 * written by the same statement, and a read of the job table there would not see them).
 */
export function issueJobTokensSql(claimed: string, options: { boundsOfClaimed?: boolean } = {}): string {
  return `job_token AS MATERIALIZED (
       SELECT c.id AS job_id, c.workspace_id, c.timeout_secs, u.id AS user_id,
              ${jobBoundsSql("c", "u.username", options.boundsOfClaimed ? "c.bounded_by" : undefined)} AS bounded_by,
              'jt_' || replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '') AS token
         FROM ${claimed} c
         JOIN "user" u ON u.username = substr(c.permissioned_as, 3) AND NOT u.disabled
        WHERE c.permissioned_as LIKE 'u/%'
          AND c.kind IN (${JOB_TOKEN_KINDS.map((kind) => `'${kind}'`).join(", ")})
     ), job_token_issued AS (
       INSERT INTO api_token (id, token_hash, token_prefix, label, kind, user_id, workspace_id, bounded_by,
         expires_at, created_at)
       SELECT gen_random_uuid(), ${hashTokenSql("t.token")}, left(t.token, 10),
              'job ' || t.job_id, 'job', t.user_id, t.workspace_id, t.bounded_by,
              now() + make_interval(secs => t.timeout_secs + ${JOB_TOKEN_MARGIN_SECS}), now()
         FROM job_token t
     )`;
}

/**
 * SQL of the usernames bounding the rights of the job `job` (an alias with the job's `id`,
 * `workspace_id` and `script_hash`) other than `runner`: the job's `bounded_by` (set at enqueue)
 * and, whatever enqueued the job, the deployer of the script version it runs. A job's token and
 * its `$var:`/`$res:` arguments act with the intersection of their rights and the runner's.
 * `boundedBy`: SQL of the job's `bounded_by` array, when it is at hand (else read from its row).
 */
export function jobBoundsSql(job: string, runner: string, boundedBy?: string): string {
  const own = boundedBy
    ? `SELECT unnest(${boundedBy}) AS name`
    : `SELECT unnest(bj.bounded_by) AS name FROM job bj WHERE bj.id = ${job}.id`;
  return `ARRAY(SELECT b.name FROM (
                ${own}
                UNION SELECT s.created_by FROM script s
                 WHERE s.workspace_id = ${job}.workspace_id AND s.hash = ${job}.script_hash
              ) b WHERE b.name <> ${runner} ORDER BY b.name)`;
}

/** The usernames bounding a job's rights besides the user it runs as (see jobBoundsSql). */
export async function boundsOfJob(client: Pool | PoolClient, jobId: string): Promise<string[]> {
  const { rows } = await client.query<{ bounded_by: string[] }>(
    `SELECT ${jobBoundsSql("j", "substr(j.permissioned_as, 3)")} AS bounded_by FROM job j WHERE j.id = $1`,
    [jobId],
  );
  return rows[0]?.bounded_by ?? [];
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
