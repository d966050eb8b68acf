// What an agent worker does through the server (routes under /api/agent_workers): the same core
// functions as a database worker's (claimJobs, appendLogs, completeJobs, pingWorkers,
// requeueAbandonedJobs), behind one more wall: every job and worker name must be the agent's own.
import type { Pool } from "@millrace/db";
import { AppError, invalidInput } from "../errors.ts";
import type { Boss } from "../jobs/boss.ts";
import { appendLogs, claimJobs, nextDueTag, type ClaimedJob } from "../jobs/claim.ts";
import { completeJobs, type Completion, type JobOutcome } from "../jobs/complete.ts";
import { requeueAbandonedJobs } from "../maintenance/zombies.ts";
import { resolveJobArgs } from "../resources/job-args.ts";
import type { SecretsContext } from "../secrets/context.ts";
import { SecretMasker } from "../secrets/masker.ts";
import { pingWorkers, type SlotPing } from "../workers/ping.ts";
import type { ZombieSettings } from "../maintenance/zombies.ts";
import { loadWorkerGroupConfig } from "../workers/group-config.ts";
import {
  recordWorkerScriptEnd,
  recordWorkerScriptStart,
  type WorkerScriptKind,
  type WorkerScriptOutcome,
} from "../workers/worker-scripts.ts";
import type { AgentIdentity } from "./tokens.ts";

const NAME = /^[A-Za-z0-9_.-]{1,120}$/;
export const MAX_AGENT_SLOTS = 64;

/** Refuses a worker name that is not the agent's (see agentNamePrefix). */
function checkNames(agent: AgentIdentity, names: readonly string[], field: string): void {
  if (names.length > MAX_AGENT_SLOTS) throw invalidInput(field, `at most ${MAX_AGENT_SLOTS} worker names`);
  names.forEach((name, i) => {
    if (!NAME.test(name) || !name.startsWith(agent.namePrefix))
      throw new AppError(
        "FORBIDDEN",
        `${field}.${i}: an agent's worker names start with ${agent.namePrefix}`,
      );
  });
}

/** The ids among `jobIds` that run in one of this agent's slots now. */
async function ownRunningJobs(
  pool: Pool,
  agent: AgentIdentity,
  jobIds: readonly string[],
): Promise<Map<string, { workerName: string; bossJobId: string }>> {
  if (jobIds.length === 0) return new Map();
  const { rows } = await pool.query<{ id: string; worker_name: string; boss_job_id: string }>(
    `SELECT id, worker_name, boss_job_id FROM job
      WHERE id = ANY($1::uuid[]) AND status = 'running' AND starts_with(worker_name, $2)`,
    [jobIds, agent.namePrefix],
  );
  return new Map(rows.map((row) => [row.id, { workerName: row.worker_name, bossJobId: row.boss_job_id }]));
}

// A running job of the agent's slots that it does not hold is put back only once it was claimed
// this long ago: the answer to its claim may still be on its way.
const RECONCILE_GRACE_SECS = 10;

export interface AgentPing {
  /**
   * Every job the agent holds (running, or its completion not yet acknowledged). With it, jobs
   * running in its slots that it does not hold go back to the queue (see agentPing).
   */
  held?: string[];
  /**
   * Jobs the agent killed when it fenced itself (see apps/worker/src/fence.ts): those still
   * running in its slots under that dispatch go back to the queue, counted as zombie restarts.
   */
  fenced?: { jobId: string; bossJobId: string }[];
  host: string;
  version: string;
  sandbox: string;
  memoryBytes: number | null;
  slots: SlotPing[];
}

/**
 * The worker_ping rows of the agent's slots, written by the server on its behalf (the zombie
 * monitor and the Workers page read them as for any worker). Answers the jobs of those slots
 * canceled meanwhile: the agent has no LISTEN connection to hear it.
 */
