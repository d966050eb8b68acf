import { prepared, withTransaction, type Pool, type PoolClient } from "@millrace/db";
import type { Boss } from "./boss.ts";
import { storableText } from "./storable.ts";
import {
  CLAIMED_COLUMN_NAMES,
  CLAIMED_COLUMNS,
  claimedColumns,
  toClaimed,
  type ClaimedJob,
} from "./claimed.ts";
import { redispatchJob } from "./enqueue.ts";
import { JOB_LOG_CHANNEL, NOTIFY_CHUNKS } from "./events.ts";
import { issueJobTokensSql, revokeJobTokens } from "../secrets/job-token.ts";

export { CLAIM_PAUSE_LOCK_SQL, CLAIMED_COLUMNS, toClaimed, type ClaimedJob } from "./claimed.ts";

/**
 * The tag among `tags` whose next due job should run first (highest priority, then oldest). Our
 * own job table answers this in one indexed query, so a worker serving many tags does not poll
 * every pg-boss queue in turn.
 */
export async function nextDueTag(pool: Pool, tags: readonly string[]): Promise<string | null> {
  const { rows } = await pool.query<{ tag: string }>(
    `SELECT tag FROM job
      WHERE status = 'queued' AND tag = ANY($1) AND scheduled_for <= now()
      ORDER BY priority DESC, scheduled_for, created_at
      LIMIT 1`,
    [tags],
  );
  return rows[0]?.tag ?? null;
}

// A job over its concurrency limit is looked at again this long after it was deferred.
const CONCURRENCY_RECHECK_MS = 250;

// pg-boss's fetch writes its batch size into the statement: `LIMIT <size>` in its `next` CTE.
const FETCH_LIMIT = /\n(\s*)LIMIT (\d+)\n/;

// Claims of up to this many jobs (a worker's few free slots: the latency path) keep their size in
// the statement, one prepared statement per size, whose plan PostgreSQL reuses. With the size as a
// parameter it planned every single-job claim anew (a plan made without the size looks dearer to
// it): 1.0 instead of 0.45 ms a claim beside 72,000 queued jobs.
const PREPARED_CLAIM_MAX = 16;

/**
 * pg-boss's fetch with its batch size as parameter `$param` instead of a constant, so that one
 * prepared statement serves the larger claims of every size (a worker of 400 slots claims anything
 * up to 400 jobs): parsed once per connection rather than at every claim, which cost PostgreSQL
 * about 3 of the ~20 µs per job of a claim of 400. Fails loudly should a pg-boss upgrade change
 * the statement's shape.
 */
function parameterizedLimit(fetchSql: string, param: number): string {
  const limit = FETCH_LIMIT.exec(fetchSql);
  if (!limit || FETCH_LIMIT.test(fetchSql.slice(limit.index + 1))) {
    throw new Error("pg-boss's fetch statement changed: cannot make its batch size a parameter");
  }
  return fetchSql.replace(FETCH_LIMIT, () => `\n${limit[1]}LIMIT $${param}::int\n`);
}

// pg-boss's fetch: `UPDATE <queue table> j SET … FROM next WHERE … AND j.id = next.id RETURNING …`.
const FETCH_UPDATE = /\bUPDATE (\S+) j SET\n([\s\S]*?)\n(\s*)FROM next\n/;
const FETCH_MATCH = /\bAND j\.id = next\.id\b/;

/**
 * pg-boss's fetch, changed to delete the pg-boss jobs it takes instead of marking them active.
 * A pg-boss job is only the dispatch of one of our jobs, and it is used up by the claim: from
 * then on our job row tracks the job, a worker that dies is noticed by its missing pings (the
 * zombie monitor re-dispatches the job with a new pg-boss job), and a completion only counts for
 * the claimed dispatch (`boss_job_id`). Nothing reads a used dispatch again: the orphan repair
 * treats a missing pg-boss job as one that is no longer claimable, as it did a completed one.
 * Deleting it writes no new row version and no index entries, where marking it active (and
 * completing it later) wrote two: the claim costs ~10 % less, and pg-boss's tables do not fill
 * with used dispatches. Fails loudly should a pg-boss upgrade change the statement's shape.
 *
 * The fetched ids are matched as one array (`j.id = ANY (ARRAY(SELECT id FROM next))`, as
 * pg-boss's own fetch does with group concurrency), not joined. A tag's queue table that
 * (auto)vacuum found drained has statistics of no rows; a claim planned then joined the 400
 * fetched ids against every queued job of the tag (a nested loop over a scan of the queue), and
 * kept that plan: a 5,000-job burst after such a VACUUM was claimed at ~160 µs of PostgreSQL's
 * CPU per job instead of ~17, 6,000 instead of 30,000 jobs/s, until the next ANALYZE. An array
 * of ids is an index condition on the queue's primary key whatever the statistics say.
 */
