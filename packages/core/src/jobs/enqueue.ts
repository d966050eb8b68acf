import { createHash } from "node:crypto";
import { prepared, withTransaction, type Pool, type PoolClient } from "@millrace/db";
import { ensureQueue, type Boss } from "./boss.ts";
import { attachLocks, needsLockRead } from "../dependencies/locks.ts";
import { routeToDedicatedWorkers } from "../dependencies/dedicated.ts";
import { auditRow } from "../audit/index.ts";
import { issueJobTokensSql } from "../secrets/job-token.ts";
import { CLAIM_PAUSE_LOCK_SQL, CLAIMED_COLUMNS, toClaimed, type ClaimedJob } from "./claimed.ts";
import type { EnqueueInput } from "./job-input.ts";
import { newJobId } from "./job-id.ts";

export type { EnqueueInput, JobKind, JobLimitsInput, RetryPolicy } from "./job-input.ts";

/**
 * A job queued on a tag is announced on that tag's own channel (this prefix and the start of the
 * tag's sha256 (md5 is refused by PostgreSQL built for FIPS), a name PostgreSQL's 63-byte identifiers hold for any tag), its payload the tag. A
 * worker LISTENs on the channels of the tags it serves, so a job wakes only the workers that may
 * run it: on one channel for all tags, every worker of the instance woke at every job queued
 * anywhere (~0.1 ms of CPU each on these VMs, for nothing but the ones serving it).
 */
export const JOB_QUEUED_CHANNEL_PREFIX = "millrace_job_queued_";

/**
 * SQL of the channel announcing jobs queued on the tag `tagSql`, `prefixSql` being a parameter
 * given JOB_QUEUED_CHANNEL_PREFIX (see queuedChannel).
 */
const queuedChannelSql = (prefixSql: string, tagSql: string) =>
  `${prefixSql} || left(encode(sha256(convert_to(${tagSql}, 'UTF8')), 'hex'), 24)`;

/** The channel announcing jobs queued on `tag`. */
export function queuedChannel(tag: string): string {
  return JOB_QUEUED_CHANNEL_PREFIX + createHash("sha256").update(tag, "utf8").digest("hex").slice(0, 24);
}

/** A noop job's input: created by `createdBy` (as them), on `tag`, returning `args`. */
export function noopJob(
  workspaceId: string,
  tag: string,
  args: Record<string, unknown>,
  createdBy: string,
): EnqueueInput {
  return {
    workspaceId,
    kind: "noop",
    scriptPath: null,
    scriptHash: null,
    language: "bash",
    content: "",
    args,
    argOrder: [],
    tag,
    priority: 0,
    scheduledFor: null,
    createdBy,
    permissionedAs: `u/${createdBy}`,
    timeoutSecs: 60,
    memoryLimitMb: null,
    concurrency: null,
    retry: null,
  };
}

export interface EnqueueOptions {
  /** The caller's transaction: the jobs commit (or roll back) with it. */
  transaction?: PoolClient;
  /**
   * The caller learns nothing of the jobs until they are over (run_wait_result): their writes
   * commit asynchronously, sparing the request a WAL flush (~2–4 ms here, one at a time). Safe
   * because the caller's answer comes from the job's completion, which always commits
   * synchronously and so flushes the WAL written before it, this enqueue included: a database
   * crash in between fails the request, as a crash during the job would, and the caller has no
   * id to look for. (A wait that times out hands out the id, but only after seconds; PostgreSQL
   * flushes an asynchronous commit within three `wal_writer_delay`s, 0.6 s by default.)
   */
  awaited?: boolean;
}

type Sql = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

/** Runs pg-boss's statements on our connection: in our transaction when `client` holds one. */
export function bossDb(client: Pool | PoolClient): { executeSql: Sql } {
  return { executeSql: (text, values) => client.query(prepared(text, values ?? [])) };
}

/**
 * pg-boss must never hand a running job to a second worker: Millrace handles retries and dead
 * workers itself (zombie monitor), so the pg-boss job never retries and expires only well after
 * the job's own timeout.
 */
