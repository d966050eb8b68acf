import { randomBytes } from "node:crypto";
import os from "node:os";
import {
  createKeyring,
  effectiveWorkerTags,
  JOB_CANCEL_CHANNEL,
  queuedChannel,
  JOB_SECRET_READ_CHANNEL,
  loadWorkerGroupConfig,
  startBoss,
  watchDatabasePool,
  type WorkerGroupConfig,
  WORKER_CONFIG_CHANNEL,
} from "@millrace/core";
import { assertNodeVersion } from "@millrace/core/config";
import {
  connectionBudget,
  createPool,
  describeBudget,
  assertPoolerSettings,
  warnIfNoRoom,
  WORKER_CLAIM_POOL_SIZE,
} from "@millrace/db";
import { jobDirRemoved } from "@millrace/runtime";
import { Dispatcher } from "./dispatcher.ts";
import { DedicatedRunner, dedicatedTarget } from "./dedicated.ts";
import { loadWorkerEnv } from "./env.ts";
import { dbWorkerScriptRecorder, PeriodicScript, runWorkerScript } from "./init-scripts.ts";
import { Fence } from "./fence.ts";
import { pingWorkers, type SlotState } from "./heartbeat.ts";
import { Notifications } from "./notifications.ts";
import { secretReadByJob } from "./job-secrets.ts";
import { dbJobStore } from "./job-store.ts";
import { Occupancy } from "./occupancy.ts";
import { sweepStaleJobFolders } from "./stale-job-folders.ts";
import { groupRuntimeOf } from "./group-runtime.ts";
import { startJobRuntime } from "./startup.ts";

const VERSION = "0.1.0";
// While jobs run, cancel requests are also polled this often (in case a NOTIFY was missed).
const CANCEL_POLL_MS = 1000;

assertNodeVersion();
const env = loadWorkerEnv();
const prefix =
  env.WORKER_NAME_PREFIX ?? `wk-${env.WORKER_GROUP}-${os.hostname()}-${randomBytes(3).toString("hex")}`;
const log = (message: string) => console.log(`[worker ${prefix}] ${message}`);

const budget = connectionBudget("worker", {
  poolSize: env.DB_POOL_SIZE,
  queuePoolSize: env.DB_QUEUE_POOL_SIZE,
});
log(describeBudget(budget));
await warnIfNoRoom(env.DATABASE_URL, budget, "this worker", log);
await assertPoolerSettings(env.DATABASE_URL);
const pool = createPool(env.DATABASE_URL, { max: env.DB_POOL_SIZE, applicationName: "millrace-worker" });
// Claims commit asynchronously (see claimJobs); results never do.
const claimPool = createPool(env.DATABASE_URL, {
  max: WORKER_CLAIM_POOL_SIZE,
  applicationName: "millrace-worker-claim",
  asyncCommit: true,
});
const boss = await startBoss(env.DATABASE_URL, "worker", { max: env.DB_QUEUE_POOL_SIZE });
watchDatabasePool(pool);
watchDatabasePool(claimPool);
// The job folder, the sandbox, the launcher, warm sandboxes and metrics: as on an agent worker.
const runtime = await startJobRuntime(env, log);
const { sandbox, refusesJobs, sandboxState, isolation, launcher, warmSandboxes } = runtime;
// Folders of jobs a killed worker left in JOB_DIR (waiting sandboxes' and FIFOs' folders are
// removed by the next process that makes its own: see owned-folders.ts).
sweepStaleJobFolders(pool, env.JOB_DIR, log);

function setNetwork(config: { network?: boolean } | null): void {
  const network = config?.network !== false;
  if (network === isolation.network) return;
  isolation.network = network;
  const ignored = !network && !isolation.sandbox ? " (not enforced: jobs run without the sandbox)" : "";
  log(`worker group config: jobs ${network ? "have" : "are cut off from"} the network${ignored}`);
}

const secrets = createKeyring(env.MILLRACE_SECRET_KEY);
const runDeps = {
  pool,
  claimPool,
  boss,
  store: dbJobStore(pool, secrets),
  ...runtime.executor,
  baseUrl: env.BASE_URL,
  baseInternalUrl: env.BASE_INTERNAL_URL ?? env.BASE_URL,
  isolation,
  launcher,
  warmSandboxes,
  secrets,
  dedicated: null as DedicatedRunner | null,
  groupRuntime: groupRuntimeOf(null, log),
};
const workerScripts = {
  recorder: dbWorkerScriptRecorder(pool, env.WORKER_GROUP, prefix),
  jobDir: env.JOB_DIR,
  group: env.WORKER_GROUP,
  workerName: prefix,
  log,
};
const periodic = new PeriodicScript(workerScripts);
const group: { config: WorkerGroupConfig | null } = { config: null };
let initDone = false;

