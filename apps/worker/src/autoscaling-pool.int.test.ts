// Issue 37 item 1, "what it must show": the `local` autoscaling integration with real processes.
// A server process leads (fleet sampler and autoscaler every second); `npm start` with MODE=pool
// hosts the group "burst" (min 0, max 3, cooldown 3 s). 30 jobs of 2 s arrive: the group wakes
// from zero, reaches 3 workers, drains the queue and returns to 0 after the cooldown; every job
// ran exactly once and succeeded, and every decision is in autoscaling_event and the audit log.
// Then max_workers is lowered while three jobs run: the two workers the pool stops finish theirs.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runPreview, updateWorkerGroupConfig, type Membership, type Principal } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestServer, type TestServer } from "./testing.ts";

const KEY = "autoscaling-pool-test-key-0123456789abcdef";
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const JOBS = 30;

interface PoolProcess {
  output(): string;
  stop(): Promise<void>;
}

/** `npm start`'s launcher in MODE=pool, as an operator runs it on a machine. */
function startPool(env: Record<string, string>): PoolProcess {
  let output = "";
  const child: ChildProcess = spawn(process.execPath, [path.join(root, "scripts/start.ts")], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: os.tmpdir(), ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return {
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // The launcher stops its workers gracefully on SIGTERM; SIGKILL its group if it hangs.
      process.kill(child.pid!, "SIGTERM");
      const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function until<T>(
  what: string,
  read: () => Promise<T | null | undefined | false>,
  ms: number,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value) return value;
    assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("autoscaling with the local integration (MODE=pool)", () => {
  let services: TestServices;
  let membership: Membership;
  let superadmin: Principal;
  let server: TestServer;
  let pool: PoolProcess;

  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "burst"));
    superadmin = { ...membership.principal, isSuperAdmin: true };
    await updateWorkerGroupConfig(services, superadmin, "burst", {
      worker_tags: ["burst"],
      autoscaling: {
        enabled: true,
        min_workers: 0,
        max_workers: 3,
        cooldown_seconds: 3,
        integration: { type: "local" },
      },
    });
    server = await startTestServer({
      DATABASE_URL: services.database.url,
      MILLRACE_SECRET_KEY: KEY,
      SERVER_BACKGROUND: "true",
      FLEET_SAMPLE_SECS: "1",
      AUTOSCALING_INTERVAL_SECS: "1",
    });
    pool = startPool({
      MODE: "pool",
      DATABASE_URL: services.database.url,
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: server.url,
      POOL_GROUPS: "burst",
      POOL_MAX_WORKERS: "3",
      WORKER_GRACE_PERIOD: "10",
      WORKER_PING_INTERVAL: "1",
      JOB_DIR: path.join(os.tmpdir(), `millrace-pool-test-jobs-${process.pid}`),
    });
  });

  let passed = false;
  after(async () => {
    // What the processes said, when something went wrong (the test's own assertion says what).
    if (!passed)
      console.log(`server:\n${server?.output().slice(-4000)}\npool:\n${pool?.output().slice(-6000)}`);
    await pool?.stop();
    await server?.stop();
    await services?.close();
  });

  const liveWorkers = async () =>
    Number(
      (
        await services.pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM worker_ping WHERE worker_group = 'burst' AND last_ping_at > (now() AT TIME ZONE 'UTC') - interval '10 seconds'",
        )
      ).rows[0]!.n,
    );

  it("wakes from zero, reaches 3 workers, drains 30 jobs of 2 s once each and returns to 0", async () => {
    const started = Date.now();
    // The leader's first pass records the group at 0: the pool runs nothing before jobs arrive.
    await until(
      "the group is recorded at 0 workers",
      async () =>
        (
          await services.pool.query(
            "SELECT 1 FROM autoscaling_state WHERE worker_group = 'burst' AND desired = 0",
          )
        ).rowCount,
      20_000,
    );
    assert.equal(await liveWorkers(), 0);

    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      ids.push(
        await runPreview(services, membership, {
          language: "bash",
          content: `echo "start ${i}"\nsleep 2\necho "end ${i}"`,
          args: {},
          tag: "burst",
        }),
      );
    }

    let maxWorkers = 0;
    const watch = setInterval(() => {
      void liveWorkers().then(
        (n) => (maxWorkers = Math.max(maxWorkers, n)),
        () => {},
      );
    }, 250);
    try {
      await until(
        "all 30 jobs completed",
        async () => {
          const { rows } = await services.pool.query<{ n: string }>(
            "SELECT count(*) AS n FROM job WHERE id = ANY($1) AND status IN ('success', 'failure', 'canceled')",
            [ids],
          );
          return Number(rows[0]!.n) === JOBS;
        },
        75_000,
      );
      const drainedSecs = (Date.now() - started) / 1000;
      await until("the group is back at 0 workers", async () => (await liveWorkers()) === 0, 40_000);
      await until(
        "the pool stopped its workers",
        async () => /group burst: 3 → 0 worker\(s\)/.test(pool.output()) && /stopped/.test(pool.output()),
        20_000,
      );
      console.log(
        `drained in ${drainedSecs.toFixed(1)} s, back to 0 after ${((Date.now() - started) / 1000).toFixed(1)} s, ` +
          `at most ${maxWorkers} live worker(s)`,
      );
    } finally {
      clearInterval(watch);
    }
    assert.equal(maxWorkers, 3, "the group reached max_workers and never more");

    // Every job ran once and succeeded: none was lost while workers stopped, none ran twice.
    const { rows: jobs } = await services.pool.query<{
      status: string;
      zombie_restarts: number;
      logs: string;
      worker_name: string;
    }>(
      `SELECT j.status, j.zombie_restarts, j.worker_name, l.logs
         FROM job j JOIN job_log l ON l.job_id = j.id WHERE j.id = ANY($1)`,
      [ids],
    );
    assert.equal(jobs.length, JOBS);
    for (const job of jobs) {
      assert.equal(job.status, "success", job.logs);
      assert.equal(job.zombie_restarts, 0);
      assert.equal(job.logs.match(/^start \d+$/gm)?.length, 1, `ran once: ${job.logs}`);
    }
    assert.equal(new Set(jobs.map((job) => job.worker_name)).size, 3, "the three workers shared the jobs");

    // Every decision, from → to and why: the state table, the event table and the audit log.
    const { rows: events } = await services.pool.query<{
      event_type: string;
      from_workers: number;
      to_workers: number;
      reason: string;
    }>(
      "SELECT event_type, from_workers, to_workers, reason FROM autoscaling_event WHERE worker_group = 'burst' ORDER BY id",
    );
    // Jobs arrive over a few samples: waking may take one step or two (cooldown between), then one
    // step back to zero once idle.
    const outs = events.slice(0, -1);
    const last = events.at(-1)!;
    assert.ok(outs.length >= 1 && outs.every((e) => e.event_type === "scale_out"), JSON.stringify(events));
    assert.equal(outs[0]!.from_workers, 0);
    assert.match(outs[0]!.reason, /job\(s\) waiting and no worker: waking from zero/);
    assert.equal(outs.at(-1)!.to_workers, 3);
    assert.deepEqual([last.event_type, last.from_workers, last.to_workers], ["scale_in", 3, 0]);
    assert.match(last.reason, /^idle: no job waiting or running/);
    const { rows: audit } = await services.pool.query<{
      operation: string;
      parameters: { from: number; to: number };
    }>(
      "SELECT operation, parameters FROM audit_log WHERE resource = 'worker__burst' AND operation LIKE 'autoscaling.%' ORDER BY id",
    );
    assert.deepEqual(
      audit.map((a) => [a.operation, a.parameters.from, a.parameters.to]),
      events.map((e) => [`autoscaling.${e.event_type}`, e.from_workers, e.to_workers]),
    );
    passed = true;
  });

  it("workers stopped while they run jobs let them finish: none is lost or run twice", async () => {
    passed = false;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(
        await runPreview(services, membership, {
          language: "bash",
          content: `echo "start ${i}"\nsleep 4\necho "end ${i}"`,
          args: {},
          tag: "burst",
        }),
      );
    }
    await until(
      "three jobs run at once",
      async () =>
        Number(
          (
            await services.pool.query<{ n: string }>(
              "SELECT count(*) AS n FROM job WHERE id = ANY($1) AND status = 'running'",
              [ids],
            )
          ).rows[0]!.n,
        ) === 3,
      30_000,
    );
    // max_workers lowered under load: two workers are stopped while their jobs run.
    await updateWorkerGroupConfig(services, superadmin, "burst", {
      worker_tags: ["burst"],
      autoscaling: {
        enabled: true,
        min_workers: 0,
        max_workers: 1,
        cooldown_seconds: 3,
        integration: { type: "local" },
      },
    });
    await until(
      "the pool stops two workers",
      async () => /group burst: 3 → 1 worker\(s\)/.test(pool.output()),
      15_000,
    );
    await until(
      "all 6 jobs completed",
      async () =>
        Number(
          (
            await services.pool.query<{ n: string }>(
              "SELECT count(*) AS n FROM job WHERE id = ANY($1) AND status IN ('success', 'failure', 'canceled')",
              [ids],
            )
          ).rows[0]!.n,
        ) === 6,
      60_000,
    );
    const { rows: jobs } = await services.pool.query<{
      status: string;
      zombie_restarts: number;
      logs: string;
    }>(
      `SELECT j.status, j.zombie_restarts, l.logs FROM job j JOIN job_log l ON l.job_id = j.id WHERE j.id = ANY($1)`,
      [ids],
    );
    for (const job of jobs) {
      assert.equal(job.status, "success", job.logs);
      assert.equal(job.zombie_restarts, 0);
      assert.equal(job.logs.match(/^start \d+$/gm)?.length, 1, `ran once: ${job.logs}`);
      assert.equal(job.logs.match(/^end \d+$/gm)?.length, 1, `finished: ${job.logs}`);
    }
    const { rows: bounds } = await services.pool.query<{ reason: string }>(
      "SELECT reason FROM autoscaling_event WHERE worker_group = 'burst' AND event_type = 'bounds' AND from_workers = 3 AND to_workers = 1",
    );
    assert.deepEqual(bounds, [{ reason: "above max_workers (1)" }]);
    passed = true;
  });
});