export function bossJobOptions(job: { priority: number; timeoutSecs: number }, startAfter: Date) {
  return { priority: job.priority, startAfter, retryLimit: 0, expireInSeconds: job.timeoutSecs + 300 };
}

/**
 * The statement that writes jobs: `bossInsert` (pg-boss's own insert of their dispatches, whose
 * parameters are $1..$`p`) as its first CTE, then our rows ($p+1, JSON), the audit entries
 * ($p+3, JSON), and one NOTIFY per tag ($p+2 is the channel) to wake the workers serving them.
 * NOTIFY is delivered on commit, so no worker sees the wake-up before the jobs exist. With $p+4
 * true (EnqueueOptions.awaited) the transaction it runs in commits asynchronously: `set_config`
 * with `is_local` lasts until that commit, and an autocommitted statement is its own transaction.
 */
function enqueueStatement(bossInsert: string, p: number): string {
  return `WITH dispatched AS (${bossInsert}
     ), inserted AS (
       ${jobInsertSql(p + 1, false)}
       RETURNING tag
     ), audited AS (
       INSERT INTO audit_log (workspace_id, actor, operation, resource, parameters, ip, at)
       SELECT a.workspace_id, a.actor, a.operation, a.resource, a.parameters, a.ip, now() AT TIME ZONE 'UTC'
         FROM jsonb_to_recordset($${p + 3}::jsonb)
           AS a(workspace_id text, actor text, operation text, resource text, parameters jsonb, ip text))
     SELECT pg_notify(${queuedChannelSql(`$${p + 2}`, "tag")}, tag) FROM (SELECT DISTINCT tag FROM inserted) AS tags
      WHERE CASE WHEN $${p + 4}::boolean THEN set_config('synchronous_commit', 'off', true) = 'off' ELSE true END`;
}

/**
 * The insert of the job rows in `$param` (jobRows' JSON). `running`: claimed as they are written,
 * each by the worker slot its row names (`worker_name`, see handOverStatement). With `copiesParam`,
 * `$param` holds one row and `$copiesParam` the ids of its copies: one job row per id.
 */
function jobInsertSql(param: number, running: boolean, copiesParam?: number): string {
  const id = copiesParam ? "c.id" : "v.id";
  return `INSERT INTO job (id, boss_job_id, workspace_id, kind, script_path, script_hash, language, content, args,
         arg_order, tag, priority, created_by, permissioned_as, scheduled_for, timeout_secs, memory_limit_mb,
         concurrency_key, concurrent_limit, concurrency_time_window_s, retry, schedule_path, lock, bounded_by,
         parent_job_id, root_job_id, flow_step_id, trigger_kind${running ? ", status, started_at, worker_name" : ""})
       SELECT ${id}, ${id}, v.workspace_id, v.kind, v.script_path, v.script_hash, v.language, v.content, v.args,
         v.arg_order_array, v.tag, v.priority, v.created_by, v.permissioned_as,
         v.scheduled_for, v.timeout_secs, v.memory_limit_mb, v.concurrency_key, v.concurrent_limit,
         v.concurrency_time_window_s, v.retry, v.schedule_path, v.lock,
         v.bounded_by_array, v.parent_job_id, v.root_job_id, v.flow_step_id,
         v.trigger_kind${running ? ", 'running', now(), v.worker_name" : ""}
       FROM ${copiesParam ? `unnest($${copiesParam}::uuid[]) AS c(id), ` : ""}(SELECT r.*,
           ARRAY(SELECT jsonb_array_elements_text(r.arg_order)) AS arg_order_array,
           ARRAY(SELECT jsonb_array_elements_text(r.bounded_by)) AS bounded_by_array
         FROM jsonb_to_recordset($${param}::jsonb) AS r(id uuid, workspace_id text, kind text, script_path text,
         script_hash text, language text, content text, args jsonb, arg_order jsonb, tag text, priority int,
         created_by text, permissioned_as text, scheduled_for timestamptz, timeout_secs int, memory_limit_mb int,
         concurrency_key text, concurrent_limit int, concurrency_time_window_s int, retry jsonb,
         schedule_path text, lock text, bounded_by jsonb, parent_job_id uuid, root_job_id uuid, flow_step_id text,
         trigger_kind text${running ? ", worker_name text" : ""})
         -- OFFSET 0 keeps the template's arrays computed once, not once per copy.
         OFFSET 0) AS v`;
}