async function currentTags(): Promise<string[]> {
  const config = await loadWorkerGroupConfig(pool, env.WORKER_GROUP).catch((error: Error) => {
    // A broken stored config must not stop the worker: it serves the default tags and says why.
    log(`worker group config of "${env.WORKER_GROUP}" ignored: ${error.message}`);
    return null;
  });
  setNetwork(config);
  runDeps.groupRuntime = groupRuntimeOf(config, log);
  group.config = config;
  if (initDone) periodic.configure(config);
  if (refusesJobs) return [];
  // A dedicated worker serves only its script's tag (DEDICATED_WORKER, or the group's dedicated_worker).
  const target = dedicatedTarget(env.DEDICATED_WORKER, config);
  if (target?.tag !== runDeps.dedicated?.target.tag) {
    void runDeps.dedicated?.close();
    runDeps.dedicated = target ? new DedicatedRunner(runDeps, target, log) : null;
    await runDeps.dedicated?.start();
  }
  return target ? [target.tag] : effectiveWorkerTags(env.WORKER_TAGS, config);
}

let tags = await currentTags();
const slots: SlotState[] = Array.from({ length: env.NUM_WORKERS }, (_, i) => ({
  name: `${prefix}-${i + 1}`,
  currentJobId: null,
  jobsExecuted: 0,
  occupancy: new Occupancy(),
}));
const dispatcher = new Dispatcher(runDeps, slots, tags, log);

async function reloadTags(): Promise<void> {
  const next = await currentTags();
  if (next.join(",") === tags.join(",")) return;
  tags = next;
  dispatcher.setTags(tags);
  await followServedTags();
  log(`worker group config changed: now serving tags: ${tags.join(", ")}`);
}

async function pollCancels(): Promise<void> {
  const ids = dispatcher.runningJobIds();
  if (ids.length === 0) return;
  const { rows } = await pool.query<{ id: string; cancel_reason: string | null; canceled_by: string }>(
    "SELECT id, canceled_by, cancel_reason FROM job WHERE id = ANY($1) AND canceled_by IS NOT NULL",
    [ids],
  );
  for (const row of rows) dispatcher.cancel(row.id, cancelMessage(row.canceled_by, row.cancel_reason));
}

function cancelMessage(by: string, reason: string | null): string {
  return `canceled by ${by}${reason ? `: ${reason}` : ""}`;
}

const notifications = new Notifications(
  env.DATABASE_URL,
  {
    [JOB_CANCEL_CHANNEL]: (jobId) => {
      if (dispatcher.runningJobIds().includes(jobId)) void pollCancels();
    },
    [WORKER_CONFIG_CHANNEL]: (group) => {
      if (group === env.WORKER_GROUP) void reloadTags().catch(() => {});
    },
    // A job's token read a secret: its running jobs mask the value.
    [JOB_SECRET_READ_CHANNEL]: (payload) => secretReadByJob(runDeps, payload),
  },
  () => {
    dispatcher.wake.wakeAll();
    void reloadTags().catch(() => {});
  },
);
// A job queued on a tag this worker serves: the payload names the tag, fetched from directly (one
// query less before the job starts). Only the served tags' channels are listened on.
const followServedTags = () =>
  notifications.follow(
    new Map(
      tags.map((tag) => [
        queuedChannel(tag),
        (payload: string) => {
          if (payload === tag && tags.includes(tag)) dispatcher.hint(tag, 1000);
        },
      ]),
    ),
  );
await followServedTags();
await notifications.start();

log(
  sandbox.kind === "bubblewrap"
    ? `sandbox: bubblewrap ${sandbox.version}`
    : refusesJobs
      ? `sandbox: unavailable (${sandbox.reason}): this worker runs NO jobs. Install bubblewrap ` +
        `(apt-get install bubblewrap), or set DISABLE_SANDBOX=true to run jobs without isolation ` +
        `(every job as one user: only for code you trust)`
      : `sandbox: disabled (DISABLE_SANDBOX is set): jobs run WITHOUT isolation, environment scrubbed, limits applied`,
);
log(
  runDeps.defaultMemoryLimitMb === null
    ? "memory: jobs without a memory limit of their own have none (JOB_MEMORY_LIMIT_MB=0)"
    : `memory: jobs without a memory limit of their own get ${runDeps.defaultMemoryLimitMb} MB` +
        (env.JOB_MEMORY_LIMIT_MB === undefined
          ? " (each slot's share of 3/4 of the memory; JOB_MEMORY_LIMIT_MB sets it)"
          : ""),
);
// Last of the start lines: whoever waits for "serving tags" (tests, the bench) has read them all.
log(
  `group "${env.WORKER_GROUP}", ${env.NUM_WORKERS} slot(s), serving tags: ${refusesJobs ? "none (no sandbox)" : tags.join(", ")}`,
);

