import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  dedicatedTag,
  deployScript,
  invalidateDedicatedTagsCache,
  loadDedicatedTags,
  runScriptByPath,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";

let services: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];

const BUN_V1 = `export function main(n: number, crash = false) {
  if (crash) process.exit(7);
  console.log("job", n, process.env.WM_JOB_ID);
  return { n, v: 1, pid: process.pid, job: process.env.WM_JOB_ID };
}
`;
const BUN_V2 = BUN_V1.replace("v: 1", "v: 2");

async function routed(tag: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    invalidateDedicatedTagsCache(services.pool);
    if ((await loadDedicatedTags(services.pool)).has(tag)) return;
    if (Date.now() > deadline) throw new Error(`jobs are not routed to ${tag}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function run(path: string, args: Record<string, unknown>) {
  const id = await runScriptByPath(services, membership, path, args);
  const job = await waitForJob(services, membership, id, 30_000);
  const { rows } = await services.pool.query<{ tag: string }>("SELECT tag FROM job WHERE id = $1", [id]);
  return { id, job, tag: rows[0]!.tag, result: job.result as Record<string, unknown> };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("dedicated workers", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
  });
  after(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await services?.close();
  });

  it("DEDICATED_WORKER: one warm bun process runs every job of the script, replaced by a new version", async () => {
    const ws = membership.workspace.id;
    const v1 = await deployScript(services, membership, {
      path: "u/x/fast",
      language: "bun",
      content: BUN_V1,
    });
    const worker = await startTestWorker(services.database.url, { DEDICATED_WORKER: `${ws}:u/x/fast` });
    workers.push(worker);
    const tag = dedicatedTag(ws, "u/x/fast");
    assert.match(worker.output(), new RegExp(`serving tags: ${tag.replaceAll("/", "\\/")}`));
    await routed(tag);

    const first = await run("u/x/fast", { n: 1 });
    const second = await run("u/x/fast", { n: 2 });
    assert.equal(first.tag, tag);
    assert.equal(first.job.status, "success", first.job.logs);
    assert.deepEqual([first.result.n, first.result.v, first.result.job], [1, 1, first.id]);
    assert.deepEqual([second.result.n, second.result.job], [2, second.id]);
    assert.equal(second.result.pid, first.result.pid, "the same process served both jobs");
    assert.match(second.job.logs, new RegExp(`job 2 ${second.id}`));
    assert.doesNotMatch(second.job.logs, /job 1/, "each job has only its own output");

    // A crash fails that job only; the next job gets a fresh process.
    const crashed = await run("u/x/fast", { n: 3, crash: true });
    assert.equal(crashed.job.status, "failure");
    assert.match(JSON.stringify(crashed.job.result), /exit code 7/);
    const after = await run("u/x/fast", { n: 4 });
    assert.equal(after.job.status, "success", after.job.logs);
    assert.notEqual(after.result.pid, first.result.pid);

    // A new version: its jobs run the new code in a new process; the old one is stopped.
    await deployScript(services, membership, {
      path: "u/x/fast",
      language: "bun",
      content: BUN_V2,
      parentHash: v1.hash,
    });
    const upgraded = await run("u/x/fast", { n: 5 });
    assert.equal(upgraded.result.v, 2);
    assert.notEqual(upgraded.result.pid, after.result.pid);
    const oldPid = after.result.pid as number;
    const deadline = Date.now() + 30_000;
    while (alive(oldPid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(alive(oldPid), false, "the old version's process was replaced");
    const again = await run("u/x/fast", { n: 6 });
    assert.equal(again.result.pid, upgraded.result.pid);
  });

  it("a group's dedicated_worker serves a python3 script from a warm process", async () => {
    const ws = membership.workspace.id;
    await deployScript(services, membership, {
      path: "u/x/fastpy",
      language: "python3",
      content:
        "import os\ncount = 0\n\ndef main(x: int):\n    global count\n    count += 1\n    return {'x': x * 2, 'pid': os.getpid(), 'count': count}\n",
    });
    await services.pool.query("INSERT INTO worker_group_config (name, config) VALUES ($1, $2)", [
      "dedpy",
      JSON.stringify({ dedicated_worker: `${ws}:u/x/fastpy` }),
    ]);
    const tag = dedicatedTag(ws, "u/x/fastpy");
    // The group config alone routes the script's jobs, before any worker of the group runs.
    await routed(tag);
    const queued = await runScriptByPath(services, membership, "u/x/fastpy", { x: 1 });
    const worker = await startTestWorker(services.database.url, { WORKER_GROUP: "dedpy" });
    workers.push(worker);
    const first = await waitForJob(services, membership, queued, 30_000);
    assert.equal(first.status, "success", first.logs);
    const second = await run("u/x/fastpy", { x: 21 });
    assert.equal(second.tag, tag);
    const r1 = first.result as Record<string, number>;
    assert.deepEqual(
      [second.result.x, second.result.pid, second.result.count],
      [42, r1.pid, (r1.count ?? 0) + 1],
    );
  });
});
