// Every job ends, whatever it printed or returned and whatever happened to the database while it
// finished: real worker processes, a real PostgreSQL reached through a TCP proxy the test cuts.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import {
  deployScript,
  getJob,
  handleZombieJobs,
  runScriptByPath,
  waitForJob,
  type JobWithLogs,
  type Membership,
  type NewScriptInput,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";
import { tcpProxy } from "./tcp-proxy.ts";

let services: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];

async function worker(env: Record<string, string> = {}, databaseUrl = services.database.url) {
  const started = await startTestWorker(databaseUrl, { WORKER_PING_INTERVAL: "1", ...env });
  workers.push(started);
  return started;
}

async function deploy(input: Omit<NewScriptInput, "language"> & { language?: string }) {
  return deployScript(services, membership, { language: "bash", ...input });
}

async function run(path: string, args: Record<string, unknown> = {}): Promise<JobWithLogs> {
  const id = await runScriptByPath(services, membership, path, args);
  return waitForJob(services, membership, id, 30_000);
}

describe("every job ends", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    await worker({ WORKER_TAGS: "ends", NUM_WORKERS: "2", JOB_MAX_RESULT_MB: "1" });
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await services?.close();
  });

  it("a NUL byte in output or result is stored (as U+FFFD) and the job ends", async () => {
    await deploy({ path: "u/t/nul_bash", tag: "ends", content: 'printf "a\\0b\\n"\nprintf "c\\0d"' });
    const bash = await run("u/t/nul_bash");
    assert.equal(bash.status, "success", JSON.stringify(bash.result));
    assert.equal(bash.result, "c\uFFFDd");
    assert.match(bash.logs, /a\uFFFDb/);
    await deploy({
      path: "u/t/nul_py",
      tag: "ends",
      language: "python3",
      content: 'def main():\n    print("x\\x00y")\n    return {"k\\x00": "v\\x00", "lone": "\\ud800"}\n',
    });
    const python = await run("u/t/nul_py");
    assert.equal(python.status, "success", JSON.stringify(python.result));
    const result = python.result as Record<string, string>;
    assert.equal(result["k\uFFFD"], "v\uFFFD");
    // python3 writes the lone surrogate as 3 bytes that are no UTF-8: each became U+FFFD.
    assert.match(result.lone!, /^\uFFFD+$/);
    assert.match(python.logs, /x\uFFFDy/);
  });

  it("a result above JOB_MAX_RESULT_MB fails the job with ResultTooLarge, without loading it", async () => {
    await deploy({
      path: "u/t/big_py",
      tag: "ends",
      language: "python3",
      content: 'def main():\n    return "x" * (3 * 1024 * 1024)\n',
    });
    const python = await run("u/t/big_py");
    assert.equal(python.status, "failure");
    const error = (python.result as { error: { name: string; message: string } }).error;
    assert.equal(error.name, "ResultTooLarge");
    assert.match(error.message, /JOB_MAX_RESULT_MB/);
    await deploy({
      path: "u/t/big_bash",
      tag: "ends",
      content: 'head -c 2000000 /dev/zero | tr "\\0" a | sed "s/.*/\\"&\\"/" > result.json',
    });
    const bash = await run("u/t/big_bash");
    assert.equal(bash.status, "failure");
    assert.equal((bash.result as { error: { name: string } }).error.name, "ResultTooLarge");
  });

  it("a job that finishes while the database is unreachable is recorded once it is back", async () => {
    const proxy = await tcpProxy(new URL(services.database.url));
    try {
      await worker({ WORKER_TAGS: "ends-outage", WORKER_NAME_PREFIX: "outage" }, proxy.url);
      await deploy({
        path: "u/t/outage",
        tag: "ends-outage",
        content: 'echo "ran once"\nsleep 1\necho done',
      });
      const id = await runScriptByPath(services, membership, "u/t/outage", {});
      const deadline = Date.now() + 20_000;
      while ((await getJob(services, membership, id)).status !== "running") {
        assert.ok(Date.now() < deadline, "the job started");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      proxy.cut();
      // The job ends about a second in, during the outage: its completion must wait, not be lost.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      assert.equal((await getJob(services, membership, id)).status, "running");
      proxy.restore();
      const job = await waitForJob(services, membership, id, 20_000);
      assert.equal(job.status, "success", JSON.stringify(job.result));
      assert.equal(job.result, "done");
      assert.equal(job.logs.match(/ran once/g)?.length, 1, job.logs);
    } finally {
      await proxy.close();
    }
  });

  it("kill -9 of a worker's process group kills its jobs before they run again; the log keeps both attempts", async () => {
    const marker = `7.${process.pid}${Date.now() % 1000}`;
    const crashing = await worker({ WORKER_TAGS: "ends-crash", WORKER_NAME_PREFIX: "crash" });
    await deploy({
      path: "u/t/crash",
      tag: "ends-crash",
      content: `echo "attempt starts"\nsleep ${marker}\necho finished`,
    });
    const id = await runScriptByPath(services, membership, "u/t/crash", {});
    const sleepers = () =>
      readdirSync("/proc").filter((pid) => {
        try {
          return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
        } catch {
          return false;
        }
      });
    const deadline = Date.now() + 20_000;
    while (sleepers().length === 0) {
      assert.ok(Date.now() < deadline, "the job started");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Output reaches the database every 200 ms while a job runs: what was flushed survives a crash.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await crashing.kill9();
    const gone = Date.now() + 2000;
    while (sleepers().length > 0 && Date.now() < gone)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(sleepers(), [], "the job's processes died with the worker");
    // The zombie monitor (1 s without a ping here) puts it back; another worker runs it again.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const { restarted } = await handleZombieJobs(services.pool, services.boss, {
      timeoutSecs: 1,
      restart: true,
    });
    assert.deepEqual(restarted, [id]);
    await worker({ WORKER_TAGS: "ends-crash" });
    const job = await waitForJob(services, membership, id, 30_000);
    assert.equal(job.status, "success");
    assert.equal(job.logs.match(/attempt starts/g)?.length, 2, job.logs);
    assert.match(job.logs, /zombie restart 1/);
  });

  it("a job whose claim's answer was lost (running in a live worker's slot it never got) runs again", async () => {
    await worker({ WORKER_TAGS: "ends-lost", WORKER_NAME_PREFIX: "lost" });
    await deploy({ path: "u/t/lost", tag: "ends-lost-later", content: "echo ran" });
    const id = await runScriptByPath(services, membership, "u/t/lost", {});
    // What a claim committed just before its connection broke leaves behind.
    await services.pool.query(
      `UPDATE job SET status = 'running', worker_name = 'lost-1', started_at = now() - interval '20 seconds'
        WHERE id = $1`,
      [id],
    );
    await worker({ WORKER_TAGS: "ends-lost-later" });
    const job = await waitForJob(services, membership, id, 30_000);
    assert.equal(job.status, "success", job.logs);
    assert.match(job.logs, /worker lost-1 does not hold this job/);
  });
});