/**
 * Writes jobs already claimed by the worker slots their rows name, with their WM_TOKENs: a flow's
 * next step handed to the slot its previous step freed (see offerSlots). No pg-boss dispatch and
 * no NOTIFY: the job is running from the moment the transaction commits, and only that slot may
 * complete it (its `boss_job_id` is its own id, as a first dispatch's). Their rows are this
 * transaction's, so no other worker can see them, let alone claim them. Nothing is written while
 * a restore pauses claiming: the shared lock taken here holds the restore back until this
 * transaction ends, and a refused lock leaves the jobs to the queue instead. The token's bounds
 * come from the row being written (a read of the job table in the same statement would not see
 * it).
 */
function handOverStatement(): string {
  return `WITH inserted AS (
       ${jobInsertSql(1, true)}
        WHERE pg_try_advisory_xact_lock_shared(${CLAIM_PAUSE_LOCK_SQL})
       RETURNING ${CLAIMED_COLUMNS}, bounded_by
     ), ${issueJobTokensSql("inserted", { boundsOfClaimed: true })}
     SELECT inserted.*, job_token.token FROM inserted LEFT JOIN job_token ON job_token.job_id = inserted.id`;
}

/** A worker slot a transaction may hand a job it enqueues to (see offerSlots). */
export interface OfferedSlot {
  workerName: string;
  tags: readonly string[];
  /** The job handed to the slot, once one was. */
  job: ClaimedJob | null;
}

const slotOffers = new WeakMap<PoolClient, OfferedSlot[]>();

/**
 * Offers `slots` to the jobs enqueued in `client`'s transaction from now on, until `stop`: each
 * takes the first job due now on one of its tags (a completion hands a flow's next step to the
 * slot its step freed: completeJobs). Such a job is written claimed (handOverStatement).
 */
export function offerSlots(
  client: PoolClient,
  slots: { workerName: string; tags: readonly string[] }[],
): { slots: OfferedSlot[]; stop(): void } {
  const offered = slots.map((slot) => ({ ...slot, job: null }));
  slotOffers.set(client, offered);
  return { slots: offered, stop: () => slotOffers.delete(client) };
}

/**
 * Marks the hand-overs made so far in `client`'s transaction; the function returned forgets those
 * made since, whose writes the caller rolled back to a savepoint (their slots are free again).
 */
export function markHandOvers(client: PoolClient): () => void {
  const before = new Set((slotOffers.get(client) ?? []).filter((slot) => slot.job));
  return () => {
    for (const slot of slotOffers.get(client) ?? []) if (!before.has(slot)) slot.job = null;
  };
}

/**
 * Writes the jobs that offered slots of the transaction take as claimed by them; returns the
 * indexes of those written (the others go through the queue).
 */
async function handOver(
  client: PoolClient,
  inputs: EnqueueInput[],
  ids: string[],
  now: Date,
): Promise<Set<number>> {
  const open = (slotOffers.get(client) ?? []).filter((slot) => !slot.job);
  const taken: { index: number; slot: OfferedSlot }[] = [];
  inputs.forEach((input, index) => {
    // Due now and unlimited, as a claim would take it; a job with an audit entry (none of a flow's
    // steps) goes the queue's way, whose statement writes it.
    if (input.audit || input.concurrency || (input.scheduledFor && input.scheduledFor > now)) return;
    const slot = open.find(
      (candidate) => candidate.tags.includes(input.tag) && !taken.some((t) => t.slot === candidate),
    );
    if (slot) taken.push({ index, slot });
  });
  if (taken.length === 0) return new Set();
  const { rows: claimed } = await client.query(
    prepared(handOverStatement(), [
      jobRows(
        taken.map((t) => inputs[t.index]!),
        taken.map((t) => ids[t.index]!),
        now,
        taken.map((t) => t.slot.workerName),
      ),
    ]),
  );
  const byId = new Map(claimed.map((row) => [row.id as string, toClaimed(row, row.token ?? null)]));
  const written = new Set<number>();
  for (const { index, slot } of taken) {
    const job = byId.get(ids[index]!);
    if (!job) continue;
    slot.job = job;
    written.add(index);
  }
  return written;
}

