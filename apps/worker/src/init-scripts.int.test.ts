import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createUser,
  deployScript,
  getJob,
  principalOf,
  requireMembership,
  runScriptByPath,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "@millrace/core/testing";
import { WORKER_SCRIPTS_WORKSPACE } from "./init-scripts.ts";
import { startTestWorker, type TestWorker } from "./testing.ts";

let services: TestServices;
let membership: Membership;
let superadmin: Membership;
const workers: TestWorker[] = [];
const scratch = mkdtempSync(path.join(os.tmpdir(), "millrace-init-int-"));

interface WorkerScriptJob {
  id: string;
  status: string;
  started_at: Date;
  completed_at: Date | null;
  worker_name: string;
}

async function workerScriptJobs(kind: string, workerName: string): Promise<WorkerScriptJob[]> {
  const { rows } = await services.pool.query<WorkerScriptJob>(
    `SELECT id, status, started_at, completed_at, worker_name FROM job
      WHERE workspace_id = $1 AND kind = $2 AND worker_name = $3 ORDER BY started_at`,
    [WORKER_SCRIPTS_WORKSPACE, kind, workerName],
  );
  return rows;
}

async function setConfig(group: string, config: object): Promise<void> {
  await services.pool.query(
    "INSERT INTO worker_group_config (name, config) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET config = $2",
    [group, JSON.stringify(config)],
  );
}

describe("init and periodic scripts of a worker group", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    await deployScript(services, membership, { path: "u/x/hi", language: "bash", content: "echo hi" });
  });
  after(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await services?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("runs init_bash once at start, before any job, recorded as a job superadmins can read", async () => {
    const marker = path.join(scratch, "init-ran");
    await setConfig("initgrp", {
      init_bash: `echo "init of $WM_WORKER_GROUP"\necho "via /dev/stderr" > /dev/stderr\ntouch ${marker}\n`,
    });
    const queued = await runScriptByPath(services, membership, "u/x/hi", {});
    const worker = await startTestWorker(services.database.url, {
      WORKER_GROUP: "initgrp",
      WORKER_NAME_PREFIX: "initwk",
    });
    workers.push(worker);
    const job = await waitForJob(services, membership, queued, 30_000);
    assert.equal(job.status, "success");
    assert.ok(existsSync(marker), "the init script ran on the worker's machine");
    const inits = await workerScriptJobs("init_script", "initwk");
    assert.equal(inits.length, 1);
    const init = inits[0]!;
    assert.equal(init.status, "success");
    assert.ok(init.completed_at! <= job.startedAt!, "the init script ended before the first job started");

    const user = await createUser(services, {
      email: "root@example.com",
      password: "password123",
      superAdmin: true,
    });
    superadmin = await requireMembership(services, principalOf(user), WORKER_SCRIPTS_WORKSPACE);
    const read = await getJob(services, superadmin, init.id);
    assert.match(read.logs, /init of initgrp/);
    assert.match(read.logs, /via \/dev\/stderr/);
    // Not for members of other workspaces.
    await rejectsWith(
      requireMembership(services, membership.principal, WORKER_SCRIPTS_WORKSPACE),
      "NOT_FOUND",
    );
  });

  it("a failing init script is recorded as failed and the worker keeps serving", async () => {
    await setConfig("initfail", { init_bash: "echo broken >&2\nexit 3\n" });
    const worker = await startTestWorker(services.database.url, {
      WORKER_GROUP: "initfail",
      WORKER_NAME_PREFIX: "failwk",
    });
    workers.push(worker);
    const id = await runScriptByPath(services, membership, "u/x/hi", {});
    assert.equal((await waitForJob(services, membership, id, 30_000)).status, "success");
    // The job may have run on the earlier test's worker, before this one's init script ended.
    const deadline = Date.now() + 10_000;
    let init: WorkerScriptJob | undefined;
    while ((init = (await workerScriptJobs("init_script", "failwk"))[0])?.status !== "failure") {
      if (Date.now() > deadline) assert.fail(`init script job is ${init?.status ?? "missing"}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const read = await getJob(services, superadmin, init!.id);
    assert.match(read.logs, /broken/);
    assert.match(JSON.stringify(read.result), /ExitCode: 3/);
    assert.match(worker.output(), /init script failed/);
  });

  it("runs periodic_script_bash every interval, each run a job", async () => {
    await setConfig("periodic", {
      periodic_script_bash: 'echo "tick"',
      periodic_script_interval_seconds: 10,
    });
    const worker = await startTestWorker(services.database.url, {
      WORKER_GROUP: "periodic",
      WORKER_NAME_PREFIX: "perwk",
    });
    workers.push(worker);
    const deadline = Date.now() + 40_000;
    let runs: WorkerScriptJob[] = [];
    while (Date.now() < deadline) {
      runs = (await workerScriptJobs("periodic_script", "perwk")).filter((run) => run.status === "success");
      if (runs.length >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.ok(runs.length >= 2, `two periodic runs, got ${runs.length}`);
    const gap = runs[1]!.started_at.getTime() - runs[0]!.started_at.getTime();
    assert.ok(gap >= 9000 && gap <= 15_000, `about 10 s apart, got ${gap} ms`);
    assert.match((await getJob(services, superadmin, runs[0]!.id)).logs, /tick/);
  });
});
