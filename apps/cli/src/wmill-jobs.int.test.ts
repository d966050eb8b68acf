// Windmill's own clients on jobs, against Millrace's REST router with a real worker: the real
// `wmill` (npm windmill-cli 1.819) `job list/get/result/logs/cancel/rerun`, and windmill-client
// 1.818 (npm, Apache-2.0) called from this Node process: runScriptByPath (sync and async),
// runScriptByHash, waitJob, getResult, getResultMaybe, getJob, the job's status, getRootJobId,
// setProgress/getProgress, cancelJob, and Windmill's answers to a missing job and to bad arguments.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiToken, createFolder, createKeyring, deployScript, type Membership } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import * as wmillClient from "windmill-client";
import { runWmill, type WmillRun } from "./testing.ts";

// getResult and getResultMaybe are only on the client's default export (its `wmill` object),
// which its CommonJS-typed declarations do not show to an ES module.
interface ResultMaybe {
  completed: boolean;
  result: unknown;
  success?: boolean;
  started?: boolean;
}
const { getResult, getResultMaybe } = (
  wmillClient as unknown as {
    default: { getResult(id: string): Promise<unknown>; getResultMaybe(id: string): Promise<ResultMaybe> };
  }
).default;

const KEY = "wmill-jobs-instance-key-0123456789abcdefghij";
const WS = "wmilljobs";
const MISSING = "0191e0c4-0000-7000-8000-000000000000";

