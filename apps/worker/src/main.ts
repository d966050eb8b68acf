import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import { claimJob, nextDueTag, startBoss } from "@millrace/core";
import { assertNodeVersion } from "@millrace/core/config";
import { createPool } from "@millrace/db";
import { DEFAULT_TAGS, interpreterPaths } from "@millrace/runtime";
import { loadWorkerEnv } from "./env.ts";
import { pingWorkers, PING_INTERVAL_MS, type SlotState } from "./heartbeat.ts";
import { runClaimedJob } from "./run-job.ts";
import { WakeSignal } from "./wake.ts";

assertNodeVersion();
const env = loadWorkerEnv();
const tags = env.WORKER_TAGS ?? [...DEFAULT_TAGS];
const prefix =
  env.WORKER_NAME_PREFIX ?? `wk-${env.WORKER_GROUP}-${os.hostname()}-${randomBytes(3).toString("hex")}`;
const log = (message: string) => console.log(`[worker ${prefix}] ${message}`);

fs.mkdirSync(env.JOB_DIR, { recursive: true, mode: 0o700 });
const pool = createPool(env.DATABASE_URL, { max: env.NUM_WORKERS + 3, applicationName: "millrace-worker" });
const boss = await startBoss(env.DATABASE_URL, "worker");
const wake = new WakeSignal(env.DATABASE_URL, tags);
await wake.start();

const slots: SlotState[] = Array.from({ length: env.NUM_WORKERS }, (_, i) => ({
  name: `${prefix}-${i + 1}`,
  currentJobId: null,
  jobsExecuted: 0,
}));
const running = new Map<string, AbortController>();
let stopping = false;

const deps = {
  pool,
  boss,
  workerName: "",
  jobDir: env.JOB_DIR,
  baseUrl: env.BASE_URL,
  baseInternalUrl: env.BASE_INTERNAL_URL ?? env.BASE_URL,
};

// Rechecked even without a notification: deferred jobs become due, and a lost LISTEN
// connection must not stall the queue.
const IDLE_RECHECK_MS = 1000;

async function claimLoop(slot: SlotState): Promise<void> {
  while (!stopping) {
    try {
      const seen = wake.current();
      const tag = await nextDueTag(pool, tags);
      if (!tag) {
        await wake.wait(seen, IDLE_RECHECK_MS);
        continue;
      }
      const job = await claimJob(pool, boss, tag, slot.name);
      if (!job) continue;
      slot.currentJobId = job.id;
      const controller = new AbortController();
      running.set(job.id, controller);
      try {
        await runClaimedJob({ ...deps, workerName: slot.name }, job, controller.signal);
      } finally {
        running.delete(job.id);
        slot.currentJobId = null;
        slot.jobsExecuted++;
      }
    } catch (error) {
      if (stopping) break;
      log(`claim loop error: ${error instanceof Error ? error.message : String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

const paths = interpreterPaths();
log(`group "${env.WORKER_GROUP}", ${env.NUM_WORKERS} slot(s), serving tags: ${tags.join(", ")}`);
log(`interpreters: bash=${paths.bash} python3=${paths.python3} bun=${paths.bun} deno=${paths.deno}`);

await pingWorkers(pool, env.WORKER_GROUP, tags, slots);
const heartbeat = setInterval(() => {
  pingWorkers(pool, env.WORKER_GROUP, tags, slots).catch((error: Error) =>
    log(`ping failed: ${error.message}`),
  );
}, PING_INTERVAL_MS);
const loops = slots.map((slot) => claimLoop(slot));

async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log(
    `${signal}: no longer claiming; waiting up to ${env.WORKER_GRACE_PERIOD} s for ${running.size} running job(s)`,
  );
  wake.wakeAll();
  const graceOver = new Promise((resolve) => setTimeout(resolve, env.WORKER_GRACE_PERIOD * 1000).unref());
  await Promise.race([Promise.all(loops), graceOver]);
  // Jobs still running past the grace period are killed; their rows stay running and the zombie
  // monitor puts them back in the queue once this worker's pings stop.
  for (const controller of running.values()) controller.abort("shutdown");
  clearInterval(heartbeat);
  await wake.close();
  await boss.stop({ graceful: false, timeout: 2000 }).catch(() => {});
  await pool.end().catch(() => {});
  log("stopped");
  process.exit(0);
}

process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
