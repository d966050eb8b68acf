// Issue 34 item 3: two instances (two databases) on one host share the default JOB_DIR. A worker
// of the second one, starting while a job of the first one runs, must leave that job's folder:
// its startup sweep removes only folders of jobs its own database knows have ended.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { deployScript, runScriptByPath, waitForJob, type Membership } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";

let first: TestServices;
let second: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];
const jobDir = path.join(mkdtempSync(path.join(os.tmpdir(), "millrace-shared-")), "millrace-jobs");
// Jobs run as an unprivileged user when the worker is root: they must reach their folder.
chmodSync(path.dirname(jobDir), 0o711);

describe("two instances on one JOB_DIR", () => {
  before(async () => {
    [first, second] = await Promise.all([createTestServices(), createTestServices()]);
    ({ membership } = await createTestMember(first, "shared-a"));
  });
  after(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await Promise.all([first?.close(), second?.close()]);
    rmSync(path.dirname(jobDir), { recursive: true, force: true });
  });

  it("a worker of another instance leaves a running job's folder; its own stale folders go", async () => {
    // Without the sandbox no job starts in a waiting sandbox's folder: the job's folder is its id.
    workers.push(await startTestWorker(first.database.url, { JOB_DIR: jobDir, DISABLE_SANDBOX: "true" }));
    const me = membership.principal.username;
    await deployScript(first, membership, {
      path: `u/${me}/slow`,
      language: "bash",
      content: "sleep 3\necho '\"finished in its folder\"' > result.json",
    });
    const id = await runScriptByPath(first, membership, `u/${me}/slow`, {});
    const deadline = Date.now() + 20_000;
    while (!existsSync(path.join(jobDir, id))) {
      assert.ok(Date.now() < deadline, `the job's folder appears\n${workers[0]!.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // A folder the second instance's own database knows as ended (left by a killed worker).
    const { membership: other } = await createTestMember(second, "shared-b");
    await deployScript(second, other, {
      path: `u/${other.principal.username}/quick`,
      language: "bash",
      content: "true",
    });
    const ended = await runScriptByPath(second, other, `u/${other.principal.username}/quick`, {});
    mkdirSync(path.join(jobDir, ended));

    const intruder = await startTestWorker(second.database.url, {
      JOB_DIR: jobDir,
      WORKER_TAGS: "nothing-here",
    });
    workers.push(intruder);
    const job = await waitForJob(first, membership, id, 30_000);
    assert.deepEqual(
      { status: job.status, result: job.result },
      { status: "success", result: "finished in its folder" },
    );
    assert.equal(existsSync(path.join(jobDir, ended)), false, `${ended} is the second instance's ended job`);
  });
});
