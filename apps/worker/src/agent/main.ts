// MODE=agent: a worker without database access. It claims, logs, heartbeats and completes over
// the server's /api/agent_workers routes with its AGENT_TOKEN, and runs each job with the same
// executor as a database worker (run-job.ts: bubblewrap, limits, dependencies, secret masking),
// set up by the same start-up code (startup.ts). It runs its group's init and periodic scripts
// (recorded by the server) and serves METRICS_ADDR as a database worker does.
// Its slots are worker_ping rows the server writes for it: when it dies (kill -9, a lost
// network), they stop being refreshed and the zombie monitor puts its jobs back in the queue.
import { randomBytes } from "node:crypto";
import os from "node:os";
import { millraceMetrics, type Completion, type WorkerGroupConfig } from "@millrace/core";
import { assertNodeVersion } from "@millrace/core/config";
import { jobDirRemoved } from "@millrace/runtime";
import { Fence } from "../fence.ts";
import { slotPing, type SlotState } from "../heartbeat.ts";
import { PeriodicScript, runWorkerScript, type WorkerScriptDeps } from "../init-scripts.ts";
import { Occupancy } from "../occupancy.ts";
import { runClaimedJob, type RunJobDeps } from "../run-job.ts";
import { startJobRuntime } from "../startup.ts";
import { AgentClient, AgentHttpError, type AgentJob, type AgentWorkerConfig } from "./client.ts";
import { loadAgentEnv } from "./env.ts";
import { agentJobStore } from "./store.ts";

const VERSION = "0.1.0";
// Backoff while the server cannot be reached or refuses the token.
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5000;