// Self-fencing (fence.ts): no ping committed for half of ZOMBIE_JOB_TIMEOUT (as the leader
// published it) and the running jobs are killed before the zombie monitor could rerun them
// elsewhere; claiming resumes once a ping is answered again.
let zombieRestart = true;
const fence = new Fence({
  timeoutSecs: env.ZOMBIE_JOB_TIMEOUT,
  onFence(silentMs) {
    const killed = dispatcher.fence();
    log(
      `FENCED: no heartbeat reached the database for ${(silentMs / 1000).toFixed(1)} s ` +
        `(ZOMBIE_JOB_TIMEOUT ${fence.zombieTimeoutSecs} s): killed ${killed} running job(s) so that ` +
        `no job runs here and on another worker at once; their outcomes will not be reported; ` +
        `claiming stops until the database answers`,
    );
  },
});
let recovering: Promise<void> | null = null;
function recover(): void {
  const silentSecs = Math.round(fence.zombieTimeoutSecs * 0.5);
  recovering ??= dispatcher
    .unfence({ restart: zombieRestart }, silentSecs)
    .then((requeued) =>
      log(`the database answers again: ${requeued} fenced job(s) back in the queue; claiming resumes`),
    )
    .catch((error: Error) => log(`still fenced: ${error.message}`))
    .finally(() => (recovering = null));
}
const ping = () => {
  const answered = fence.sending();
  return pingWorkers(pool, env.WORKER_GROUP, tags, slots, VERSION, sandboxState).then(
    ({ zombie }) => {
      if (zombie) {
        fence.setTimeoutSecs(zombie.timeoutSecs);
        zombieRestart = zombie.restart;
      }
      answered();
      if (dispatcher.fenced && !fence.fenced) recover();
    },
    (error: Error) => log(`ping failed: ${error.message}`),
  );
};
await ping();
fence.start();
let pingTimer: NodeJS.Timeout | null = null;
const schedulePing = () => {
  pingTimer = setTimeout(
    () => {
      void ping();
      schedulePing();
    },
    fence.pingIntervalMs(env.WORKER_PING_INTERVAL * 1000),
  );
};
schedulePing();
const heartbeat = setInterval(() => {
  void dispatcher
    .reconcile(slots.map((slot) => slot.name))
    .catch((error: Error) => log(`could not check the jobs held: ${error.message}`));
  // Also a safety net for a missed config NOTIFY.
  void reloadTags().catch(() => {});
}, env.WORKER_PING_INTERVAL * 1000);
const cancelPoll = setInterval(() => void pollCancels().catch(() => {}), CANCEL_POLL_MS);
// Init script first (recorded as a job); a failure is logged and the worker carries on.
if (group.config?.init_bash) await runWorkerScript(workerScripts, "init_script", group.config.init_bash);
initDone = true;
periodic.configure(group.config);
dispatcher.start();

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log(`${signal}: no longer claiming; letting running jobs finish (up to ${env.WORKER_GRACE_PERIOD} s)`);
  await dispatcher.stop(env.WORKER_GRACE_PERIOD * 1000);
  await periodic.stop();
  await runDeps.dedicated?.close();
  await runtime.close();
  await jobDirRemoved();
  clearInterval(heartbeat);
  clearInterval(cancelPoll);
  if (pingTimer) clearTimeout(pingTimer);
  fence.stop();
  // A worker that stops on purpose leaves the list at once: only one that goes silent is
  // "offline" (the instance's worker_offline alert), so scaling down raises nothing.
  await pool
    .query("DELETE FROM worker_ping WHERE name = ANY($1)", [slots.map((slot) => slot.name)])
    .catch((error: Error) => log(`could not leave the workers list: ${error.message}`));
  await notifications.close();
  await boss.stop({ graceful: false, timeout: 2000 }).catch(() => {});
  await Promise.all([pool.end(), claimPool.end()]).catch(() => {});
  log("stopped");
  process.exit(0);
}

process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
