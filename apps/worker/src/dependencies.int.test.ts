import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { deployScript, LOCK_HOLD_MS, runScriptByPath, waitForJob, type Membership } from "@millrace/core";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "@millrace/core/testing";
import { buildWheel, serveIndex } from "../../../packages/runtime/src/deps/testing.ts";
import { startTestWorker, type TestWorker } from "./testing.ts";

let services: TestServices;
let membership: Membership;
let worker: TestWorker;
let index: Awaited<ReturnType<typeof serveIndex>>;
const scratch = mkdtempSync(path.join(os.tmpdir(), "millrace-deps-int-"));
// Jobs run as an unprivileged user in the sandbox: they must be able to reach the caches.
chmodSync(scratch, 0o755);
const wheels = path.join(scratch, "wheels");
const cacheA = path.join(scratch, "cache-a");

async function dependencyJobOf(hash: string) {
  const { rows } = await services.pool.query<{ id: string; tag: string; status: string }>(
    "SELECT id, tag, status FROM job WHERE kind = 'dependency' AND script_hash = $1",
    [hash],
  );
  assert.equal(rows.length, 1, "one dependency job per version");
  return rows[0]!;
}

async function versionLock(hash: string) {
  const { rows } = await services.pool.query<{ lock: string | null; lock_error: string | null }>(
    "SELECT lock, lock_error FROM script WHERE hash = $1",
    [hash],
  );
  return rows[0]!;
}