assertNodeVersion();
const env = loadAgentEnv();
const client = new AgentClient(env.BASE_INTERNAL_URL, env.AGENT_TOKEN);
let label = "agent";
const log = (message: string) => console.log(`[${label}] ${message}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const runtime = await startJobRuntime(env, log);
const { sandbox, sandboxState } = runtime;
// As on a database worker: without a sandbox no job runs unless the operator opted out on purpose.
if (runtime.refusesJobs) {
  console.error(
    `[agent] sandbox unavailable (${sandbox.kind === "none" ? sandbox.reason : ""}): install bubblewrap, or set DISABLE_SANDBOX=true (trusted code only)`,
  );
  process.exit(1);
}

/** Retries `call` until the server answers (network errors, 5xx, a refused token). */
async function untilAnswered<T>(what: string, call: () => Promise<T>): Promise<T> {
  let delay = RETRY_FIRST_MS;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      // A 4xx other than a refused token is this request's fault: retrying cannot help.
      if (
        error instanceof AgentHttpError &&
        error.status >= 400 &&
        error.status < 500 &&
        error.status !== 401
      )
        throw error;
      if (delay === RETRY_FIRST_MS)
        log(`${what}: ${error instanceof Error ? error.message : String(error)}; retrying`);
      await sleep(delay);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  }
}

// The first ping (no slots yet) tells the agent who it is: its group, tags and name prefix.
const identity = await untilAnswered("server unreachable", () =>
  client.ping({ host: os.hostname(), version: VERSION, sandbox: sandboxState, memoryBytes: 0, slots: [] }),
);
const host = os
  .hostname()
  .replace(/[^A-Za-z0-9_.-]/g, "-")
  .slice(0, 40);
const prefix = `${identity.name_prefix}${host}-${randomBytes(3).toString("hex")}`;
label = `agent ${prefix}`;
const slots: SlotState[] = Array.from({ length: env.NUM_WORKERS }, (_, i) => ({
  name: `${prefix}-${i + 1}`,
  currentJobId: null,
  jobsExecuted: 0,
  occupancy: new Occupancy(),
}));

const claimed = new Map<string, AgentJob>();
const deps: RunJobDeps = {
  store: agentJobStore(client, claimed),
  ...runtime.executor,
  baseUrl: env.BASE_URL,
  // Jobs call the server themselves (their WM_TOKEN) at the address the agent uses.
  baseInternalUrl: env.BASE_INTERNAL_URL,
  isolation: runtime.isolation,
  launcher: runtime.launcher,
  warmSandboxes: runtime.warmSandboxes,
};

// The group's init and periodic scripts, run on this machine as a database worker runs them; the
// server records each run (a job of the admins workspace) and checks it is the group's script.
const workerScripts: WorkerScriptDeps = {
  recorder: {
    start: (kind, content) =>
      untilAnswered(`could not record the ${kind}`, () => client.workerScriptStart(prefix, kind, content)),
    appendLog: (id, chunk) => client.appendLog(id, chunk),
    end: (id, outcome, pendingLog) =>
      untilAnswered(`could not record the end of job ${id}`, () =>
        client.workerScriptEnd(id, outcome, pendingLog),
      ),
  },
  jobDir: env.JOB_DIR,
  group: identity.worker_group,
  workerName: prefix,
  log,
};
const periodic = new PeriodicScript(workerScripts);
let groupConfig: AgentWorkerConfig | null = identity.worker_config;
let initDone = false;
const periodicConfig = (config: AgentWorkerConfig | null) => config as WorkerGroupConfig | null;

interface Running {
  job: AgentJob;
  controller: AbortController;
  cancelReason: string | null;
}
const running = new Map<string, Running>();
const completing = new Set<Promise<void>>();
let stopping = false;
let wake: () => void = () => {};

// Self-fencing (fence.ts), as a database worker does: the server writes the agent's worker_ping
// rows before it answers a ping, so an agent without an answered ping for half of the zombie
// timeout kills its running jobs before the zombie monitor could rerun them elsewhere. Its next
// answered ping names them, and the server puts them back in the queue (agentPing).
const fence = new Fence({
  timeoutSecs: env.ZOMBIE_JOB_TIMEOUT,
  onFence(silentMs) {
    let killed = 0;
    for (const entry of running.values()) {
      if (entry.controller.signal.aborted) continue;
      entry.controller.abort("fence");
      killed++;
    }
    log(
      `FENCED: no ping answered by the server for ${(silentMs / 1000).toFixed(1)} s ` +
        `(ZOMBIE_JOB_TIMEOUT ${fence.zombieTimeoutSecs} s): killed ${killed} running job(s) so that ` +
        `no job runs here and on another worker at once; their outcomes will not be reported; ` +
        `claiming stops until the server answers`,
    );
  },
});

// Jobs killed by the fence, named in the pings until one is answered (the server puts them back).
const fencedJobs = new Map<string, string>();

async function ping(): Promise<void> {
  const wasFenced = fence.fenced;
  const answered = fence.sending();
  const fenced = [...fencedJobs].map(([jobId, bossJobId]) => ({ jobId, bossJobId }));
  const answer = await client.ping({
    // Running, and finished but not yet acknowledged (see report): the server puts back the rest.
    held: [...running.keys(), ...claimed.keys()],
    fenced,
    host: os.hostname(),
    version: VERSION,
    sandbox: sandboxState,
    memoryBytes: process.memoryUsage().rss,
    slots: slots.map(slotPing),
  });
  if (answer.zombie_job_timeout) fence.setTimeoutSecs(answer.zombie_job_timeout);
  answered();
  for (const job of fenced) fencedJobs.delete(job.jobId);
  if (wasFenced && !fence.fenced) {
    log("the server answers again: claiming resumes (it puts the fenced jobs back in the queue)");
    wake();
  }
  groupConfig = answer.worker_config;
  if (initDone) periodic.configure(periodicConfig(groupConfig));
  for (const { id, reason } of answer.canceled) {
    const entry = running.get(id);
    if (!entry || entry.controller.signal.aborted) continue;
    entry.cancelReason = reason;
    entry.controller.abort("cancel");
  }
}

/**
 * Reports a completion until the server has it. The server records a job's end once (only the
 * claimed dispatch of a job still running in this agent's slot completes it), so a report sent
 * twice after a lost answer changes nothing.
 */
function report(completion: Completion, onRecorded: () => void = () => {}): void {
  const send = (c: Completion) =>
    untilAnswered(`could not report job ${c.job.id} yet`, () =>
      client.complete([
        {
          jobId: c.job.id,
          bossJobId: c.job.bossJobId,
          callbackToken: c.job.callbackToken ?? null,
          outcome: c.outcome,
          pendingLog: c.pendingLog,
        },
      ]),
    );
  const sent = send(completion)
    // Refused for what it holds (too large for the server, say): the job fails saying so, as a
    // database worker records an outcome the database refuses, rather than staying `running`.
    .then(onRecorded, (error: Error) => send(unrecordable(completion, error)))
    .then(() => undefined)
    .catch((error: Error) => log(`job ${completion.job.id} not recorded: ${error.message}`))
    .finally(() => {
      claimed.delete(completion.job.id);
      completing.delete(sent);
    });
  completing.add(sent);
}

function unrecordable(completion: Completion, error: Error): Completion {
  const message = `the job ended but its outcome could not be stored: ${error.message}`;
  return {
    ...completion,
    outcome: { status: "failure", result: { error: { name: "ResultNotStored", message } } },
    pendingLog: `\n[millrace] ${message}\n`,
  };
}

function run(job: AgentJob, slot: SlotState): void {
  const entry: Running = { job, controller: new AbortController(), cancelReason: null };
  running.set(job.id, entry);
  claimed.set(job.id, job);
  slot.currentJobId = job.id;
  slot.occupancy.start();
  // The same worker metrics as a database worker's (see Dispatcher.run).
  const metrics = millraceMetrics();
  metrics.jobsStarted.inc({ tag: job.tag });
  if (job.scheduledFor) {
    metrics.jobQueueWait.observe(
      { tag: job.tag },
      Math.max(0, (Date.now() - job.scheduledFor.getTime()) / 1000),
    );
  }
  const since = performance.now();
  void runClaimedJob(deps, job, entry.controller.signal, () => entry.cancelReason)
    .then((completion) => {
      // Null: stopping; the job goes back to the queue with the agent's leave. Or fenced: named
      // in the next pings until one is answered, and the server puts it back.
      if (!completion) {
        if (entry.controller.signal.reason === "fence") {
          claimed.delete(job.id);
          fencedJobs.set(job.id, job.bossJobId);
          log(`job ${job.id} killed by the fence: its outcome is not reported`);
        }
        return;
      }
      const ranMs = performance.now() - since;
      report(completion, () => {
        metrics.jobsCompleted.inc({ tag: job.tag, status: completion.outcome.status });
        metrics.jobDuration.observe({ tag: job.tag, language: job.language }, ranMs / 1000);
      });
    })
    .catch((error: Error) => {
      // No longer held: the next ping's reconciliation puts it back in the queue.
      claimed.delete(job.id);
      log(`job ${job.id}: ${error.message}`);
    })
    .finally(() => {
      running.delete(job.id);
      slot.currentJobId = null;
      slot.jobsExecuted++;
      slot.occupancy.end();
      wake();
    });
}

async function claimLoop(): Promise<void> {
  while (!stopping) {
    if (fence.fenced) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, RETRY_MAX_MS / 5);
        wake = () => (clearTimeout(timer), resolve());
      });
      continue;
    }
    const free = slots.filter((slot) => slot.currentJobId === null);
    let jobs: AgentJob[] = [];
    if (free.length > 0) {
      try {
        jobs = await client.claim(free.map((slot) => slot.name));
      } catch (error) {
        log(`claim failed: ${error instanceof Error ? error.message : String(error)}`);
        await sleep(RETRY_MAX_MS / 5);
        continue;
      }
    }
    const byName = new Map(free.map((slot) => [slot.name, slot]));
    for (const job of jobs) {
      const slot = byName.get(job.workerName);
      if (slot) run(job, slot);
    }
    if (jobs.length === 0 || free.length === jobs.length) {
      // Nothing waiting (or every slot busy): ask again after the poll interval or a freed slot.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, jobs.length === 0 ? env.AGENT_POLL_MS : RETRY_MAX_MS);
        wake = () => (clearTimeout(timer), resolve());
      });
    }
  }
}

log(`sandbox: ${sandboxState}; no database: server ${env.BASE_INTERNAL_URL}`);
await untilAnswered("first ping failed", ping);
fence.start();
let heartbeat: NodeJS.Timeout | null = null;
const schedulePing = () => {
  heartbeat = setTimeout(
    () => {
      void ping().catch((error: Error) => log(`ping failed: ${error.message}`));
      schedulePing();
    },
    fence.pingIntervalMs(env.WORKER_PING_INTERVAL * 1000),
  );
};
schedulePing();
// Last of the start lines: whoever waits for "serving tags" (tests) has read them all.
log(
  `group "${identity.worker_group}", ${env.NUM_WORKERS} slot(s), serving tags: ${identity.tags.join(", ")}`,
);
// Init script before any job (recorded as a job by the server); a failure is logged and the
// agent carries on, as a database worker does.
if (groupConfig?.init_bash) await runWorkerScript(workerScripts, "init_script", groupConfig.init_bash);
initDone = true;
periodic.configure(periodicConfig(groupConfig));
const loop = claimLoop();

async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  wake();
  log(`${signal}: no longer claiming; letting running jobs finish (up to ${env.WORKER_GRACE_PERIOD} s)`);
  await loop;
  const deadline = Date.now() + env.WORKER_GRACE_PERIOD * 1000;
  while (running.size > 0 && Date.now() < deadline) await sleep(50);
  const abandoned = [...running.values()].map((entry) => entry.job);
  for (const entry of running.values()) entry.controller.abort("shutdown");
  while (running.size > 0) await sleep(20);
  while (completing.size > 0) await Promise.all(completing);
  await periodic.stop();
  if (heartbeat) clearTimeout(heartbeat);
  fence.stop();
  // Unfinished jobs go back to the queue for any worker; the slots leave the workers list.
  await client
    .leave(
      slots.map((slot) => slot.name),
      abandoned.map((job) => ({ jobId: job.id, bossJobId: job.bossJobId })),
    )
    .catch((error: Error) => log(`could not leave (its jobs become zombies): ${error.message}`));
  await runtime.close();
  await jobDirRemoved();
  log("stopped");
  process.exit(0);
}

process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