/** The job rows' JSON (see jobInsertSql); `workerNames`: of the slots that claim them, if claimed. */
function jobRows(inputs: EnqueueInput[], ids: string[], now: Date, workerNames?: string[]): string {
  return JSON.stringify(
    inputs.map((input, i) => ({
      id: ids[i],
      workspace_id: input.workspaceId,
      kind: input.kind,
      script_path: input.scriptPath,
      script_hash: input.scriptHash,
      language: input.language,
      content: input.content,
      args: input.args,
      arg_order: input.argOrder,
      tag: input.tag,
      priority: input.priority,
      created_by: input.createdBy,
      permissioned_as: input.permissionedAs,
      bounded_by: input.boundedBy ?? [],
      scheduled_for: (input.scheduledFor ?? now).toISOString(),
      timeout_secs: input.timeoutSecs,
      memory_limit_mb: input.memoryLimitMb,
      concurrency_key: input.concurrency?.key ?? null,
      concurrent_limit: input.concurrency?.limit ?? null,
      concurrency_time_window_s: input.concurrency?.windowSecs ?? null,
      retry: input.retry,
      schedule_path: input.schedulePath ?? null,
      lock: input.lock ?? null,
      parent_job_id: input.parentJobId ?? null,
      root_job_id: input.rootJobId ?? null,
      flow_step_id: input.flowStepId ?? null,
      trigger_kind: triggerKind(input),
      ...(workerNames ? { worker_name: workerNames[i] } : {}),
    })),
  );
}

export type TriggerKind = "manual" | "api" | "webhook" | "schedule" | "job" | "flow" | "deploy";

/**
 * What started a job, for the runs list: told from what enqueued it (a schedule's tick, a flow's
 * step, a deploy's dependency job) or else from the credential of the request behind its audit
 * entry. A browser session has no token kind: that is a run by hand.
 */
export function triggerKind(input: EnqueueInput): TriggerKind | null {
  if (input.schedulePath) return "schedule";
  // A flow's step (a job started by another job through its token is a child, not a step).
  if (input.flowStepId) return "flow";
  if (input.kind === "dependency") return "deploy";
  const actor = input.audit?.actor;
  if (!actor || typeof actor === "string") return null;
  switch (actor.tokenKind) {
    case undefined:
      return "manual";
    case "webhook":
      return "webhook";
    case "job":
      return "job";
    default:
      return "api";
  }
}

function auditRows(inputs: EnqueueInput[], ids: string[]): string {
  return JSON.stringify(
    inputs.flatMap((input, i) =>
      input.audit
        ? [
            auditRow(input.audit.actor, {
              ...input.audit.entry,
              parameters: { job_id: ids[i], ...(input.audit.entry.parameters as object) },
            }),
          ]
        : [],
    ),
  );
}

/**
 * Writes the job rows and the pg-boss jobs that dispatch them, then wakes the workers serving
 * their tags. A job's first pg-boss job shares its id. The common case (one tag, no dependency
 * lock to look up, no caller transaction) is one autocommitted statement: a run is one round
 * trip. Otherwise the writes go in one transaction: with `transaction`, the caller's, so they
 * commit (or roll back) with it (a schedule tick commits its job together with the
 * compare-and-set that claimed the tick); a job a slot offered to that transaction takes is
 * written claimed by it instead (offerSlots).
 */
