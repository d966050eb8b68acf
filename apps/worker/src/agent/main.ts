// MODE=agent: a worker without database access. It claims, logs, heartbeats and completes over
// the server's /api/agent_workers routes with its AGENT_TOKEN, and runs each job with the same
// executor as a database worker (run-job.ts: bubblewrap, limits, dependencies, secret masking).
// Its slots are worker_ping rows the server writes for it: when it dies (kill -9, a lost
// network), they stop being refreshed and the zombie monitor puts its jobs back in the queue.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import type { Completion } from "@millrace/core";
import { assertNodeVersion } from "@millrace/core/config";
import {
  detectSandbox,
  interpreterPaths,
  jobDirRemoved,
  ProcessLauncher,
  WarmSandboxes,
} from "@millrace/runtime";
import { installerEnv } from "../env.ts";
import { Fence } from "../fence.ts";
import { slotPing, type SlotState } from "../heartbeat.ts";
import { defaultCacheRoot } from "../job-dependencies.ts";
import { jobMemoryDefault } from "../job-memory.ts";
import { Occupancy } from "../occupancy.ts";
import { runClaimedJob, type JobIsolation, type RunJobDeps } from "../run-job.ts";
import { AgentClient, AgentHttpError, type AgentJob } from "./client.ts";
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

fs.mkdirSync(env.JOB_DIR, { recursive: true, mode: 0o700 });
const sandbox = env.DISABLE_SANDBOX
  ? ({ kind: "none", reason: "DISABLE_SANDBOX is set" } as const)
  : detectSandbox();
// As on a database worker: without a sandbox no job runs unless the operator opted out on purpose.
if (sandbox.kind === "none" && !env.DISABLE_SANDBOX) {
  console.error(
    `[agent] sandbox unavailable (${sandbox.reason}): install bubblewrap, or set DISABLE_SANDBOX=true (trusted code only)`,
  );
  process.exit(1);
}
const sandboxState = sandbox.kind === "bubblewrap" ? `bubblewrap ${sandbox.version}` : "disabled";
const isolation: JobIsolation = { sandbox: sandbox.kind !== "none", network: true };
const launcher = new ProcessLauncher();
await launcher.start();
const warmSandboxes =
  sandbox.kind === "bubblewrap"
    ? new WarmSandboxes({ workRoot: env.JOB_DIR, bwrap: sandbox.path, launcher, perSpec: 3 })
    : null;

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
  jobDir: env.JOB_DIR,
  baseUrl: env.BASE_URL,
  // Jobs call the server themselves (their WM_TOKEN) at the address the agent uses.
  baseInternalUrl: env.BASE_INTERNAL_URL,
  isolation,
  launcher,
  warmSandboxes,
  dependencies: {
    cacheRoot: env.DEPENDENCY_CACHE_DIR ?? defaultCacheRoot(env.JOB_DIR),
    installerEnv: installerEnv(env),
  },
  diskQuotaBytes: env.JOB_DISK_QUOTA_MB * 1024 * 1024,
  defaultMemoryLimitMb: jobMemoryDefault(env.JOB_MEMORY_LIMIT_MB, env.NUM_WORKERS),
  maxResultBytes: env.JOB_MAX_RESULT_MB * 1024 * 1024,
};

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
// answered ping no longer holds them, and the server puts them back in the queue (agentPing).
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
function report(completion: Completion): void {
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
    .catch((error: Error) => send(unrecordable(completion, error)))
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
  void runClaimedJob(deps, job, entry.controller.signal, () => entry.cancelReason)
    .then((completion) => {
      // Null: stopping; the job goes back to the queue with the agent's leave. Or fenced: no
      // longer held, so the server puts it back at the next answered ping.
      if (completion) report(completion);
      else if (entry.controller.signal.reason === "fence") {
        claimed.delete(job.id);
        fencedJobs.set(job.id, job.bossJobId);
        log(`job ${job.id} killed by the fence: its outcome is not reported`);
      }
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

const paths = interpreterPaths();
log(`interpreters: bash=${paths.bash} python3=${paths.python3} bun=${paths.bun} deno=${paths.deno}`);
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
  if (heartbeat) clearTimeout(heartbeat);
  fence.stop();
  // Unfinished jobs go back to the queue for any worker; the slots leave the workers list.
  await client
    .leave(
      slots.map((slot) => slot.name),
      abandoned.map((job) => ({ jobId: job.id, bossJobId: job.bossJobId })),
    )
    .catch((error: Error) => log(`could not leave (its jobs become zombies): ${error.message}`));
  warmSandboxes?.close();
  await launcher.close();
  await jobDirRemoved();
  log("stopped");
  process.exit(0);
}

process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
