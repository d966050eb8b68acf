// Languages, isolation and limits through real worker processes: one with the sandbox, one without.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  deployScript,
  enqueueJob,
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

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const jobDir = path.join(os.tmpdir(), `millrace-isolation-jobs-${process.pid}`);
let services: TestServices;
let membership: Membership;
let sandboxed: TestWorker;
let plain: TestWorker;

async function deploy(input: Omit<NewScriptInput, "language"> & { language?: string }) {
  return deployScript(services, membership, { language: "bash", ...input });
}

async function runPath(scriptPath: string, args: Record<string, unknown> = {}): Promise<JobWithLogs> {
  const id = await runScriptByPath(services, membership, scriptPath, args);
  return waitForJob(services, membership, id, 30_000);
}

function errorOf(job: JobWithLogs): { name: string; message: string } {
  assert.equal(job.status, "failure", JSON.stringify(job.result));
  return (job.result as { error: { name: string; message: string } }).error;
}

function databaseResource(): Record<string, unknown> {
  const url = new URL(services.database.url);
  return {
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    dbname: url.pathname.slice(1),
    sslmode: "disable",
  };
}

describe("isolation and limits with real worker processes", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    mkdirSync(jobDir, { recursive: true });
    const common = { JOB_DIR: jobDir, WORKER_PING_INTERVAL: "1" };
    [sandboxed, plain] = await Promise.all([
      startTestWorker(services.database.url, {
        ...common,
        WORKER_GROUP: "isolated",
        WORKER_TAGS: "iso-sandbox",
        NUM_WORKERS: "2",
        // Only the worker has this: no job may see it.
        MILLRACE_ISOLATION_SECRET: "worker-only-secret",
      }),
      startTestWorker(services.database.url, {
        ...common,
        WORKER_TAGS: "iso-plain",
        DISABLE_SANDBOX: "true",
      }),
    ]);
  });
  after(async () => {
    await Promise.all([sandboxed?.stop(), plain?.stop()]);
    await services?.close();
    rmSync(jobDir, { recursive: true, force: true });
  });

  it("says at start whether jobs run in the sandbox", () => {
    assert.match(sandboxed.output(), /sandbox: bubblewrap \d+\.\d+/);
    assert.match(
      plain.output(),
      /sandbox: disabled \(DISABLE_SANDBOX is set\): jobs run WITHOUT isolation, environment scrubbed, limits applied/,
    );
  });

  it("each language runs end to end with typed arguments and returns its value", async () => {
    const scripts: { name: string; language: string; content: string; args: Record<string, unknown> }[] = [
      { name: "sh", language: "bash", content: 'n="$1"\necho $((n + 1))\n', args: { n: 41 } },
      {
        name: "py",
        language: "python3",
        content: "def main(n: int, tags: list):\n    return {'next': n + 1, 'tags': tags}\n",
        args: { n: 41, tags: ["a"] },
      },
      {
        name: "bun",
        language: "bun",
        content:
          "export function main(n: number, o: { k: string }) {\n  return { next: n + 1, k: o.k };\n}\n",
        args: { n: 41, o: { k: "v" } },
      },
      {
        name: "deno",
        language: "deno",
        content: "export function main(n: number, flag = false) {\n  return { next: n + 1, flag };\n}\n",
        args: { n: 41, flag: true },
      },
    ];
    const expected: Record<string, unknown> = {
      sh: 42,
      py: { next: 42, tags: ["a"] },
      bun: { next: 42, k: "v" },
      deno: { next: 42, flag: true },
    };
    for (const tag of ["iso-sandbox", "iso-plain"]) {
      for (const s of scripts) {
        await deploy({ path: `u/t/${s.name}-${tag}`, language: s.language, content: s.content, tag });
        const job = await runPath(`u/t/${s.name}-${tag}`, s.args);
        assert.deepEqual(
          job.result,
          expected[s.name],
          `${s.language} on ${tag}: ${JSON.stringify(job.result)}`,
        );
      }
    }
  });

  it("postgresql runs against the resource given as `database`, with typed positional args", async () => {
    // Enqueued directly: the `database` argument arrives resolved, as the worker passes it on.
    const content =
      "-- $1 n (int)\n-- $2 label (text)\nSELECT $1 + 1 AS next, $2 AS label, pg_typeof($1)::text AS t;\n";
    for (const tag of ["iso-sandbox", "iso-plain"]) {
      const id = await enqueueJob(services.pool, services.boss, {
        workspaceId: membership.workspace.id,
        kind: "script",
        scriptPath: null,
        scriptHash: null,
        language: "postgresql",
        content,
        args: { database: databaseResource(), n: 41, label: "x" },
        argOrder: ["n", "label"],
        tag,
        priority: 0,
        scheduledFor: null,
        createdBy: membership.principal.username,
        permissionedAs: `u/${membership.principal.username}`,
        timeoutSecs: 30,
        memoryLimitMb: null,
        concurrency: null,
        retry: null,
      });
      const job = await waitForJob(services, membership, id, 30_000);
      assert.deepEqual(job.result, [{ next: 42, label: "x", t: "integer" }], JSON.stringify(job.result));
    }
  });

  it("a job sees neither the worker's environment nor another running job's folder, and writes nowhere else", async () => {
    await deploy({
      path: "u/t/holder",
      tag: "iso-sandbox",
      content: 'echo "holder-secret" > secret.txt\nsleep 3\necho "$PWD"\n',
    });
    const planted = `planted-${randomUUID()}`;
    await deploy({
      path: "u/t/probe",
      tag: "iso-sandbox",
      content: [
        'worker="$1"',
        'jobs="$2"',
        'repo="$3"',
        'planted="$4"',
        'tr "\\0" "\\n" < /proc/1/environ 2>&1',
        'cat "/proc/$worker/environ" 2>&1 | tr "\\0" "\\n"',
        'for d in "$jobs"/*/; do cat "$d/secret.txt" 2>&1; done',
        'echo "siblings: $(ls -A "$jobs" | wc -l)"',
        "env",
        'for f in "$jobs/$planted" "$repo/$planted" "/etc/$planted"; do ( echo x > "$f" ) 2>/dev/null && echo "wrote $f"; done',
        "echo probe-done",
      ].join("\n"),
    });
    const holder = runScriptByPath(services, membership, "u/t/holder", {});
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const probe = await runPath("u/t/probe", {
      worker: String(sandboxed.process.pid),
      jobs: jobDir,
      repo,
      planted,
    });
    assert.equal(probe.status, "success", JSON.stringify(probe.result));
    const logs = probe.logs ?? "";
    assert.match(logs, /probe-done/);
    assert.doesNotMatch(logs, /worker-only-secret|DATABASE_URL|holder-secret/);
    // Only its own folder is mounted under JOB_DIR.
    assert.match(logs, /siblings: 1\n/);
    assert.equal(existsSync(path.join(jobDir, planted)), false);
    assert.equal(existsSync(path.join(repo, planted)), false);
    assert.equal(existsSync(path.join("/etc", planted)), false);
    const held = await waitForJob(services, membership, await holder, 30_000);
    assert.equal(held.status, "success");
  });

  it("a fork bomb, a memory hog, an infinite loop and a 1 GB print end with a clear reason; the worker goes on", async () => {
    for (const tag of ["iso-sandbox", "iso-plain"]) {
      await deploy({ path: `u/t/ok-${tag}`, tag, content: "echo fine" });
      await deploy({ path: `u/t/bomb-${tag}`, tag, content: ":(){ :|:& };:\nsleep 60\n", timeout: 30 });
      await deploy({
        path: `u/t/hog-${tag}`,
        tag,
        language: "python3",
        content:
          "def main():\n    blocks = []\n    while True:\n        blocks.append(b'x' * (20 * 1024 * 1024))\n",
        memory_limit_mb: 100,
      });
      await deploy({ path: `u/t/loop-${tag}`, tag, content: "while :; do :; done\n", timeout: 1 });
      await deploy({
        path: `u/t/print-${tag}`,
        tag,
        content: "head -c 1000000000 /dev/zero | tr '\\0' 'a'\n",
      });
      const bad: [string, RegExp][] = [
        ["bomb", /^ProcessLimitExceeded$/],
        ["hog", /^OutOfMemory$/],
        ["loop", /^TimeoutError$/],
        ["print", /^OutputLimitExceeded$/],
      ];
      for (const [name, reason] of bad) {
        const job = await runPath(`u/t/${name}-${tag}`);
        assert.match(errorOf(job).name, reason, `${name} on ${tag}`);
        const ok = await runPath(`u/t/ok-${tag}`);
        assert.equal(ok.result, "fine", `after ${name} on ${tag}`);
      }
    }
  });

  it("the group's `network: false` cuts its jobs off the network, reloaded without a restart", async () => {
    const port = Number(new URL(services.database.url).port || 5432);
    await deploy({
      path: "u/t/net",
      tag: "iso-sandbox",
      language: "python3",
      content: [
        "import socket",
        "def main(port: int):",
        "    try:",
        "        socket.create_connection(('127.0.0.1', port), timeout=2).close()",
        "        return 'connected'",
        "    except OSError as e:",
        "        return 'no network: ' + type(e).__name__",
      ].join("\n"),
    });
    assert.equal((await runPath("u/t/net", { port })).result, "connected");
    await updateWorkerGroupConfig(services, SUPERADMIN_SECRET_PRINCIPAL, "isolated", { network: false });
    const deadline = Date.now() + 10_000;
    while (!/cut off from the network/.test(sandboxed.output())) {
      if (Date.now() > deadline)
        throw new Error(`the worker did not reload its config:\n${sandboxed.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.match(String((await runPath("u/t/net", { port })).result), /^no network: /);
    await updateWorkerGroupConfig(services, SUPERADMIN_SECRET_PRINCIPAL, "isolated", { network: true });
    while (!/jobs have the network/.test(sandboxed.output())) {
      if (Date.now() > deadline + 10_000) throw new Error("the worker did not reload its config");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal((await runPath("u/t/net", { port })).result, "connected");
  });
});
