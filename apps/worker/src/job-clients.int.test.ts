// Windmill's clients inside jobs, unchanged: windmill-client from a bun job and from a deno job
// (`npm:windmill-client`, the bundled copy, offline) and the `wmill` module from a python3 job
// run another script and wait for its result, read a secret and keep values, through the real
// REST routes of the web app served over HTTP to a real worker. Also: `$var:`/`$res:` arguments
// are resolved with the rights of the job's user (a user without access is refused, naming the
// argument), and a python3 script without a `# requirements:` block gets its imports installed
// from the operator's index (`yaml` → pyyaml), where a pinned `wmill` is the index's, not the
// bundled one.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createKeyring,
  createResource,
  createVariable,
  deployScript,
  requireMembership,
  runScriptByPath,
  waitForJob,
  type Membership,
  type SecretsContext,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { buildWheel, serveIndex } from "../../../packages/runtime/src/deps/testing.ts";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "./testing.ts";

const KEY = "worker-test-instance-key-0123456789abcdef";
const SECRET = "the-client-secret-5a4b3c";
// Scripts return secrets reversed: a secret's own value is masked in a job's result.
const REVERSED = [...SECRET].reverse().join("");
const WORKSPACE = "clients";

let services: TestServices;
let ctx: SecretsContext;
let membership: Membership;
let me: string;
let childHash: string;
let worker: TestWorker;
let api: TestApi | undefined;
let index: Awaited<ReturnType<typeof serveIndex>> | undefined;
const scratch = mkdtempSync(path.join(os.tmpdir(), "millrace-clients-int-"));
// Jobs run as an unprivileged user in the sandbox: they must be able to reach the caches.
chmodSync(scratch, 0o755);

async function run(path: string, language: string, content: string, args: Record<string, unknown> = {}) {
  await deployScript(services, membership, { path, language, content });
  const id = await runScriptByPath(services, membership, path, args);
  return waitForJob(services, membership, id, 120_000);
}

/** How many jobs of the child script ran so far. */
async function childJobs(): Promise<number> {
  const { rowCount } = await services.pool.query(
    "SELECT 1 FROM job WHERE script_path = $1 AND workspace_id = $2",
    [`u/${me}/double`, WORKSPACE],
  );
  return rowCount ?? 0;
}

