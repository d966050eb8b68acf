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
import { pingWorkers, type SlotPing } from "../workers/ping.ts";
import type { ZombieSettings } from "../maintenance/zombies.ts";
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

/** Appends output to the agent's running jobs; chunks for any other job are dropped. */
export async function agentAppendLogs(
  pool: Pool,
  agent: AgentIdentity,
  entries: { jobId: string; chunk: string }[],
): Promise<void> {
  const own = await ownRunningJobs(
    pool,
    agent,
    entries.map((entry) => entry.jobId),
  );
  await appendLogs(
    pool,
    entries.filter((entry) => own.has(entry.jobId)),
  );
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
  pool: Pool,
  boss: Boss,
  agent: AgentIdentity,
  reported: AgentCompletion[],
): Promise<string[]> {
  if (reported.length === 0) return [];
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
  const completions: Completion[] = [];
  for (const c of reported) {
    const row = byId.get(c.jobId);
    // A different dispatch: the job was put back (zombie) and claimed again since.
    if (!row || row.boss_job_id !== c.bossJobId) continue;
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
      outcome: c.outcome,
      pendingLog: c.pendingLog,
      ...(c.startedAt ? { startedAt: c.startedAt } : {}),
    });
  }
  await completeJobs(pool, boss, completions);
  return completions.map((c) => c.job.id);
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