export async function agentPing(
  pool: Pool,
  boss: Boss,
  agent: AgentIdentity,
  ping: AgentPing,
): Promise<{ canceled: { id: string; reason: string }[]; zombie: ZombieSettings | null }> {
  checkNames(
    agent,
    ping.slots.map((slot) => slot.name),
    "slots",
  );
  if (ping.slots.length === 0) return { canceled: [], zombie: null };
  const { zombie } = await pingWorkers(pool, {
    group: agent.workerGroup,
    tags: agent.tags,
    host: ping.host,
    memoryBytes: ping.memoryBytes,
    version: ping.version,
    sandbox: ping.sandbox,
    slots: ping.slots,
    agentTokenId: agent.tokenId,
  });
  if (ping.fenced?.length) {
    const own = await ownRunningJobs(
      pool,
      agent,
      ping.fenced.map((job) => job.jobId),
    );
    const mine = ping.fenced.flatMap((job) => {
      const found = own.get(job.jobId);
      return found && found.bossJobId === job.bossJobId
        ? [{ id: job.jobId, bossJobId: job.bossJobId, workerName: found.workerName }]
        : [];
    });
    if (mine.length > 0)
      await requeueAbandonedJobs(pool, boss, mine, "fenced itself (lost the server) and killed the job", {
        restart: zombie?.restart ?? true,
      });
  }
  if (ping.held)
    await reconcileAgent(
      pool,
      boss,
      ping.slots.map((slot) => slot.name),
      ping.held,
    );
  const running = ping.slots.flatMap((slot) => (slot.currentJobId ? [slot.currentJobId] : []));
  if (running.length === 0) return { canceled: [], zombie };
  const { rows } = await pool.query<{ id: string; canceled_by: string; cancel_reason: string | null }>(
    `SELECT id, canceled_by, cancel_reason FROM job
      WHERE id = ANY($1::uuid[]) AND canceled_by IS NOT NULL AND starts_with(worker_name, $2)`,
    [running, agent.namePrefix],
  );
  return {
    canceled: rows.map((row) => ({
      id: row.id,
      reason: `canceled by ${row.canceled_by}${row.cancel_reason ? `: ${row.cancel_reason}` : ""}`,
    })),
    zombie,
  };
}

/**
 * Puts back in the queue the jobs that run in the agent's slots but that it does not hold: a
 * claim committed whose HTTP answer was lost (the connection dropped, the server restarted). Its
 * slots keep pinging, so no zombie check would ever end such a job. A database worker does the
 * same for claims whose answer its connection lost (Dispatcher.reconcile).
 */
async function reconcileAgent(pool: Pool, boss: Boss, slotNames: string[], held: string[]): Promise<void> {
  const { rows } = await pool.query<{ id: string; boss_job_id: string; worker_name: string }>(
    `SELECT id, boss_job_id, worker_name FROM job
      WHERE status = 'running' AND worker_name = ANY($1) AND NOT (id = ANY($2::uuid[]))
        AND started_at < now() - make_interval(secs => $3)`,
    [slotNames, held, RECONCILE_GRACE_SECS],
  );
  if (rows.length === 0) return;
  await requeueAbandonedJobs(
    pool,
    boss,
    rows.map((row) => ({ id: row.id, bossJobId: row.boss_job_id, workerName: row.worker_name })),
    "does not hold this job (the answer to its claim was lost)",
  );
}

/** A claimed job as an agent receives it: everything it would otherwise read from the database. */
export interface AgentJob extends ClaimedJob {
  /** Secret values resolved into its arguments: the agent masks them in logs and result. */
  maskedValues: string[];
  /** The flow run whose `./shared` folder a same_worker flow's step uses (see flowSharedDir). */
  sharedFlowRoot: string | null;
}

/**
 * Claims up to one job per name for the agent, from the tags its token grants (never others),
 * through claimJobs as a database worker does. What the worker would read from the database to
 * run it is resolved here: `$var:`/`$res:` arguments (with the job user's rights, as
 * prepareCallback does), the lock of a version enqueued before its lock existed, and the flow
 * run of a same_worker step. A job whose arguments cannot be resolved is answered with an error
 * the agent records as the job's failure.
 */
export async function agentClaim(
  ctx: SecretsContext & { boss: Boss },
  agent: AgentIdentity,
  workerNames: string[],
): Promise<(AgentJob & { prepareError?: string })[]> {
  checkNames(agent, workerNames, "worker_names");
  if (workerNames.length === 0) return [];
  const tag = await nextDueTag(ctx.pool, agent.tags);
  if (!tag) return [];
  const jobs = await claimJobs(ctx.pool, ctx.boss, tag, workerNames);
  return Promise.all(jobs.map((job) => prepareForAgent(ctx, job)));
}