function consumingFetch(fetchSql: string): string {
  const update = FETCH_UPDATE.exec(fetchSql);
  if (
    !update ||
    !/\bstate = 'active',/.test(update[2]!) ||
    FETCH_UPDATE.test(fetchSql.slice(update.index + 1))
  ) {
    throw new Error("pg-boss's fetch statement changed: cannot make it consume the jobs it takes");
  }
  const [, table] = update;
  const rest = fetchSql.slice(update.index + update[0].length);
  const match = FETCH_MATCH.exec(rest);
  if (!match || FETCH_MATCH.test(rest.slice(match.index + 1)))
    throw new Error("pg-boss's fetch statement changed: cannot match the jobs it takes by id");
  return (
    fetchSql.slice(0, update.index) +
    `DELETE FROM ${table} j\n` +
    rest.replace(FETCH_MATCH, "AND j.id = ANY (ARRAY(SELECT id FROM next))")
  );
}

/**
 * The claim statement: pg-boss's own fetch statement (`fetchSql`, whose parameters are $1..$`p`)
 * as its first CTE, then our rows of the fetched jobs marked running (one worker name per job,
 * a JSON array in `$p+1`), and their WM_TOKENs issued; with `sizeParameter`, `$p+2` is the
 * batch size (see parameterizedLimit). One statement: fetching the dispatch and starting the job
 * are atomic, in one round trip.
 *
 * It returns three kinds of rows: one per job started here (`claimed_n`, its position among the
 * fetched jobs, and the job's columns), one per token issued (`token_job_id`, `token`), and one
 * per fetched pg-boss job that was not started here (`fetched_*`: it has a concurrency limit, or
 * was canceled or re-dispatched meanwhile). Those are found with NOT IN, which PostgreSQL answers
 * from a hash of the started positions; joining the fetched and the started jobs instead made the
 * planner, which cannot size CTEs, use nested loops (400 jobs took 160,000 comparisons, half the
 * statement's time), and returning every fetched job made the worker read twice the rows it
 * needs. The job's columns come as columns rather than one JSON object per row: building and
 * parsing that JSON was a fifth of the statement's cost.
 *
 * The status is compared with IS NOT DISTINCT FROM, which no index can serve, so that the UPDATE
 * looks each row up by primary key: the planner sizes the CTE at one row, and with statistics
 * taken while nothing was queued it scanned every queued job through the queue index once per
 * claimed job (5,000 x 400 rows, 450 ms instead of 10).
 */
// Flow runs are advanced by the flow engine, never run by a worker: a dispatch that names one (a
// restore or repair gone wrong) is consumed without starting it, and the flow keeps its state.
const ENGINE_KINDS = "('flow', 'flowpreview')";

function claimStatement(fetchSql: string, p: number, sizeParameter: boolean): string {
  const columns = claimedColumns("job");
  const nulls = (count: number) => Array<string>(count).fill("NULL").join(", ");
  const fetch = sizeParameter ? parameterizedLimit(fetchSql, p + 2) : fetchSql;
  return `WITH fetched AS (${consumingFetch(fetch)}
     ), numbered AS (
       SELECT f.id AS boss_job_id, (f.data->>'jobId')::uuid AS job_id, row_number() OVER () AS n
         FROM fetched f
     ), claimed AS (
       UPDATE job SET status = 'running', started_at = now(), worker_name = $${p + 1}::jsonb ->> (c.n - 1)::int
         FROM numbered c
        WHERE job.id = c.job_id AND job.boss_job_id = c.boss_job_id AND job.status IS NOT DISTINCT FROM 'queued'
          AND job.concurrency_key IS NULL AND job.kind NOT IN ${ENGINE_KINDS}
        RETURNING c.n AS claimed_n, ${columns.join(", ")}
     ), ${issueJobTokensSql("claimed")}
     SELECT n AS fetched_n, job_id AS fetched_job_id, boss_job_id AS fetched_boss_job_id,
            NULL::bigint AS claimed_n, ${CLAIMED_COLUMN_NAMES.map((column) => `NULL AS ${column}`).join(", ")},
            NULL::uuid AS token_job_id, NULL::text AS token
       FROM numbered WHERE n NOT IN (SELECT claimed_n FROM claimed)
     UNION ALL
     SELECT NULL, NULL, NULL, claimed.*, NULL, NULL FROM claimed
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, ${nulls(CLAIMED_COLUMN_NAMES.length)}, job_id, token FROM job_token`;
}