export async function enqueueJobs(
  pool: Pool,
  boss: Boss,
  requested: EnqueueInput[],
  options: EnqueueOptions = {},
): Promise<string[]> {
  const { transaction } = options;
  if (requested.length === 0) return [];
  let inputs = await routeToDedicatedWorkers(pool, requested);
  const tags = [...new Set(inputs.map((input) => input.tag))];
  for (const tag of tags) await ensureQueue(boss, tag);
  const now = new Date();
  const ids = inputs.map(() => newJobId());
  const write = async (client: Pool | PoolClient, lockReader: PoolClient | null) => {
    if (lockReader) inputs = await attachLocks(lockReader, inputs, now);
    await writeQueued(client, inputs, ids);
  };
  // The jobs go to the queue: their rows, their pg-boss dispatches, a NOTIFY per tag.
  const writeQueued = async (client: Pool | PoolClient, inputs: EnqueueInput[], ids: string[]) => {
    if (inputs.length === 0) return;
    const byTag = new Map<string, { id: string; data: { jobId: string } }[]>();
    inputs.forEach((input, i) => {
      const id = ids[i]!;
      const list = byTag.get(input.tag) ?? [];
      list.push({ id, data: { jobId: id }, ...bossJobOptions(input, input.scheduledFor ?? now) } as never);
      byTag.set(input.tag, list);
    });
    const groups = [...byTag];
    // Never empty: enqueueJobs returns early without jobs.
    const [firstTag, firstJobs] = groups[0]!;
    const rows = [
      jobRows(inputs, ids, now),
      JOB_QUEUED_CHANNEL_PREFIX,
      auditRows(inputs, ids),
      options.awaited === true,
    ];
    // pg-boss builds the insert of the first tag's dispatches (its queue's table and defaults) and
    // hands it to this executor, which runs it as the first CTE of our statement.
    await boss.insert(firstTag, firstJobs, {
      db: {
        executeSql: async (text, values = []) => {
          // A data-modifying WITH cannot nest: pg-boss only wraps its insert so for queues with
          // its own notifications, which Millrace never creates (workers are woken by our NOTIFY).
          if (!/^\s*INSERT\b/i.test(text))
            throw new Error(`cannot combine pg-boss's insert: ${text.slice(0, 80)}`);
          return client.query(prepared(enqueueStatement(text, values.length), [...values, ...rows]));
        },
      },
    });
    for (const [tag, jobs] of groups.slice(1)) await boss.insert(tag, jobs, { db: bossDb(client) });
  };
  const readsLocks = needsLockRead(inputs);
  if (transaction) {
    if (readsLocks) inputs = await attachLocks(transaction, inputs, now);
    const handed = await handOver(transaction, inputs, ids, now);
    const queued = inputs.flatMap((input, i) => (handed.has(i) ? [] : [i]));
    await writeQueued(
      transaction,
      queued.map((i) => inputs[i]!),
      queued.map((i) => ids[i]!),
    );
  } else if (tags.length === 1 && !readsLocks) await write(pool, null);
  else await withTransaction(pool, (client) => write(client, readsLocks ? client : null));
  return ids;
}

/**
 * The statement of enqueueCopies: the copies' pg-boss dispatches in the
 * queue `$1` ($2 ids, $3 priority, $4 start_after, $5 expire_seconds), then the job rows from the
 * one template row in $6 (jobRows' JSON), one audit entry ($8) and one NOTIFY ($7 the channel).
 * The dispatches are written here rather than through pg-boss's insert, which decodes one JSON
 * object per job: half of a batch's cost. They take every column pg-boss's insert would (the
 * queue's policy and defaults, as pg-boss's insert reads them), which
 * `apps/web/server/rest/batch-jobs.int.test.ts` checks against pg-boss's own insert, so an upgrade of pg-boss that changes its job table fails
 * there first. Answers the number of dispatches written: 0 if the queue is missing.
 */
