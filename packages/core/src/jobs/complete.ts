import { prepared, withTransaction, type Pool, type PoolClient } from "@millrace/db";
import type { Boss } from "./boss.ts";
import { CAPPED_APPEND, MAX_JOB_LOG_CHARS, type ClaimedJob } from "./claim.ts";
import { offerSlots, redispatchJob, type RetryPolicy } from "./enqueue.ts";
import { JOB_DONE_CHANNEL, NOTIFY_OUTCOMES } from "./events.ts";
import { settleDependencyJobs } from "../dependencies/settle.ts";
import { hashToken } from "../auth/tokens.ts";
import { storableJson, storableText } from "./storable.ts";
import { resultColumnsOf } from "./result-columns.ts";
import {
  advanceFlows,
  FLOW_JOB_COLUMNS,
  FLOW_JOB_KINDS,
  type EndedStep,
  type FlowJobRow,
} from "../flows/engine/run.ts";

export interface JobError {
  name: string;
  message: string;
  stack?: string;
}

export type JobOutcome =
  | { status: "success"; result: unknown }
  | { status: "failure"; result: { error: JobError } }
  | { status: "canceled"; result: { error: JobError } };

export interface Completion {
  job: Pick<ClaimedJob, "id" | "bossJobId" | "tag" | "priority" | "timeoutSecs" | "retry" | "retryAttempt"> &
    Partial<Pick<ClaimedJob, "kind" | "callbackToken" | "parentJobId">>;
  outcome: JobOutcome;
  /** Output not yet flushed to the log. */
  pendingLog: string;
  /**
   * When the job really started, if later than its claim (a job claimed ahead waits for a slot):
   * its recorded start moves to this time.
   */
  startedAt?: Date;
  /**
   * The worker slot the job ran in, kept free for what follows it: a job this completion enqueues
   * on one of `tags` (a flow's next step) is claimed for that slot in the same transaction, a
   * continuation, instead of going through the queue to whichever worker fetches it first.
   */
  continueIn?: { workerName: string; tags: readonly string[] };
}

/** Seconds before retry number `attempt` (1-based), or null when the policy is exhausted. */
export function retryDelaySecs(policy: RetryPolicy | null, attempt: number): number | null {
  if (policy?.constant && attempt <= policy.constant.attempts) return policy.constant.seconds;
  const exponential = policy?.exponential;
  if (exponential && attempt <= exponential.attempts) {
    const base = exponential.multiplier * Math.pow(exponential.seconds, attempt);
    const jitter = exponential.random_factor ? (Math.random() * exponential.random_factor * base) / 100 : 0;
    return base + jitter;
  }
  return null;
}

/**
 * One statement: the last output of every completion, the final state of those that are over
 * (only the dispatch that was claimed can complete a job, or add its last output: `boss_job_id`), their WM_TOKENs revoked,
 * and one NOTIFY per chunk of completed jobs, with their small outcomes (delivered at commit).
 *
 * The completions come as one JSON array ($1, see completionsJson) rather than an array parameter
 * per field: node-postgres escapes every element of an array parameter in JavaScript, which cost
 * the worker more than anything else it does per job (5 µs of its ~40 in the no-op pipeline),
 * where JSON.stringify is native and most of the text here is written as it is.
 *
 * Each job is looked up by primary key, the completions driving the join. The status every job
 * must still have ('running') comes with the completions (`c.running`) rather than as a constant:
 * compared with a constant, the planner estimated it from the table's statistics, which, taken
 * while almost nothing ran, give one running job. It then scanned the job table for the running
 * jobs and compared each with every completion (a nested loop: 400 x 400 comparisons, 115–140 ms
 * a batch once the table held 17,000 jobs; a 5,000-job drain fell from 11k to 1.6–3.4k jobs/s).
 * Compared with a column of the completions, the check cannot filter the table before the join,
 * and 400 completions cost 400 index lookups (3.6 ms). IS NOT DISTINCT FROM, as in the claim
 * (see claimStatement), keeps an index on the status from driving the lookup. A JSON null result
 * reads as SQL NULL from the recordset: COALESCE stores it as JSON null, as every result is.
 */