describe("Windmill's clients inside jobs", () => {
  before(async () => {
    const wheels = path.join(scratch, "wheels");
    mkdirSync(wheels);
    // What an operator's index serves: pyyaml (module `yaml`) and the real `wmill` (a stand-in).
    buildWheel(wheels, "pyyaml", "6.0.1", "yaml", 'def safe_load(text):\n    return {"loaded": text}\n');
    buildWheel(wheels, "wmill", "9.9.9", "wmill", 'def get_workspace():\n    return "the-index-wmill"\n');
    index = await serveIndex(wheels);
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    ({ membership } = await createTestMember(services, WORKSPACE));
    me = membership.principal.username;
    await createVariable(ctx, membership, { path: `u/${me}/api_secret`, value: SECRET, isSecret: true });
    await createResource(ctx, membership, {
      path: `u/${me}/conn`,
      resourceType: "any",
      value: { host: "db.internal", token: `$var:u/${me}/api_secret` },
    });
    const child = await deployScript(services, membership, {
      path: `u/${me}/double`,
      language: "bash",
      content: 'x="$1"\necho "$((x * 2))"\n',
    });
    childHash = child.hash;
    api = await startTestApi(services.database.url, KEY);
    // Two slots: a job waiting for its child must not hold the only one.
    worker = await startTestWorker(services.database.url, {
      BASE_URL: api.url,
      MILLRACE_SECRET_KEY: KEY,
      NUM_WORKERS: "2",
      PIP_INDEX_URL: index.url,
      DEPENDENCY_CACHE_DIR: path.join(scratch, "cache"),
    });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    await index?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("bun: windmill-client runs a script by path and by hash, waits for it, reads its job and a secret", async () => {
    const content = `import * as wmill from "windmill-client";

const rev = (text: string) => [...text].reverse().join("");

export async function main(hash: string) {
  const workspace = process.env.WM_WORKSPACE!;
  const doubled = await wmill.runScriptByPath("u/${me}/double", { x: 21 });
  const byHash = await wmill.runScriptByHash(hash, { x: 50 });
  const id = await wmill.runScriptByPathAsync("u/${me}/double", { x: 5 });
  const waited = await wmill.waitJob(id);
  const job = await wmill.JobService.getJob({ workspace, id });
  await wmill.setVariable("u/${me}/written_ts", "v1");
  await wmill.setVariable("u/${me}/written_ts", "v2");
  await wmill.setResource({ n: 1 }, "u/${me}/made_ts", "any");
  await wmill.setState({ seen: true });
  return {
    secret: rev(await wmill.getVariable("u/${me}/api_secret")),
    conn: (await wmill.getResource("u/${me}/conn")).host,
    doubled,
    byHash,
    waited,
    result: await wmill.default.getResult(id),
    job: { type: job.type, success: job.success, path: job.script_path },
    written: await wmill.getVariable("u/${me}/written_ts"),
    made: await wmill.getResource("u/${me}/made_ts"),
    state: await wmill.getState(),
    failed: await wmill.runScriptByPath("u/${me}/missing", {}).then(() => "ran", (e) => String(e.message ?? e).slice(0, 200)),
  };
}
`;
    const job = await run(`u/${me}/client_bun`, "bun", content, { hash: childHash });
    assert.equal(job.status, "success", `${job.logs}\n${JSON.stringify(job.result)}`);
    const result = job.result as Record<string, unknown>;
    assert.equal(result.secret, REVERSED);
    assert.equal(result.conn, "db.internal");
    assert.equal(result.doubled, 42, "runScriptByPath waited for the child's result");
    assert.equal(result.byHash, 100, "runScriptByHash too");
    assert.equal(result.waited, 10);
    assert.equal(result.result, 10, "getResult");
    assert.deepEqual(result.job, { type: "CompletedJob", success: true, path: `u/${me}/double` });
    assert.equal(result.written, "v2", "setVariable created then updated it");
    assert.deepEqual(result.made, { n: 1 });
    assert.deepEqual(result.state, { seen: true });
    assert.match(String(result.failed), /404|not found/i, "a missing script fails the call, not the job");
    assert.equal(await childJobs(), 3);
    assert.doesNotMatch(job.logs, new RegExp(SECRET));
  });

  it("deno: npm:windmill-client is the bundled copy (no download) and does the same", async () => {
    const content = `import * as wmill from "npm:windmill-client";
import { getVariable } from "windmill-client";

const rev = (text: string) => [...text].reverse().join("");

export async function main(hash: string) {
  const doubled = await wmill.runScriptByPath("u/${me}/double", { x: 8 });
  const id = await wmill.runScriptByHashAsync(hash, { x: 7 });
  return {
    secret: rev(await getVariable("u/${me}/api_secret")),
    doubled,
    waited: await wmill.waitJob(id),
    job: (await wmill.JobService.getJob({ workspace: wmill.default.getWorkspace(), id })).type,
    version: wmill.OpenAPI.VERSION,
  };
}
`;
    const job = await run(`u/${me}/client_deno`, "deno", content, { hash: childHash });
    assert.equal(job.status, "success", `${job.logs}\n${JSON.stringify(job.result)}`);
    assert.deepEqual(job.result, {
      secret: REVERSED,
      doubled: 16,
      waited: 14,
      job: "CompletedJob",
      version: "1.818.0",
    });
    assert.doesNotMatch(job.logs, /Download/, "nothing was fetched from the registry");
  });

  it("python3: wmill runs a script by path (and by hash, async), waits, and reads a secret", async () => {
    const content = `import wmill


def main(hash: str):
    doubled = wmill.run_script_by_path("u/${me}/double", args={"x": 30})
    job_id = wmill.run_script_by_hash_async(hash, args={"x": 3})
    waited = wmill.wait_job(job_id)
    other = wmill.run_script_async(path="u/${me}/double", args={"x": 1})
    wmill.set_variable("u/${me}/written_py", "first")
    wmill.set_variable("u/${me}/written_py", "second")
    wmill.set_resource("u/${me}/made_py", {"k": "v"}, "any")
    try:
        wmill.run_script_by_path("u/${me}/missing")
        missing = "ran"
    except Exception as error:
        missing = str(error)[:200]
    return {
        "secret": wmill.get_variable("u/${me}/api_secret")[::-1],
        "token": wmill.get_resource("$res:u/${me}/conn")["token"][::-1],
        "doubled": doubled,
        "waited": waited,
        "status": wmill.get_job_status(job_id),
        "result": wmill.get_result(job_id),
        "other": wmill.wait_job(other, timeout=60),
        "job": wmill.get_job(job_id)["type"],
        "workspace": wmill.get_workspace(),
        "written": wmill.get_variable("u/${me}/written_py"),
        "made": wmill.get_resource("u/${me}/made_py"),
        "missing": missing,
        "root": wmill.get_root_job_id(),
        "user": wmill.whoami().get("username"),
    }
`;
    const job = await run(`u/${me}/client_py`, "python3", content, { hash: childHash });
    assert.equal(job.status, "success", `${job.logs}\n${JSON.stringify(job.result)}`);
    const result = job.result as Record<string, unknown>;
    assert.match(String(result.missing), /404|not found/i);
    assert.deepEqual(
      { ...result, missing: undefined },
      {
        secret: REVERSED,
        token: REVERSED,
        doubled: 60,
        waited: 6,
        status: "COMPLETED",
        result: 6,
        other: 2,
        job: "CompletedJob",
        workspace: WORKSPACE,
        written: "second",
        made: { k: "v" },
        missing: undefined,
        root: job.id,
        user: me,
      },
    );
    assert.doesNotMatch(job.logs, new RegExp(SECRET));
  });

  it("bun: the rest of a job's API: cancel a scheduled job, progress, root job, resume URLs", async () => {
    const content = `import * as wmill from "windmill-client";

export async function main() {
  const workspace = process.env.WM_WORKSPACE!;
  const id = await wmill.runScriptByPathAsync("u/${me}/double", { x: 1 }, 3600);
  const queued = await wmill.JobService.getJob({ workspace, id });
  await wmill.cancelJob(id, "not needed");
  const canceled = await wmill.waitJob(id).then(() => "ran", (e) => String(e.message));
  await wmill.setProgress(40);
  const urls = await wmill.getResumeUrls("someone");
  return {
    queued: [queued.type, queued.running],
    canceled,
    progress: await wmill.getProgress(),
    root: await wmill.getRootJobId(),
    urls: Object.keys(urls).sort(),
    resume: urls.resume,
  };
}
`;
    const job = await run(`u/${me}/client_bun_more`, "bun", content);
    assert.equal(job.status, "success", `${job.logs}\n${JSON.stringify(job.result)}`);
    const result = job.result as Record<string, unknown>;
    assert.deepEqual(result.queued, ["QueuedJob", false]);
    assert.match(String(result.canceled), /was not successful.*not needed/);
    assert.equal(result.progress, 40);
    assert.equal(result.root, job.id);
    assert.deepEqual(result.urls, ["approvalPage", "cancel", "resume"]);
    assert.match(String(result.resume), new RegExp(`/api/w/${WORKSPACE}/jobs_u/resume/${job.id}/\\d+/`));
  });

  it("python3: wait_job's timeout cancels the job it waited for; cancel_running; progress; resume URLs", async () => {
    await deployScript(services, membership, {
      path: `u/${me}/sleepy`,
      language: "bash",
      content: "sleep 60\n",
    });
    const content = `import os
import time

import wmill


def main(first: bool = True):
    if not first:
        time.sleep(60)
        return "slept"
    other = wmill.run_script_by_path_async(os.environ["WM_JOB_PATH"], args={"first": False})
    while wmill.get_job_status(other) != "RUNNING":
        time.sleep(0.2)
    canceled = wmill.cancel_running()
    try:
        wmill.wait_job(other)
        other_outcome = "ran"
    except Exception as error:
        other_outcome = str(error)
    sleepy = wmill.run_script_by_path_async("u/${me}/sleepy")
    try:
        wmill.run_script_by_path("u/${me}/sleepy", timeout=1)
        timed = "no"
    except TimeoutError:
        timed = "timeout"
    wmill.cancel_job(sleepy)
    queued = wmill.run_script_by_path_async("u/${me}/double", args={"x": 1}, scheduled_in_secs=3600)
    status = wmill.get_job_status(queued)
    wmill.cancel_job(queued, "not needed")
    wmill.set_progress(25)
    return {
        "canceled": list(canceled) == [other],
        "other": other_outcome,
        "timed": timed,
        "status": status,
        "after_cancel": wmill.get_job_status(queued),
        "progress": wmill.get_progress(),
        "urls": sorted(wmill.get_resume_urls("someone")),
    }
`;
    const job = await run(`u/${me}/client_py_more`, "python3", content);
    assert.equal(job.status, "success", `${job.logs}\n${JSON.stringify(job.result)}`);
    const result = job.result as Record<string, unknown>;
    assert.match(String(result.other), /was not successful/);
    assert.deepEqual(
      { ...result, other: undefined },
      {
        canceled: true,
        other: undefined,
        timed: "timeout",
        status: "WAITING",
        after_cancel: "COMPLETED",
        progress: 25,
        urls: ["approvalPage", "cancel", "resume"],
      },
    );
    // The job wait_job gave up on was canceled (cleanup=True).
    const { rows } = await services.pool.query<{ status: string }>(
      "SELECT status FROM job WHERE script_path = $1 AND workspace_id = $2",
      [`u/${me}/sleepy`, WORKSPACE],
    );
    assert.deepEqual(
      rows.map((row) => row.status),
      ["canceled", "canceled"],
    );
  });

  it("$var:/$res: arguments are resolved with the job's user's rights: a user without access is refused", async () => {
    const { principal } = await createTestMember(services, WORKSPACE);
    await services.db.workspaceMember.update({
      where: { workspaceId_userId: { workspaceId: WORKSPACE, userId: principal.userId } },
      data: { role: "developer" },
    });
    const bob = await requireMembership(services, principal, WORKSPACE);
    const path = `u/${principal.username}/peek`;
    await deployScript(services, bob, { path, language: "bash", content: 'x="$1"\necho "$x"\n' });
    for (const [arg, what] of [
      [`$var:u/${me}/api_secret`, "variable"],
      [`$res:u/${me}/conn`, "resource"],
    ] as const) {
      const id = await runScriptByPath(services, bob, path, { x: arg });
      const job = await waitForJob(services, bob, id, 60_000);
      assert.equal(job.status, "failure", `${what}: ${JSON.stringify(job.result)}`);
      const message = JSON.stringify(job.result);
      assert.match(
        message,
        new RegExp(`args\\.x: (${what} )?u/${me}/\\w+ not found or not visible to u/${principal.username}`),
        message,
      );
      assert.doesNotMatch(message + job.logs, new RegExp(`${SECRET}|db\\.internal`));
    }
    // The owner, whose variable it is, gets it.
    const own = await run(`u/${me}/peek_own`, "bash", 'x="$1"\necho "${#x}"\n', {
      x: `$var:u/${me}/api_secret`,
    });
    assert.equal(own.status, "success", own.logs);
    assert.equal(own.result, SECRET.length);
  });

  it("python3 without # requirements: gets its imports installed (yaml → pyyaml); a pinned wmill is the index's", async () => {
    const inferred = await run(
      `u/${me}/inferred_py`,
      "python3",
      'import yaml\nimport wmill\n\ndef main():\n    return [yaml.safe_load("a: 1"), wmill.get_workspace()]\n',
    );
    assert.equal(inferred.status, "success", `${inferred.logs}\n${JSON.stringify(inferred.result)}`);
    assert.deepEqual(
      inferred.result,
      [{ loaded: "a: 1" }, WORKSPACE],
      "the bundled wmill, pyyaml from the index",
    );
    const { rows } = await services.pool.query<{ lock: string }>(
      "SELECT lock FROM script WHERE path = $1 AND workspace_id = $2",
      [`u/${me}/inferred_py`, WORKSPACE],
    );
    assert.equal(rows[0]?.lock, "pyyaml==6.0.1");

    const pinned = await run(
      `u/${me}/pinned_py`,
      "python3",
      "# requirements:\n#wmill==9.9.9\nimport wmill\n\ndef main():\n    return wmill.get_workspace()\n",
    );
    assert.equal(pinned.status, "success", pinned.logs);
    assert.equal(pinned.result, "the-index-wmill", "installed packages come before the bundled module");
  });
});