describe("Windmill's clients on jobs", () => {
  let services: TestServices;
  let membership: Membership;
  let api: TestApi;
  let worker: TestWorker;
  let token: string;
  let dir: string;
  let doubleHash: string;

  function wmill(args: string[]): Promise<WmillRun> {
    return runWmill(args, { cwd: dir, home: dir, instance: { url: api.url, token, workspace: WS } });
  }
  async function ok(args: string[]) {
    const run = await wmill(args);
    assert.equal(run.code, 0, `wmill ${args.join(" ")}:\n${run.output}`);
    return run;
  }

  /** The job as windmill-client's JobService reads it. */
  const getJob = (id: string) => wmillClient.JobService.getJob({ workspace: WS, id });

  /** windmill-client's ApiError of a call, with its status and body. */
  async function apiError(call: Promise<unknown>): Promise<{ status: number; body: unknown }> {
    try {
      await call;
    } catch (error) {
      assert.ok(error instanceof wmillClient.ApiError, `expected ApiError, got ${String(error)}`);
      return { status: error.status, body: error.body };
    }
    assert.fail("expected the call to fail");
  }

  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, WS));
    const ctx = { ...services, secrets: createKeyring(KEY) };
    await createFolder(ctx, membership, { name: "demo" });
    const double = await deployScript(ctx, membership, {
      path: "f/demo/double",
      language: "python3",
      content: 'def main(n: int):\n    print("doubling", n)\n    return n * 2\n',
    });
    doubleHash = double.hash;
    await deployScript(ctx, membership, {
      path: "f/demo/sleepy",
      language: "bash",
      content: 'echo "going to sleep"\nsleep 60\n',
    });
    token = await createApiToken(services, membership.principal, { label: "wmill jobs" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: api.url,
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-jobs-"));
    // windmill-client as a script outside Windmill uses it: a token, a base URL, WM_WORKSPACE.
    process.env.WM_WORKSPACE = WS;
    delete process.env.WM_JOB_ID;
    wmillClient.setClient(token, api.url);
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("windmill-client runs scripts by path and by hash, sync and async, and reads their results", async () => {
    assert.equal(await wmillClient.runScriptByPath("f/demo/double", { n: 21 }), 42);
    assert.equal(await wmillClient.runScriptByHash(doubleHash, { n: 5 }), 10);

    const id = await wmillClient.runScriptByPathAsync("f/demo/double", { n: 4 });
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(await wmillClient.waitJob(id), 8);
    assert.equal(await getResult(id), 8);
    // Windmill's answer, field for field.
    assert.deepEqual(await getResultMaybe(id), {
      completed: true,
      result: 8,
      success: true,
      started: true,
    });

    const byHash = await wmillClient.runScriptByHashAsync(doubleHash, { n: 7 });
    assert.equal(await wmillClient.waitJob(byHash), 14);
    const job = await getJob(byHash);
    assert.equal(job.type, "CompletedJob");
    assert.ok(job.type === "CompletedJob" && job.success);
    assert.equal(job.script_hash, doubleHash);
    assert.equal(job.script_path, "f/demo/double");
    // `email` is the address of the user who started it, `created_by` their username.
    assert.equal(job.email, membership.principal.email);
    assert.equal(job.created_by, membership.principal.username);
    assert.match(job.logs ?? "", /doubling 7/);
    assert.equal(await wmillClient.getRootJobId(byHash), byHash);
  });

  it("the job's status as Windmill's clients tell it (queued, running, completed), its progress, and cancelJob", async () => {
    const later = await wmillClient.runScriptByPathAsync("f/demo/double", { n: 1 }, 3600);
    const queued = await getJob(later);
    assert.equal(queued.type, "QueuedJob");
    assert.ok(queued.type === "QueuedJob" && !queued.running && queued.scheduled_for);
    assert.deepEqual(await getResultMaybe(later), {
      completed: false,
      result: null,
      success: false,
      started: false,
    });
    assert.equal(
      await wmillClient.JobService.getScheduledFor({ workspace: WS, id: later }),
      new Date(queued.scheduled_for!).getTime(),
    );

    // Progress only goes forward, from 0 to 99.
    assert.equal(await wmillClient.getProgress(later), null);
    await wmillClient.setProgress(30, later);
    assert.equal(await wmillClient.getProgress(later), 30);
    await wmillClient.setProgress(10, later);
    assert.equal(await wmillClient.getProgress(later), 30);
    await wmillClient.setProgress(250, later);
    assert.equal(await wmillClient.getProgress(later), 99);

    assert.match(await wmillClient.cancelJob(later, "not needed"), /canceled/);
    const canceled = await getJob(later);
    assert.ok(canceled.type === "CompletedJob" && canceled.canceled && !canceled.success);
    assert.equal(canceled.canceled_reason, "not needed");

    // A running job: its status goes running, then completed when canceled.
    const sleepy = await wmillClient.runScriptByPathAsync("f/demo/sleepy", {});
    await until(
      () => getJob(sleepy),
      (job) => job.type === "QueuedJob" && job.running,
      "the sleepy job to run",
    );
    assert.deepEqual(
      { ...(await getResultMaybe(sleepy)), result: null },
      { completed: false, result: null, success: false, started: true },
    );
    await wmillClient.cancelJob(sleepy);
    await until(
      () => getResultMaybe(sleepy),
      (maybe) => maybe.completed,
      "the sleepy job to be canceled",
    );

    // Where a job waits in the queue (what `wmill script run` reports while it waits).
    const position = await wmillClient.JobService.getQueuePosition({
      workspace: WS,
      scheduledFor: Date.now(),
    });
    assert.equal(typeof position, "object");
  });

  it("a job started from a job (WM_JOB_ID) is its child: getRootJobId answers the root", async () => {
    const parent = await wmillClient.runScriptByPathAsync("f/demo/double", { n: 2 });
    await wmillClient.waitJob(parent);
    process.env.WM_JOB_ID = parent;
    try {
      const child = await wmillClient.runScriptByPathAsync("f/demo/double", { n: 3 });
      assert.equal(await wmillClient.waitJob(child), 6);
      assert.equal(await wmillClient.getRootJobId(child), parent);
      assert.equal((await getJob(child)).parent_job, parent);
      process.env.WM_JOB_ID = child;
      const grandchild = await wmillClient.runScriptByHashAsync(doubleHash, { n: 4 });
      assert.equal(await wmillClient.waitJob(grandchild), 8);
      assert.equal(await wmillClient.getRootJobId(grandchild), parent);
    } finally {
      delete process.env.WM_JOB_ID;
    }
  });

  it("bad input keeps Windmill's answers: 404 with a text body for a missing job, 400 naming the argument", async () => {
    const calls: (() => Promise<unknown>)[] = [
      () => getResult(MISSING),
      () => getResultMaybe(MISSING),
      () => wmillClient.getRootJobId(MISSING),
      () => wmillClient.getProgress(MISSING),
      () => getJob(MISSING),
      () => getJob("not-a-job-id"),
      () => wmillClient.JobService.getCompletedJob({ workspace: WS, id: MISSING }),
      () => wmillClient.JobService.getJobLogs({ workspace: WS, id: MISSING }),
    ];
    for (const call of calls) {
      const { status, body } = await apiError(call());
      assert.equal(status, 404);
      assert.match(String(body), /^job .+ not found$/);
    }
    assert.equal((await apiError(wmillClient.waitJob(MISSING))).status, 404);

    const badArgs = await apiError(
      wmillClient.JobService.runScriptByPath({
        workspace: WS,
        path: "f/demo/double",
        requestBody: { n: "x" },
      }),
    );
    assert.equal(badArgs.status, 400);
    assert.match(String(badArgs.body), /^args\.n: /);
    const missingArg = await apiError(
      wmillClient.JobService.runScriptByHash({ workspace: WS, hash: doubleHash, requestBody: {} }),
    );
    assert.equal(missingArg.status, 400);
    assert.match(String(missingArg.body), /^args\.n: /);
    const noScript = await apiError(
      wmillClient.JobService.runScriptByHash({ workspace: WS, hash: "0000000000000000", requestBody: {} }),
    );
    assert.equal(noScript.status, 404);
  });

  it("wmill job list, get, result, logs, rerun and cancel", async () => {
    const id = await wmillClient.runScriptByPathAsync("f/demo/double", { n: 50 });
    await wmillClient.waitJob(id);

    const listed = JSON.parse((await ok(["job", "list", "--json"])).stdout) as {
      id: string;
      email: string;
      created_by: string;
    }[];
    const mine = listed.find((job) => job.id === id);
    assert.ok(mine, `job ${id} in ${JSON.stringify(listed.map((job) => job.id))}`);
    assert.equal(mine.email, membership.principal.email);
    assert.equal(mine.created_by, membership.principal.username);
    // Jobs started from a job (the previous test's children) are left out, as Windmill does.
    assert.ok(listed.every((job) => !("parent_job" in job)));
    const table = await ok(["job", "list", "--script-path", "f/demo/double"]);
    assert.match(table.output, new RegExp(id));
    assert.match(table.output, /success/);

    const got = await ok(["job", "get", id]);
    assert.match(got.output, new RegExp(`ID: ${id}`));
    assert.match(got.output, /Status: success/);
    assert.match(got.output, /Script Path: f\/demo\/double/);
    assert.match(got.output, new RegExp(`Created By: ${membership.principal.username}`));
    const gotJson = JSON.parse((await ok(["job", "get", id, "--json"])).stdout) as { result: unknown };
    assert.equal(gotJson.result, 100);

    assert.equal(JSON.parse((await ok(["job", "result", id])).stdout.trim()), 100);
    assert.match((await ok(["job", "logs", id])).stdout, /doubling 50/);

    const rerun = await ok(["job", "rerun", id]);
    const again = rerun.stdout.trim();
    assert.match(again, /^[0-9a-f-]{36}$/);
    assert.notEqual(again, id);
    assert.equal(await wmillClient.waitJob(again), 100);

    const sleepy = await wmillClient.runScriptByPathAsync("f/demo/sleepy", {});
    await until(
      () => getJob(sleepy),
      (job) => job.type === "QueuedJob" && job.running,
      "the sleepy job to run",
    );
    const canceled = await ok(["job", "cancel", sleepy, "--reason", "from the CLI"]);
    assert.match(canceled.output, new RegExp(`Job ${sleepy} canceled`));
    const done = await until(
      () => getJob(sleepy),
      (job) => job.type === "CompletedJob",
      "the canceled job to finish",
    );
    assert.ok(done.type === "CompletedJob" && done.canceled && !done.success);
    assert.equal(done.canceled_reason, "from the CLI");
    assert.match((await ok(["job", "logs", sleepy])).stdout, /going to sleep/);

    const missing = await wmill(["job", "get", MISSING]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.output, /not found/);
  });
});