const RECORD_OUTCOMES_CTES = `WITH c AS MATERIALIZED (
     SELECT * FROM jsonb_to_recordset($1::jsonb)
       AS c(job_id uuid, boss_job_id uuid, chunk text, status job_status, result jsonb,
            started_at timestamptz, result_columns text[])
   ), logs AS (
     INSERT INTO job_log (job_id, logs)
       SELECT c.job_id, left(c.chunk, ${MAX_JOB_LOG_CHARS}) FROM c
        WHERE c.chunk IS NOT NULL
          -- A stale completion (its run was fenced or restarted meanwhile) writes no output either.
          AND EXISTS (SELECT 1 FROM job WHERE job.id = c.job_id AND job.boss_job_id = c.boss_job_id)
     ON CONFLICT (job_id) DO UPDATE SET logs = ${CAPPED_APPEND}
   ), revoked AS (
     DELETE FROM api_token WHERE token_hash = ANY($3::text[]) AND kind = 'job'
   ), done AS (
     UPDATE job SET status = c.status, result = COALESCE(c.result, 'null'), completed_at = now(),
            started_at = COALESCE(c.started_at, job.started_at), result_columns = COALESCE(c.result_columns, '{}')
       FROM (SELECT c.*, 'running'::job_status AS running FROM c WHERE c.status IS NOT NULL) AS c
      WHERE job.id = c.job_id AND job.boss_job_id = c.boss_job_id AND job.status IS NOT DISTINCT FROM c.running
      RETURNING job.id, job.status, job.result, job.parent_job_id, job.result_columns)`;

const RECORD_OUTCOMES = `${RECORD_OUTCOMES_CTES}
   ${NOTIFY_OUTCOMES("done", "$2")}`;

/** The same, answering the rows it completed: a flow's engine reads its ended steps from them. */
const RECORD_OUTCOMES_RETURNING = `${RECORD_OUTCOMES_CTES},
   notified AS (${NOTIFY_OUTCOMES("done", "$2")})
   SELECT id, parent_job_id, status, result, result_columns FROM done, (SELECT count(*) FROM notified) AS n`;

function willRetry(c: Completion): boolean {
  return c.outcome.status === "failure" && retryDelaySecs(c.job.retry, c.job.retryAttempt + 1) !== null;
}

/**
 * The completions as RECORD_OUTCOMES's JSON array: every one with its last output (`chunk`), and
 * the final state of those not retried. Results are storableJson's text, written in as they are.
 * Empty and null fields are left out (the recordset reads a missing key as NULL, which the
 * statement treats as the empty or null value): a no-op job's entry is half as long, and the
 * text sent per job was most of what the worker's socket writes cost it.
 */
function completionsJson(completions: Completion[], retries: ReadonlySet<Completion>): string {
  const entries = completions.map((c) => {
    const retried = retries.has(c);
    const chunk = storableText(c.pendingLog + (retried ? retryNote(c) : ""));
    let entry = `{"job_id":${JSON.stringify(c.job.id)},"boss_job_id":${JSON.stringify(c.job.bossJobId)}`;
    if (chunk) entry += `,"chunk":${JSON.stringify(chunk)}`;
    if (retried) return `${entry}}`;
    entry += `,"status":${JSON.stringify(c.outcome.status)}`;
    const result = storableJson(c.outcome.result);
    if (result !== "null") entry += `,"result":${result}`;
    if (c.startedAt) entry += `,"started_at":${JSON.stringify(c.startedAt.toISOString())}`;
    const columns = resultColumnsOf(c.outcome.result);
    if (columns.length > 0) entry += `,"result_columns":${JSON.stringify(columns)}`;
    return `${entry}}`;
  });
  return `[${entries.join(",")}]`;
}

function recordOutcomesValues(completions: Completion[], retries: Completion[]): unknown[] {
  return [
    completionsJson(completions, new Set(retries)),
    JOB_DONE_CHANNEL,
    // A retried job's next claim issues a new token.
    completions.flatMap((c) => (c.job.callbackToken ? [hashToken(c.job.callbackToken)] : [])),
  ];
}

/**
 * Records the outcomes of many jobs and their last output. Only the dispatch that was claimed
 * can complete a job (`boss_job_id`), so a job canceled, restarted or re-dispatched meanwhile is
 * never completed twice. A failed job with retries left goes back to the queue instead. Their
 * pg-boss jobs need nothing: the claim used them up (see consumingFetch in claim.ts).
 *
 * The common case (every job over, none a dependency job nor a flow step) is one autocommitted
 * statement. Retries, dependency jobs and flow steps need more than one statement and keep
 * everything in one transaction: a flow step's completion also moves its flow to the next step
 * (flows/engine), so no crash leaves a flow between two steps.
 */