describe("script dependencies", () => {
  before(async () => {
    mkdirSync(wheels);
    buildWheel(
      wheels,
      "millrace-greet",
      "1.0.0",
      "millrace_greet",
      'def greet(n):\n    return "hello " + n\n',
    );
    index = await serveIndex(wheels);
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    worker = await startTestWorker(services.database.url, {
      PIP_INDEX_URL: index.url,
      DEPENDENCY_CACHE_DIR: cacheA,
    });
  });
  after(async () => {
    await worker?.stop();
    await services?.close();
    await index?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("python3: deploy enqueues a dependency job; a run waits for the lock, then imports the package", async () => {
    const script = await deployScript(services, membership, {
      path: "u/x/greet",
      language: "python3",
      content:
        "# requirements:\n#millrace-greet==1.0.0\nimport millrace_greet\n\ndef main(name: str):\n    return millrace_greet.greet(name)\n",
    });
    const dependency = await dependencyJobOf(script.hash);
    assert.equal(dependency.tag, "dependency");
    // Enqueued at once, while the lock is (most likely) still being computed.
    const id = await runScriptByPath(services, membership, "u/x/greet", { name: "deps" });
    const job = await waitForJob(services, membership, id, 60_000);
    assert.equal(job.status, "success", `${job.logs}\n${JSON.stringify(job.result)}`);
    assert.equal(job.result, "hello deps");
    const version = await versionLock(script.hash);
    assert.equal(version.lock, "millrace-greet==1.0.0");
    assert.equal(version.lock_error, null);
    const { rows } = await services.pool.query<{ lock: string | null }>(
      "SELECT lock FROM job WHERE id = $1",
      [id],
    );
    assert.equal(rows[0]!.lock, version.lock, "the job carries the version's lock");
    const depJob = await waitForJob(services, membership, dependency.id, 1000);
    assert.equal(depJob.status, "success");
    assert.deepEqual(depJob.result, { lock: "millrace-greet==1.0.0" });
    assert.match(depJob.logs, /Successfully installed millrace-greet-1.0.0/);
    assert.ok(readdirSync(path.join(cacheA, "python3")).some((name) => /^[0-9a-f]{32}$/.test(name)));
  });

  it("a job enqueued while the lock is pending is held, then released when the lock lands", async () => {
    // No worker while it is enqueued: the lock is certainly pending.
    await worker.stop();
    const script = await deployScript(services, membership, {
      path: "u/x/held",
      language: "python3",
      content:
        "# requirements:\n#millrace-greet==1.0.0\nimport millrace_greet\n\ndef main():\n    return millrace_greet.greet('held')\n",
    });
    const id = await runScriptByPath(services, membership, "u/x/held", {});
    const { rows } = await services.pool.query<{
      scheduled_for: Date;
      created_at: Date;
      lock: string | null;
    }>("SELECT scheduled_for, created_at, lock FROM job WHERE id = $1", [id]);
    const held = rows[0]!;
    assert.equal((await versionLock(script.hash)).lock, null);
    assert.equal(held.lock, null);
    assert.ok(held.scheduled_for.getTime() - held.created_at.getTime() >= LOCK_HOLD_MS - 5000, "held back");
    worker = await startTestWorker(services.database.url, {
      PIP_INDEX_URL: index.url,
      DEPENDENCY_CACHE_DIR: cacheA,
    });
    const job = await waitForJob(services, membership, id, 60_000);
    assert.equal(job.status, "success", job.logs);
    assert.equal(job.result, "hello held");
  });

  it("a requirement that cannot be installed fails the version and its runs, saying why", async () => {
    const script = await deployScript(services, membership, {
      path: "u/x/missing",
      language: "python3",
      content: "# requirements:\n#millrace-nonexistent==1.0\n\ndef main():\n    return 1\n",
    });
    const early = await runScriptByPath(services, membership, "u/x/missing", {});
    const job = await waitForJob(services, membership, early, 60_000);
    assert.equal(job.status, "failure");
    assert.match(JSON.stringify(job.result), /dependencies could not be installed: pip install failed/);
    const version = await versionLock(script.hash);
    assert.equal(version.lock, null);
    assert.match(version.lock_error ?? "", /millrace-nonexistent/);
    const late = await runScriptByPath(services, membership, "u/x/missing", {});
    const lateJob = await waitForJob(services, membership, late, 30_000);
    assert.equal(lateJob.status, "failure");
    assert.match(JSON.stringify(lateJob.result), /dependencies could not be installed/);
  });

  it("refuses requirements that would steer pip (options, file references) at deploy", async () => {
    await rejectsWith(
      deployScript(services, membership, {
        path: "u/x/evil",
        language: "python3",
        content: "# requirements:\n#--index-url http://evil.example/simple\n\ndef main():\n    return 1\n",
      }),
      "INVALID_INPUT",
      "content",
    );
  });

  it("bun: npm imports are locked by bun.lock; a worker on another machine installs the same lock", async () => {
    const content =
      'import isOdd from "is-odd@3.0.1";\n\nexport function main(n: number) {\n  return { odd: isOdd(n) };\n}\n';
    const script = await deployScript(services, membership, { path: "u/x/odd", language: "bun", content });
    const first = await runScriptByPath(services, membership, "u/x/odd", { n: 3 });
    const job = await waitForJob(services, membership, first, 90_000);
    assert.equal(job.status, "success", job.logs);
    assert.deepEqual(job.result, { odd: true });
    const version = await versionLock(script.hash);
    assert.match(version.lock ?? "", /^# package\.json\n.*"is-odd@3\.0\.1":"npm:is-odd@3\.0\.1"/);

    // Another machine: its own (empty) cache; the first worker stops so that it takes the job.
    await worker.stop();
    const cacheB = path.join(scratch, "cache-b");
    worker = await startTestWorker(services.database.url, { DEPENDENCY_CACHE_DIR: cacheB });
    const second = await runScriptByPath(services, membership, "u/x/odd", { n: 4 });
    const other = await waitForJob(services, membership, second, 90_000);
    assert.equal(other.status, "success", other.logs);
    assert.deepEqual(other.result, { odd: false });
    assert.match(other.logs, /installing locked npm packages/);
    await worker.stop();
    worker = await startTestWorker(services.database.url, {
      PIP_INDEX_URL: index.url,
      DEPENDENCY_CACHE_DIR: cacheA,
    });
  });
});