async function prepareForAgent(
  ctx: SecretsContext,
  job: ClaimedJob,
): Promise<AgentJob & { prepareError?: string }> {
  const maskedValues: string[] = [];
  let prepareError: string | undefined;
  let args = job.args;
  try {
    args = await resolveJobArgs(
      { ...ctx, onSecretRevealed: (value) => maskedValues.push(value) },
      job.workspaceId,
      job.permissionedAs,
      job.args,
      job,
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    prepareError =
      error instanceof AppError && error.code === "NOT_FOUND"
        ? `${message} or not visible to ${job.permissionedAs}`
        : message;
  }
  let lock = job.lock;
  if (lock === null && job.kind === "script" && job.scriptHash) {
    const { rows } = await ctx.pool.query<{ lock: string | null }>(
      "SELECT lock FROM script WHERE workspace_id = $1 AND hash = $2",
      [job.workspaceId, job.scriptHash],
    );
    lock = rows[0]?.lock ?? null;
  }
  let sharedFlowRoot: string | null = null;
  if (job.parentJobId) {
    const { rows } = await ctx.pool.query<{ root: string; same: boolean }>(
      `SELECT r.id::text AS root, COALESCE(r.raw_flow->>'same_worker' = 'true', false) AS same
         FROM job p JOIN job r ON r.id = COALESCE(p.root_job_id, p.id) WHERE p.id = $1`,
      [job.parentJobId],
    );
    if (rows[0]?.same) sharedFlowRoot = rows[0].root;
  }
  return { ...job, args, lock, maskedValues, sharedFlowRoot, ...(prepareError ? { prepareError } : {}) };
}

/**
 * The masks of secrets that jobs read through their own token while running on an agent (see
 * recordAgentJobSecretRead), by job id; jobs without any are absent. Values are decrypted here,
 * per request: the plain values are never stored.
 */
async function tokenReadSecrets(
  ctx: SecretsContext,
  jobIds: readonly string[],
): Promise<Map<string, { masker: SecretMasker; longest: number }>> {
  const masks = new Map<string, { masker: SecretMasker; longest: number }>();
  if (jobIds.length === 0) return masks;
  const { rows } = await ctx.pool.query<{
    job_id: string;
    workspace_id: string;
    path: string;
    value: string;
  }>(
    "SELECT job_id, workspace_id, path, value FROM agent_job_secret WHERE job_id = ANY($1::uuid[]) ORDER BY id",
    [jobIds],
  );
  for (const row of rows) {
    let plain = await ctx.secrets.tryDecrypt(ctx.pool, row.workspace_id, row.value);
    if (plain === null) {
      // Encrypted under a workspace key replaced since: the value stored now is the same secret.
      const current = await ctx.pool.query<{ value: string }>(
        "SELECT value FROM variable WHERE workspace_id = $1 AND path = $2 AND is_secret",
        [row.workspace_id, row.path],
      );
      const stored = current.rows[0]?.value;
      plain = stored ? await ctx.secrets.tryDecrypt(ctx.pool, row.workspace_id, stored) : null;
    }
    if (plain === null) continue;
    const entry = masks.get(row.job_id) ?? { masker: new SecretMasker(), longest: 0 };
    entry.masker.add(plain);
    entry.longest = Math.max(entry.longest, plain.length);
    masks.set(row.job_id, entry);
  }
  return masks;
}

/**
 * Appends `chunk` to a job's log with its secrets masked, including one split between the end
 * of what is stored and the start of the chunk: the stored end that could begin a secret is read
 * back (locked) and rewritten with the chunk when the mask reaches into it.
 */
async function appendMasked(
  pool: Pool,
  jobId: string,
  chunk: string,
  mask: { masker: SecretMasker; longest: number },
): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const { rows } = await client.query<{ tail: string }>(
      "SELECT right(logs, $2) AS tail FROM job_log WHERE job_id = $1 FOR UPDATE",
      [jobId, Math.max(0, mask.longest - 1)],
    );
    const tail = rows[0]?.tail ?? "";
    const text = mask.masker.mask(tail + chunk);
    if (text.startsWith(tail)) {
      await appendLogs(client, [{ jobId, chunk: text.slice(tail.length) }]);
    } else {
      await client.query("UPDATE job_log SET logs = left(logs, length(logs) - $2) WHERE job_id = $1", [
        jobId,
        tail.length,
      ]);
      await appendLogs(client, [{ jobId, chunk: text }]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/**
 * The last output of a job, masked, for completeJobs to append. Most often that is all; when a
 * secret begins at the end of what is stored, that end is cut off here and returned masked with
 * the output.
 */
async function maskedEnd(
  pool: Pool,
  jobId: string,
  chunk: string,
  mask: { masker: SecretMasker; longest: number },
): Promise<string> {
  const { rows } = await pool.query<{ tail: string }>(
    "SELECT right(logs, $2) AS tail FROM job_log WHERE job_id = $1",
    [jobId, Math.max(0, mask.longest - 1)],
  );
  const tail = rows[0]?.tail ?? "";
  const text = mask.masker.mask(tail + chunk);
  if (text.startsWith(tail)) return text.slice(tail.length);
  await pool.query(
    "UPDATE job_log SET logs = left(logs, length(logs) - $2) WHERE job_id = $1 AND right(logs, $2) = $3",
    [jobId, tail.length, tail],
  );
  return text;
}

/**
 * Appends output to the agent's running jobs; chunks for any other job are dropped. Secrets a
 * job read through its own token are masked here, the agent not knowing them (a database worker
 * masks them itself).
 */
export async function agentAppendLogs(
  ctx: SecretsContext,
  agent: AgentIdentity,
  entries: { jobId: string; chunk: string }[],
): Promise<void> {
  const own = await ownRunningJobs(
    ctx.pool,
    agent,
    entries.map((entry) => entry.jobId),
  );
  const kept = entries.filter((entry) => own.has(entry.jobId));
  const masks = await tokenReadSecrets(ctx, [...new Set(kept.map((entry) => entry.jobId))]);
  await appendLogs(
    ctx.pool,
    kept.filter((entry) => !masks.has(entry.jobId)),
  );
  for (const entry of kept) {
    const mask = masks.get(entry.jobId);
    if (mask && entry.chunk) await appendMasked(ctx.pool, entry.jobId, entry.chunk, mask);
  }
}

export interface AgentCompletion {
  jobId: string;
  bossJobId: string;
  callbackToken: string | null;
  outcome: JobOutcome;
  pendingLog: string;
  startedAt?: Date;
}

/**
 * Records the outcomes an agent reports, through completeJobs (a job ends once: only the claimed
 * dispatch of a running job completes it, exactly as for a database worker). What completeJobs
 * needs of each job (tag, retries, flow, kind) is read here, never taken from the agent; jobs not
 * running in one of the agent's slots are skipped. Answers the ids recorded.
 */
export async function agentComplete(
  ctx: SecretsContext & { boss: Boss },
  agent: AgentIdentity,
  reported: AgentCompletion[],
): Promise<string[]> {
  if (reported.length === 0) return [];
  const { pool, boss } = ctx;
  const { rows } = await pool.query<{
    id: string;
    boss_job_id: string;
    tag: string;
    priority: number;
    timeout_secs: number;
    retry: ClaimedJob["retry"];
    retry_attempt: number;
    kind: ClaimedJob["kind"];
    parent_job_id: string | null;
  }>(
    `SELECT id, boss_job_id, tag, priority, timeout_secs, retry, retry_attempt, kind, parent_job_id FROM job
      WHERE id = ANY($1::uuid[]) AND status = 'running' AND starts_with(worker_name, $2)`,
    [reported.map((c) => c.jobId), agent.namePrefix],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const masks = await tokenReadSecrets(ctx, [...byId.keys()]);
  const completions: Completion[] = [];
  for (const c of reported) {
    const row = byId.get(c.jobId);
    // A different dispatch: the job was put back (zombie) and claimed again since.
    if (!row || row.boss_job_id !== c.bossJobId) continue;
    const mask = masks.get(row.id);
    // Secrets its token read: masked in the result, and in the last output as in agentAppendLogs.
    const outcome = mask
      ? ({ ...c.outcome, result: mask.masker.maskValue(c.outcome.result) } as JobOutcome)
      : c.outcome;
    const pendingLog =
      mask && c.pendingLog ? await maskedEnd(pool, row.id, c.pendingLog, mask) : c.pendingLog;
    completions.push({
      job: {
        id: row.id,
        bossJobId: row.boss_job_id,
        tag: row.tag,
        priority: row.priority,
        timeoutSecs: row.timeout_secs,
        retry: row.retry,
        retryAttempt: row.retry_attempt,
        kind: row.kind,
        parentJobId: row.parent_job_id,
        callbackToken: c.callbackToken,
      },
      outcome,
      pendingLog,
      ...(c.startedAt ? { startedAt: c.startedAt } : {}),
    });
  }
  await completeJobs(pool, boss, completions);
  const recorded = completions.map((c) => c.job.id);
  if (masks.size > 0)
    await pool.query("DELETE FROM agent_job_secret WHERE job_id = ANY($1::uuid[])", [
      recorded.filter((id) => masks.has(id)),
    ]);
  return recorded;
}

/**
 * A stopping agent: its unfinished jobs go back to the queue (as a database worker's do on
 * SIGTERM) and its slots leave the workers list.
 */
export async function agentLeave(
  pool: Pool,
  boss: Boss,
  agent: AgentIdentity,
  workerNames: string[],
  unfinished: { jobId: string; bossJobId: string }[],
): Promise<void> {
  checkNames(agent, workerNames, "worker_names");
  const own = await ownRunningJobs(
    pool,
    agent,
    unfinished.map((job) => job.jobId),
  );
  const abandoned = unfinished.flatMap((job) => {
    const found = own.get(job.jobId);
    return found && found.bossJobId === job.bossJobId
      ? [{ id: job.jobId, bossJobId: job.bossJobId, workerName: found.workerName }]
      : [];
  });
  if (abandoned.length > 0) await requeueAbandonedJobs(pool, boss, abandoned);
  await pool.query("DELETE FROM worker_ping WHERE name = ANY($1) AND starts_with(name, $2)", [
    workerNames,
    agent.namePrefix,
  ]);
}

/** What an agent runs of its group's config itself: the init and periodic scripts. */
export interface AgentWorkerConfig {
  init_bash?: string;
  periodic_script_bash?: string;
  periodic_script_interval_seconds?: number;
}

/**
 * The agent's group's scripts, answered with every ping (the agent has no LISTEN connection to
 * hear a config change). Null when the group has no config, or an invalid one (a database worker
 * ignores it too, saying why in its log).
 */
export async function agentWorkerConfig(pool: Pool, agent: AgentIdentity): Promise<AgentWorkerConfig | null> {
  const config = await loadWorkerGroupConfig(pool, agent.workerGroup).catch(() => null);
  if (!config) return null;
  return {
    ...(config.init_bash ? { init_bash: config.init_bash } : {}),
    ...(config.periodic_script_bash ? { periodic_script_bash: config.periodic_script_bash } : {}),
    ...(config.periodic_script_interval_seconds !== undefined
      ? { periodic_script_interval_seconds: config.periodic_script_interval_seconds }
      : {}),
  };
}

/**
 * Records the start of an agent's run of its group's init or periodic script (a job of the admins
 * workspace, as a database worker records its own). Only the group's current script is recorded:
 * an agent token cannot write any other code into the admins workspace's jobs.
 */
export async function agentWorkerScriptStart(
  pool: Pool,
  agent: AgentIdentity,
  input: { workerName: string; kind: WorkerScriptKind; content: string },
): Promise<string> {
  checkNames(agent, [input.workerName], "worker_name");
  const config = await loadWorkerGroupConfig(pool, agent.workerGroup).catch(() => null);
  const current = input.kind === "init_script" ? config?.init_bash : config?.periodic_script_bash;
  if (!current || current !== input.content) {
    throw new AppError(
      "CONFLICT",
      `content: not the current ${input.kind === "init_script" ? "init_bash" : "periodic_script_bash"} of worker group ${agent.workerGroup}`,
    );
  }
  return recordWorkerScriptStart(pool, {
    kind: input.kind,
    group: agent.workerGroup,
    workerName: input.workerName,
    content: input.content,
  });
}

/** Records the end of the agent's own running init or periodic script; any other job is ignored. */
export async function agentWorkerScriptEnd(
  pool: Pool,
  agent: AgentIdentity,
  jobId: string,
  outcome: WorkerScriptOutcome,
  pendingLog: string,
): Promise<void> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM job WHERE id = $1 AND status = 'running' AND kind IN ('init_script', 'periodic_script')
        AND starts_with(worker_name, $2)`,
    [jobId, agent.namePrefix],
  );
  if (rows[0]) await recordWorkerScriptEnd(pool, jobId, outcome, pendingLog);
}
