import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  cancelJob,
  deployScript,
  getJob,
  handleZombieJobs,
  repairOrphanedJobs,
  runScriptByPath,
  SUPERADMIN_SECRET_PRINCIPAL,
  updateWorkerGroupConfig,
  waitForJob,
  type JobWithLogs,
  type Membership,
  type NewScriptInput,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";

let services: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];

async function worker(env: Record<string, string> = {}): Promise<TestWorker> {
  const started = await startTestWorker(services.database.url, { WORKER_PING_INTERVAL: "1", ...env });
  workers.push(started);
  return started;
}

async function deploy(input: Omit<NewScriptInput, "language"> & { language?: string }) {
  return deployScript(services, membership, { language: "bash", ...input });
}

async function statusOf(id: string): Promise<string> {
  return (await getJob(services, membership, id)).status;
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const finished = (job: JobWithLogs) => ["success", "failure", "canceled"].includes(job.status);

describe("job engine with real worker processes", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await services?.close();
  });

  it("a job on a tag no live worker serves stays queued until a worker with that tag starts", async () => {
    await deploy({ path: "u/t/gpu", content: "echo on-gpu", tag: "gpu" });
    const id = await runScriptByPath(services, membership, "u/t/gpu", {});
    const plain = await worker({ WORKER_TAGS: "bash" });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(await statusOf(id), "queued");
    await worker({ WORKER_TAGS: "gpu" });
    const job = await waitForJob(services, membership, id, 20_000);
    assert.equal(job.result, "on-gpu");
    const plainName = /\[worker (\S+)\]/.exec(plain.output())?.[1];
    assert.ok(plainName && !job.workerName?.startsWith(plainName), "the bash-only worker never ran it");
  });

  it("higher priority runs first within a tag", async () => {
    await deploy({ path: "u/t/prio", content: 'n="$1"\necho "$n"', tag: "prio" });
    const low = await runScriptByPath(services, membership, "u/t/prio", { n: "low" }, { priority: 1 });
    const high = await runScriptByPath(services, membership, "u/t/prio", { n: "high" }, { priority: 90 });
    const w = await worker({ WORKER_TAGS: "prio" });
    const [a, b] = [
      await waitForJob(services, membership, low, 20_000),
      await waitForJob(services, membership, high, 20_000),
    ];
    assert.ok(b.startedAt! <= a.startedAt!, "the priority 90 job started first");
    await w.stop();
  });

  it("scheduled_for defers a job", async () => {
    await deploy({ path: "u/t/later", content: "echo later", tag: "later" });
    await worker({ WORKER_TAGS: "later" });
    const at = new Date(Date.now() + 1500);
    const id = await runScriptByPath(services, membership, "u/t/later", {}, { scheduledFor: at });
    await new Promise((resolve) => setTimeout(resolve, 700));
    assert.equal(await statusOf(id), "queued");
    const job = await waitForJob(services, membership, id, 20_000);
    assert.ok(job.startedAt!.getTime() >= at.getTime() - 50, "not started before scheduled_for");
  });

  it("a concurrency limit of 1 makes two jobs run one after the other", async () => {
    await deploy({ path: "u/t/limited", content: "sleep 0.6\necho done", tag: "conc", concurrent_limit: 1 });
    await worker({ WORKER_TAGS: "conc", NUM_WORKERS: "2" });
    const ids = [
      await runScriptByPath(services, membership, "u/t/limited", {}),
      await runScriptByPath(services, membership, "u/t/limited", {}),
    ];
    const [first, second] = await Promise.all(ids.map((id) => waitForJob(services, membership, id, 20_000)));
    const ordered = [first!, second!].sort((x, y) => x.startedAt!.getTime() - y.startedAt!.getTime());
    assert.ok(
      ordered[1]!.startedAt!.getTime() >= ordered[0]!.completedAt!.getTime(),
      "ran one after the other",
    );
    assert.deepEqual(
      ordered.map((job) => job.status),
      ["success", "success"],
    );
  });

  it("cancel: a queued job ends at once, a running job's process tree is killed within seconds", async () => {
    await deploy({ path: "u/t/slow", content: "sleep 30 &\nsleep 30\necho never", tag: "cancel" });
    const queued = await runScriptByPath(services, membership, "u/t/slow", {});
    assert.deepEqual(await cancelJob(services, membership, queued, "not needed"), {
      id: queued,
      state: "canceled",
    });
    const canceledQueued = await getJob(services, membership, queued);
    assert.equal(canceledQueued.status, "canceled");
    assert.equal(canceledQueued.canceledBy, membership.principal.username);
    assert.equal(canceledQueued.cancelReason, "not needed");

    await worker({ WORKER_TAGS: "cancel" });
    const running = await runScriptByPath(services, membership, "u/t/slow", {});
    await until(async () => (await statusOf(running)) === "running", 10_000, "the job to start");
    const asked = Date.now();
    await cancelJob(services, membership, running, "taking too long");
    const job = await waitForJob(services, membership, running, 10_000);
    assert.equal(job.status, "canceled");
    assert.ok(Date.now() - asked < 2500, `canceled in ${Date.now() - asked} ms`);
    assert.match(JSON.stringify(job.result), /taking too long/);
  });

  it("timeout and memory limit end the job with a clear reason; the worker keeps serving", async () => {
    await deploy({ path: "u/t/forever", content: "sleep 60", tag: "limits", timeout: 1 });
    await deploy({
      path: "u/t/hog",
      language: "python3",
      content:
        "def main():\n    blocks = []\n    while True:\n        blocks.append(bytearray(50 * 1024 * 1024))\n",
      tag: "limits",
      memory_limit_mb: 200,
    });
    await deploy({ path: "u/t/ok", content: "echo fine", tag: "limits" });
    await worker({ WORKER_TAGS: "limits" });
    const timedOut = await waitForJob(
      services,
      membership,
      await runScriptByPath(services, membership, "u/t/forever", {}),
      20_000,
    );
    assert.equal(timedOut.status, "failure");
    assert.match(JSON.stringify(timedOut.result), /TimeoutError.*timeout of 1 second/);
    const hog = await waitForJob(
      services,
      membership,
      await runScriptByPath(services, membership, "u/t/hog", {}),
      20_000,
    );
    assert.equal(hog.status, "failure");
    assert.match(JSON.stringify(hog.result), /OutOfMemory.*ran out of memory.*200 MB/);
    const ok = await waitForJob(
      services,
      membership,
      await runScriptByPath(services, membership, "u/t/ok", {}),
      20_000,
    );
    assert.equal(ok.result, "fine");
  });

  it("retries a failing job with a constant delay, keeping each attempt's logs", async () => {
    await deploy({
      path: "u/t/flaky",
      content: 'echo "attempt"\nexit 1',
      tag: "retry",
      retry: { constant: { attempts: 2, seconds: 0.2 } },
    });
    await worker({ WORKER_TAGS: "retry" });
    const job = await waitForJob(
      services,
      membership,
      await runScriptByPath(services, membership, "u/t/flaky", {}),
      20_000,
    );
    assert.equal(job.status, "failure");
    assert.equal(job.retryAttempt, 2);
    assert.equal(job.logs.match(/^attempt$/gm)?.length, 3, job.logs);
    assert.match(job.logs, /retry 2 in 0\.2 s/);
  });

  it("kill -9 of a worker mid-job: the job restarts on another worker and succeeds, completed once", async () => {
    await deploy({ path: "u/t/long", content: "echo start\nsleep 1.5\necho end", tag: "zombie" });
    const doomed = await worker({ WORKER_TAGS: "zombie" });
    const id = await runScriptByPath(services, membership, "u/t/long", {});
    await until(async () => (await statusOf(id)) === "running", 10_000, "the job to start");
    await doomed.kill9();
    await worker({ WORKER_TAGS: "zombie" });
    await new Promise((resolve) => setTimeout(resolve, 2200));
    const { restarted } = await handleZombieJobs(services.pool, services.boss, {
      timeoutSecs: 2,
      restart: true,
    });
    assert.deepEqual(restarted, [id]);
    const job = await waitForJob(services, membership, id, 20_000);
    assert.equal(job.status, "success");
    assert.equal(job.zombieRestarts, 1);
    assert.match(job.logs, /has not pinged .*zombie restart 1 of 3/);
    assert.equal(job.logs.match(/^end$/gm)?.length, 1, "the restarted run completed once");
    // Each claim consumed its pg-boss dispatch (see consumingFetch): neither the dead one nor the
    // new one is left to be claimed again.
    const { rows } = await services.pool.query("SELECT state FROM pgboss.job WHERE data->>'jobId' = $1", [
      id,
    ]);
    assert.deepEqual(rows, [], "no dispatch of the job is left in pg-boss");
  });

  it("a job whose workers keep dying is failed after 3 restarts; RESTART_ZOMBIE_JOBS=false fails at once", async () => {
    await deploy({ path: "u/t/cursed", content: "sleep 60", tag: "cursed" });
    const id = await runScriptByPath(services, membership, "u/t/cursed", {});
    for (let round = 0; round < 4; round++) {
      const w = await worker({ WORKER_TAGS: "cursed" });
      await until(async () => (await statusOf(id)) === "running", 10_000, "the job to start");
      await w.kill9();
      await services.pool.query("UPDATE worker_ping SET last_ping_at = now() - interval '1 hour'");
      await services.pool.query("UPDATE job SET started_at = now() - interval '1 hour' WHERE id = $1", [id]);
      await handleZombieJobs(services.pool, services.boss, { timeoutSecs: 2, restart: true });
    }
    const job = await getJob(services, membership, id);
    assert.ok(finished(job));
    assert.equal(job.status, "failure");
    assert.equal(job.zombieRestarts, 3);
    assert.match(JSON.stringify(job.result), /ZombieJob.*restarted 3 times already/);

    const other = await runScriptByPath(services, membership, "u/t/cursed", {});
    const w = await worker({ WORKER_TAGS: "cursed" });
    await until(async () => (await statusOf(other)) === "running", 10_000, "the job to start");
    await w.kill9();
    await services.pool.query("UPDATE worker_ping SET last_ping_at = now() - interval '1 hour'");
    await services.pool.query("UPDATE job SET started_at = now() - interval '1 hour' WHERE id = $1", [other]);
    const { failed } = await handleZombieJobs(services.pool, services.boss, {
      timeoutSecs: 2,
      restart: false,
    });
    assert.deepEqual(failed, [other]);
    assert.match((await getJob(services, membership, other)).logs, /RESTART_ZOMBIE_JOBS is false/);
  });

  it("SIGTERM: the worker stops claiming, finishes what it can, and puts the rest back in the queue", async () => {
    await deploy({ path: "u/t/quick", content: "sleep 0.3\necho quick", tag: "drain" });
    await deploy({ path: "u/t/lengthy", content: "sleep 20\necho lengthy", tag: "drain" });
    const stopping = await worker({ WORKER_TAGS: "drain", NUM_WORKERS: "2", WORKER_GRACE_PERIOD: "1" });
    const quick = await runScriptByPath(services, membership, "u/t/quick", {});
    const lengthy = await runScriptByPath(services, membership, "u/t/lengthy", {});
    await until(
      async () => (await statusOf(quick)) !== "queued" && (await statusOf(lengthy)) === "running",
      10_000,
      "both jobs to start",
    );
    await stopping.stop(15_000);
    assert.match(stopping.output(), /put 1 unfinished job\(s\) back in the queue/);
    assert.equal((await getJob(services, membership, quick)).result, "quick");
    const requeued = await getJob(services, membership, lengthy);
    assert.equal(requeued.status, "queued");
    assert.match(requeued.logs, /stopped before the job finished: job put back in the queue/);
  });

  it("a queued job whose pg-boss dispatch was lost is re-dispatched by the orphan repair", async () => {
    await deploy({ path: "u/t/orphan", content: "echo rescued", tag: "orphan" });
    const id = await runScriptByPath(services, membership, "u/t/orphan", {});
    // As if a worker had fetched it and died before marking it running, long ago.
    await services.pool.query("UPDATE pgboss.job SET state = 'failed' WHERE name = 'orphan'");
    await services.pool.query("UPDATE job SET scheduled_for = now() - interval '5 minutes' WHERE id = $1", [
      id,
    ]);
    await worker({ WORKER_TAGS: "orphan" });
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await statusOf(id), "queued", "nothing can claim it");
    assert.deepEqual(await repairOrphanedJobs(services.pool, services.boss), [id]);
    const job = await waitForJob(services, membership, id, 20_000);
    assert.equal(job.result, "rescued");
    assert.match(job.logs, /lost its dispatch; re-dispatched/);
  });

  it("a worker picks up its group's new tags without a restart, and logs which tags it serves", async () => {
    await deploy({ path: "u/t/special", content: "echo special", tag: "special" });
    const id = await runScriptByPath(services, membership, "u/t/special", {});
    const grouped = await worker({ WORKER_GROUP: "reconfigured" });
    assert.match(grouped.output(), /group "reconfigured".*serving tags: bash, python3/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await statusOf(id), "queued", "special is no default tag");
    await updateWorkerGroupConfig(services, SUPERADMIN_SECRET_PRINCIPAL, "reconfigured", {
      worker_tags: ["special"],
    });
    const job = await waitForJob(services, membership, id, 15_000);
    assert.equal(job.result, "special");
    assert.match(grouped.output(), /now serving tags: special/);
  });
});