export async function completeJobs(
  pool: Pool,
  boss: Boss,
  completions: Completion[],
): Promise<Map<string, ClaimedJob>> {
  if (completions.length === 0) return new Map();
  const retries = completions.filter(willRetry);
  if (retries.length === 0 && completions.every((c) => c.job.kind !== "dependency" && !c.job.parentJobId)) {
    await pool.query(prepared(RECORD_OUTCOMES, recordOutcomesValues(completions, [])));
    return new Map();
  }
  return withTransaction(pool, async (client) => {
    // Flow jobs are locked before their steps' rows, as a flow's cancel locks them (the flow,
    // then its steps): the root flow of each run first (a run's parallel children finishing at
    // once then queue on it rather than each locking its own child flow and then the root in
    // another order), then the steps' own flow jobs, in id order: never a cycle.
    const flows = [
      ...new Set(completions.flatMap((c) => (c.job.parentJobId ? [c.job.parentJobId] : []))),
    ].sort();
    // The flows' rows come with their locks: the engine reads them from here (advanceFlows). One
    // array of ids, so that the primary key finds them: `id = ANY(…) OR id IN (…)` scanned the
    // whole job table on every step's completion (2.4 ms at 15k jobs, 0.1 ms this way).
    const lockedFlows = new Map<string, FlowJobRow>();
    if (flows.length > 0) {
      const { rows } = await client.query<FlowJobRow>(
        prepared(
          `SELECT ${FLOW_JOB_COLUMNS} FROM job
            WHERE id = ANY($1::uuid[] || ARRAY(SELECT root_job_id FROM job WHERE id = ANY($1::uuid[]) AND root_job_id IS NOT NULL))
            ORDER BY root_job_id IS NULL DESC, id FOR UPDATE`,
          [flows],
        ),
      );
      for (const row of rows) {
        if ((FLOW_JOB_KINDS as readonly string[]).includes(row.kind)) lockedFlows.set(row.id, row);
      }
    }
    const { rows: ended } = await client.query<EndedStep>(
      prepared(RECORD_OUTCOMES_RETURNING, recordOutcomesValues(completions, retries)),
    );
    for (const c of retries) await scheduleRetry(client, boss, c);
    const finals = completions.filter((c) => !retries.includes(c));
    await settleDependencyJobs(client, boss, finals);
    // Each step's slot is offered to the jobs the engine enqueues (the flows' next steps): it takes
    // the first on one of its tags, written claimed by it (see offerSlots), and starts it as soon
    // as this transaction commits, without a NOTIFY, a wake-up and a claim in between. A crash after
    // the commit leaves it running under a worker that stops pinging: the zombie monitor puts it
    // back, as for any claim.
    const slots = finals.filter((c) => c.job.parentJobId && c.continueIn);
    const offer =
      slots.length > 0
        ? offerSlots(
            client,
            slots.map((c) => c.continueIn!),
          )
        : null;
    try {
      await advanceFlows(client, boss, { steps: ended, lockedFlows });
    } finally {
      offer?.stop();
    }
    const handed = new Map<string, ClaimedJob>();
    slots.forEach((c, i) => {
      const job = offer!.slots[i]!.job;
      if (job) handed.set(c.job.id, job);
    });
    return handed;
  });
}

function retryNote(c: Completion): string {
  const attempt = c.job.retryAttempt + 1;
  const delay = retryDelaySecs(c.job.retry, attempt) ?? 0;
  const error = c.outcome.status === "failure" ? c.outcome.result.error : null;
  return `\n[millrace] attempt ${attempt} failed (${error?.name}: ${error?.message}); retry ${attempt} in ${delay.toFixed(1)} s\n`;
}

async function scheduleRetry(client: PoolClient, boss: Boss, c: Completion): Promise<void> {
  const attempt = c.job.retryAttempt + 1;
  const delayMs = (retryDelaySecs(c.job.retry, attempt) ?? 0) * 1000;
  // Status with IS NOT DISTINCT FROM: the row is found by primary key (see claimStatement in claim.ts).
  const { rowCount } = await client.query(
    `UPDATE job SET retry_attempt = $3 WHERE id = $1 AND boss_job_id = $2 AND status IS NOT DISTINCT FROM 'running'`,
    [c.job.id, c.job.bossJobId, attempt],
  );
  if (!rowCount) return;
  await redispatchJob(client, boss, c.job, new Date(Date.now() + delayMs));
}