const COPIES_STATEMENT = `WITH dispatched AS (
    INSERT INTO pgboss.job (id, name, data, priority, start_after, created_on, expire_seconds, deletion_seconds,
      keep_until, retry_limit, retry_delay, retry_backoff, retry_delay_max, policy, dead_letter,
      heartbeat_seconds, blocked, blocking, pending_dependencies)
    SELECT c.id, q.name, jsonb_build_object('jobId', c.id), $3::int, $4::timestamptz, pgboss.job_now(), $5::int,
      q.deletion_seconds, $4::timestamptz + q.retention_seconds * interval '1s', 0, q.retry_delay,
      COALESCE(q.retry_backoff, false), q.retry_delay_max, q.policy, q.dead_letter, q.heartbeat_seconds,
      false, false, 0
      FROM unnest($2::uuid[]) AS c(id) CROSS JOIN pgboss.queue q WHERE q.name = $1
    RETURNING 1
  ), inserted AS (
    ${jobInsertSql(6, false, 2)}
      WHERE EXISTS (SELECT 1 FROM pgboss.queue WHERE name = $1)
    RETURNING 1
  ), audited AS (
    INSERT INTO audit_log (workspace_id, actor, operation, resource, parameters, ip, at)
    SELECT a.workspace_id, a.actor, a.operation, a.resource, a.parameters, a.ip, now() AT TIME ZONE 'UTC'
      FROM jsonb_to_recordset($8::jsonb)
        AS a(workspace_id text, actor text, operation text, resource text, parameters jsonb, ip text)
     WHERE EXISTS (SELECT 1 FROM pgboss.queue WHERE name = $1))
  SELECT (SELECT count(*) FROM dispatched)::int AS dispatched, pg_notify(${queuedChannelSql("$7", "$1")}, $1)`;

/**
 * Writes `count` copies of one job (Windmill's `add_batch_jobs`) in one statement: their rows,
 * their pg-boss dispatches, one audit entry for the batch and one NOTIFY. The copies share all
 * but their ids, so PostgreSQL builds their rows from one template instead of decoding a JSON
 * object per job, which is most of what a many-job insert costs (docs/performance.md).
 */
export async function enqueueCopies(
  pool: Pool,
  boss: Boss,
  requested: EnqueueInput,
  count: number,
): Promise<string[]> {
  if (count <= 0) return [];
  let [input] = await routeToDedicatedWorkers(pool, [requested]);
  await ensureQueue(boss, input!.tag);
  const now = new Date();
  const ids = Array.from({ length: count }, () => newJobId());
  const write = async (client: Pool | PoolClient) => {
    if (needsLockRead([input!])) [input] = await attachLocks(client as PoolClient, [input!], now);
    const job = input!;
    const { priority, startAfter, expireInSeconds } = bossJobOptions(job, job.scheduledFor ?? now);
    const audit = job.audit
      ? [
          auditRow(job.audit.actor, {
            ...job.audit.entry,
            parameters: { ...(job.audit.entry.parameters as object), count, first_job_id: ids[0] },
          }),
        ]
      : [];
    const { rows } = await client.query<{ dispatched: number }>(COPIES_STATEMENT, [
      job.tag,
      ids,
      priority,
      startAfter,
      expireInSeconds,
      jobRows([job], [ids[0]!], now),
      JOB_QUEUED_CHANNEL_PREFIX,
      JSON.stringify(audit),
    ]);
    if (rows[0]!.dispatched !== count) throw new Error(`pg-boss has no queue for the tag ${job.tag}`);
  };
  if (needsLockRead([input!])) await withTransaction(pool, write);
  else await write(pool);
  return ids;
}

export async function enqueueJob(
  pool: Pool,
  boss: Boss,
  input: EnqueueInput,
  options: EnqueueOptions = {},
): Promise<string> {
  const [id] = await enqueueJobs(pool, boss, [input], options);
  return id!;
}

/**
 * Dispatches an existing job again (retry, concurrency wait, zombie restart): a new pg-boss job
 * replaces the one that was claimed, and the row remembers it, so only the new dispatch can
 * complete the job. Runs inside the caller's transaction.
 */
export async function redispatchJob(
  client: PoolClient,
  boss: Boss,
  job: { id: string; tag: string; priority: number; timeoutSecs: number },
  startAfter: Date,
): Promise<void> {
  await ensureQueue(boss, job.tag);
  const bossJobId = newJobId();
  await client.query(
    `UPDATE job SET status = 'queued', boss_job_id = $2, scheduled_for = $3, worker_name = NULL, started_at = NULL
      WHERE id = $1`,
    [job.id, bossJobId, startAfter],
  );
  await boss.send(
    job.tag,
    { jobId: job.id },
    { id: bossJobId, ...bossJobOptions(job, startAfter), db: bossDb(client) },
  );
  await client.query("SELECT pg_notify($1, $2)", [queuedChannel(job.tag), job.tag]);
}