// The claim statements built so far, by pg-boss's fetch text (one per tag's queue and claim size
// up to PREPARED_CLAIM_MAX): building one, regular expressions over pg-boss's text included, took
// ~0.2 ms of the worker's CPU per claim in its profile, and every claim built it again.
const claimStatements = new Map<string, string>();
const MAX_CACHED_CLAIM_STATEMENTS = 2000;

function cachedClaimStatement(fetchSql: string, p: number, sizeParameter: boolean): string {
  const key = `${p}:${sizeParameter}:${fetchSql}`;
  let statement = claimStatements.get(key);
  if (statement === undefined) {
    if (claimStatements.size >= MAX_CACHED_CLAIM_STATEMENTS) claimStatements.clear();
    statement = claimStatement(fetchSql, p, sizeParameter);
    claimStatements.set(key, statement);
  }
  return statement;
}

/**
 * Claims up to `workerNames.length` jobs of `tag` through pg-boss and marks our rows running, one
 * worker name per job. `claimPool` may use asynchronous commit: a claim acknowledges nothing to
 * anyone, and one lost in a database crash only means the job runs again (zombie and orphan
 * repair), whereas completions, which carry results, always commit synchronously. Jobs canceled
 * in between are skipped; jobs over their concurrency limit are deferred
 * (re-dispatched a little later), never failed.
 */
