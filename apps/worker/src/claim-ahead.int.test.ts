import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  cancelJob,
  deployScript,
  getJob,
  runScriptByPath,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";

// A worker whose jobs are short claims the next job for a busy slot shortly before the slot is
// expected to free (see Dispatcher). These tests pin what must stay true of such a job.

let services: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function running(tag: string): Promise<{ id: string; started_at: Date }[]> {
  const { rows } = await services.pool.query<{ id: string; started_at: Date }>(
    "SELECT id, started_at FROM job WHERE tag = $1 AND status = 'running' ORDER BY started_at",
    [tag],
  );
  return rows;
}

/**
 * A one-slot worker on `tag` that has seen eight runs of the 0.4 s script. Three are enough to
 * predict, but the first run (a sandbox set up cold) can take tens of ms longer on a slow VM and
 * weighs half of a three-run average: a prediction that late leaves no moment to claim ahead.
 */
async function warmWorker(tag: string): Promise<TestWorker> {
  await deployScript(services, membership, {
    path: `u/t/${tag}`,
    language: "bash",
    content: "sleep 0.4",
    tag,
  });
  const worker = await startTestWorker(services.database.url, { WORKER_TAGS: tag, NUM_WORKERS: "1" });
  workers.push(worker);
  for (let i = 0; i < 8; i++) {
    await waitForJob(
      services,
      membership,
      await runScriptByPath(services, membership, `u/t/${tag}`, {}),
      20_000,
    );
  }
  return worker;
}

describe("claiming ahead for a slot about to free", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await services?.close();
  });

  it("a job claimed ahead that is canceled never runs and ends as canceled; the others run", async () => {
    await warmWorker("ahead1");
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await runScriptByPath(services, membership, "u/t/ahead1", {}));
    // One slot, two running jobs: the second was claimed ahead.
    // The rows of that moment: a second look may come after the slot freed (the window is short).
    let both: { id: string }[] = [];
    await until(async () => (both = await running("ahead1")).length === 2, 10_000, "a job claimed ahead");
    const waiting = both[1]!.id;
    await cancelJob(services, membership, waiting, "not needed");
    const jobs = await Promise.all(ids.map((id) => waitForJob(services, membership, id, 20_000)));
    const canceled = jobs.find((job) => job.id === waiting)!;
    assert.equal(canceled.status, "canceled");
    assert.equal(canceled.logs, "", "it never started");
    assert.deepEqual(
      jobs.filter((job) => job.id !== waiting).map((job) => job.status),
      ["success", "success"],
    );
  });

  it("a job that waited for its slot records when it really started", async () => {
    await warmWorker("ahead2");
    const first = await runScriptByPath(services, membership, "u/t/ahead2", {});
    const second = await runScriptByPath(services, membership, "u/t/ahead2", {});
    const [a, b] = [
      await waitForJob(services, membership, first, 20_000),
      await waitForJob(services, membership, second, 20_000),
    ];
    // The slot runs one job at a time: the second started once the first's 0.4 s were over.
    assert.ok(b.startedAt!.getTime() - a.startedAt!.getTime() >= 400, "starts at least 0.4 s apart");
  });

  it("SIGTERM puts a job claimed ahead back in the queue, and another worker runs it once", async () => {
    const worker = await warmWorker("ahead3");
    const ids = [];
    for (let i = 0; i < 2; i++) ids.push(await runScriptByPath(services, membership, "u/t/ahead3", {}));
    // The rows of that moment: a second look may come after the slot freed (the window is short).
    let both: { id: string }[] = [];
    await until(async () => (both = await running("ahead3")).length === 2, 10_000, "a job claimed ahead");
    const waiting = both[1]!.id;
    await worker.stop();
    const released = await getJob(services, membership, waiting);
    assert.ok(
      released.status === "queued" || released.status === "success",
      `released or (if the slot freed first) run, got ${released.status}`,
    );
    if (released.status === "queued") assert.equal(released.workerName, null);
    workers.push(await startTestWorker(services.database.url, { WORKER_TAGS: "ahead3" }));
    const jobs = await Promise.all(ids.map((id) => waitForJob(services, membership, id, 20_000)));
    assert.deepEqual(
      jobs.map((job) => job.status),
      ["success", "success"],
    );
    assert.doesNotMatch(jobs[1]!.logs, /put back in the queue/, "a release is not a restart");
  });
});