export async function claimJobs(
  pool: Pool,
  boss: Boss,
  tag: string,
  workerNames: readonly string[],
  claimPool: Pool = pool,
): Promise<ClaimedJob[]> {
  if (workerNames.length === 0) return [];
  // pg-boss builds its fetch (its queue's table and policy) and hands it to this executor, which
  // runs it inside our claim statement. (No NOTIFY per started job: at thousands of jobs a second
  // it costs more than run pages gain.)
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let rows: any[] = [];
  await boss.fetch<{ jobId: string }>(tag, {
    batchSize: workerNames.length,
    db: {
      executeSql: async (text, values = []) => {
        const sizeParameter = workerNames.length > PREPARED_CLAIM_MAX;
        const statement = cachedClaimStatement(text, values.length, sizeParameter);
        // The names as JSON: node-postgres escapes an array parameter element by element in
        // JavaScript, JSON.stringify is native.
        const names = JSON.stringify(workerNames);
        const result = await claimPool.query(
          prepared(statement, sizeParameter ? [...values, names, workerNames.length] : [...values, names]),
        );
        rows = result.rows;
        return result;
      },
    },
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const started: any[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const unstarted: any[] = [];
  const tokens = new Map<string, string>();
  for (const row of rows) {
    if (row.claimed_n !== null) started.push(row);
    else if (row.token_job_id !== null) tokens.set(row.token_job_id, row.token);
    else unstarted.push(row);
  }
  // In the order pg-boss fetched them (priority, then age).
  started.sort((a, b) => Number(a.claimed_n) - Number(b.claimed_n));
  const claimed = started.map((row) => toClaimed(row, tokens.get(row.id) ?? null));
  // A fetched job that was not started here (canceled, re-dispatched or deleted meanwhile, or over
  // its concurrency limit) needs nothing more from pg-boss: the fetch already consumed its job.
  for (const row of unstarted) {
    const position = Number(row.fetched_n) - 1;
    const claim = {
      jobId: row.fetched_job_id,
      bossJobId: row.fetched_boss_job_id,
      name: workerNames[position]!,
    };
    const limited = await claimLimited(pool, boss, tag, claim);
    if (limited) claimed.push(limited);
  }
  return claimed;
}

/**
 * Puts jobs a worker claimed ahead but did not start back in the queue (the worker is stopping,
 * or the slot it expected did not free in time), so that any worker can run them. Only the
 * claimed dispatch is released: a job canceled or restarted meanwhile is left alone.
 */
export async function releaseClaimedJobs(
  pool: Pool,
  boss: Boss,
  jobs: Pick<ClaimedJob, "id" | "bossJobId" | "tag" | "priority" | "timeoutSecs" | "callbackToken">[],
): Promise<void> {
  for (const job of jobs) {
    await withTransaction(pool, async (client) => {
      // Its next claim issues a new token; this one must not outlive the claim it came with.
      await revokeJobTokens(client, [job.callbackToken]);
      // Status with IS NOT DISTINCT FROM: the row is found by primary key (see claimStatement).
      const { rows } = await client.query<{ scheduled_for: Date }>(
        `SELECT scheduled_for FROM job
          WHERE id = $1 AND boss_job_id = $2 AND status IS NOT DISTINCT FROM 'running' AND canceled_by IS NULL FOR UPDATE`,
        [job.id, job.bossJobId],
      );
      if (!rows[0]) return;
      // Due at its original time: it keeps its place among deferred jobs.
      await redispatchJob(client, boss, job, rows[0].scheduled_for);
    });
  }
}

/**
 * Claims one job that has a concurrency limit: under an advisory lock on its key, counts the
 * jobs of that key running or started within the window, then runs it or defers it.
 */
async function claimLimited(
  pool: Pool,
  boss: Boss,
  tag: string,
  claim: { jobId: string; bossJobId: string; name: string },
): Promise<ClaimedJob | null> {
  return withTransaction(pool, async (client) => {
    // Status with IS NOT DISTINCT FROM: the row is found by primary key (see claimStatement).
    const { rows } = await client.query(
      `SELECT id, tag, priority, timeout_secs, concurrency_key, concurrent_limit, concurrency_time_window_s
         FROM job WHERE id = $1 AND boss_job_id = $2 AND status IS NOT DISTINCT FROM 'queued'
          AND kind NOT IN ${ENGINE_KINDS} FOR UPDATE`,
      [claim.jobId, claim.bossJobId],
    );
    const job = rows[0];
    if (!job || !job.concurrency_key) return null;
    await client.query("SELECT pg_advisory_xact_lock(hashtext('millrace-concurrency'), hashtext($1))", [
      job.concurrency_key,
    ]);
    const window = job.concurrency_time_window_s ?? 0;
    const { rows: counted } = await client.query<{ count: number; next_free: Date | null }>(
      `SELECT count(*)::int AS count,
              min(started_at) + make_interval(secs => $3) AS next_free
         FROM job
        WHERE concurrency_key = $1 AND id <> $2
          AND (status = 'running' OR ($3 > 0 AND started_at > now() - make_interval(secs => $3)))`,
      [job.concurrency_key, job.id, window],
    );
    const { count = 0, next_free } = counted[0] ?? {};
    if (count < job.concurrent_limit) {
      const { rows: running } = await client.query(
        `WITH claimed AS (
           UPDATE job SET status = 'running', started_at = now(), worker_name = $2 WHERE id = $1
            RETURNING ${CLAIMED_COLUMNS}
         ), ${issueJobTokensSql("claimed")}
         SELECT claimed.*, job_token.token FROM claimed LEFT JOIN job_token ON job_token.job_id = claimed.id`,
        [job.id, claim.name],
      );
      return toClaimed(running[0], running[0].token);
    }
    const soonest = Date.now() + CONCURRENCY_RECHECK_MS;
    const startAfter = new Date(window > 0 && next_free ? Math.max(soonest, next_free.getTime()) : soonest);
    await redispatchJob(
      client,
      boss,
      { id: job.id, tag, priority: job.priority, timeoutSecs: job.timeout_secs },
      startAfter,
    );
    return null;
  });
}

/** Logs stop growing past this size; a note says so (the worker's output cap comes first). */
export const MAX_JOB_LOG_CHARS = 4_000_000;
const LOG_CAP_NOTE = `\n[millrace] log capped at ${MAX_JOB_LOG_CHARS / 1_000_000} MB; further output was dropped\n`;

/** SQL appending `EXCLUDED.logs` to `job_log.logs` up to the cap (the note is added once). */
export const CAPPED_APPEND = `CASE
    WHEN length(job_log.logs) >= ${MAX_JOB_LOG_CHARS} THEN job_log.logs
    WHEN length(job_log.logs) + length(EXCLUDED.logs) > ${MAX_JOB_LOG_CHARS}
      THEN left(job_log.logs || EXCLUDED.logs, ${MAX_JOB_LOG_CHARS}) || '${LOG_CAP_NOTE.replaceAll("'", "''")}'
    ELSE job_log.logs || EXCLUDED.logs END`;

/** Appends output to jobs' logs (up to the cap) and tells their log streams, in one statement. */
export async function appendLogs(
  client: Pool | PoolClient,
  entries: { jobId: string; chunk: string }[],
): Promise<void> {
  const nonEmpty = entries.filter((entry) => entry.chunk);
  if (nonEmpty.length === 0) return;
  await client.query(
    `WITH appended AS (
       INSERT INTO job_log (job_id, logs)
         SELECT job_id, left(chunk, ${MAX_JOB_LOG_CHARS}) FROM unnest($1::uuid[], $2::text[]) AS e(job_id, chunk)
       ON CONFLICT (job_id) DO UPDATE SET logs = ${CAPPED_APPEND}
       RETURNING job_id AS id)
     SELECT pg_notify($3, string_agg(id::text, ',')) FROM ${NOTIFY_CHUNKS("appended")}`,
    [
      nonEmpty.map((entry) => entry.jobId),
      nonEmpty.map((entry) => storableText(entry.chunk)),
      JOB_LOG_CHANNEL,
    ],
  );
}

export function appendJobLog(pool: Pool, jobId: string, chunk: string): Promise<void> {
  return appendLogs(pool, [{ jobId, chunk }]);
}
