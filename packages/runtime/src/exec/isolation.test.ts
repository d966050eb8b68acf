import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { ExecuteRequest } from "./execute.ts";
import { detectSandbox, jobUser } from "./sandbox.ts";
import { launcherWithWarmPool, plainSpec, run, run as runHere, scratchDir, warmUp } from "./testing.ts";

const root = scratchDir();
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const SECRET = `worker-secret-${randomUUID()}`;
const bash = (content: string, extra: Partial<ExecuteRequest> = {}) =>
  run(root, { language: "bash", content, ...extra });
const bashHere = bash;

before(() => {
  // Something only the worker has: no job may see it.
  process.env.MILLRACE_ISOLATION_TEST_SECRET = SECRET;
});
after(() => {
  delete process.env.MILLRACE_ISOLATION_TEST_SECRET;
});

test("bubblewrap is available here (CI installs it) and jobs of a root worker run as nobody", () => {
  const sandbox = detectSandbox();
  assert.equal(sandbox.kind, "bubblewrap", JSON.stringify(sandbox));
  if (process.getuid?.() === 0) assert.deepEqual(jobUser(), { uid: 65534, gid: 65534 });
});

describe("in the sandbox", () => {
  test("/proc/1/environ is the sandbox's own init, with only the job's environment", async () => {
    const r = await bash(
      'tr "\\0" "\\n" < /proc/1/environ; echo "---"; ls /proc | grep -E "^[0-9]+$" | tr "\\n" " "; echo; id -u\n',
      { env: { JOB_VAR: "mine" } },
    );
    assert.equal(r.outcome.status, "success", JSON.stringify(r.outcome));
    assert.doesNotMatch(r.logs, new RegExp(SECRET));
    assert.match(r.logs, /JOB_VAR=mine/);
    const pids = r.logs.split("---\n")[1]!.split("\n")[0]!.trim().split(" ").map(Number);
    assert.ok(pids.length < 10 && !pids.includes(process.pid), `sees pids ${pids.join(" ")}`);
    if (process.getuid?.() === 0) assert.match(r.logs, /\n65534\n$/);
  });

  test("the worker's environment, files and other jobs' folders are out of sight", async () => {
    const holder = bash("echo top-secret-a > secret.txt\nsleep 2\n", { jobId: "job-a" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const probe = await bash(
      [
        'cat "/proc/$WORKER_PID/environ" 2>&1 | tr "\\0" "\\n"',
        'cat "$ROOT/job-a/secret.txt" 2>&1',
        'echo "root: $(ls -a "$ROOT" | tr "\n" " ")"',
        'echo "repo: $(ls -a "$REPO" | tr "\n" " ")"',
        "ls /home /root /var /run /opt 2>&1",
        "env",
        "echo probe-done",
      ].join("\n"),
      { env: { WORKER_PID: String(process.pid), ROOT: root, REPO: repo } },
    );
    await holder;
    const out = probe.logs;
    assert.match(out, /probe-done/);
    assert.doesNotMatch(out, new RegExp(SECRET));
    assert.doesNotMatch(out, /top-secret-a/);
    // The job's own folder is mounted at its host path: only the folders on that path exist.
    assert.match(out, new RegExp(`root: \\. \\.\\. ${probe.jobDir.split("/").at(-1)} \n`));
    // The repository only shows the path to the interpreters bound read-only.
    assert.match(out, /repo: \. \.\. node_modules \n/);
    assert.match(out, /environ: No such file or directory/);
  });

  test("writes outside the job folder fail, or land in the sandbox's private /tmp", async () => {
    const target = path.join(root, `planted-${randomUUID()}`);
    const repoTarget = path.join(repo, `planted-${randomUUID()}`);
    const r = await bash(
      [
        'for f in "$T1" "$T2" /etc/planted /usr/planted /planted /tmp/../planted; do',
        '  if ( echo x > "$f" ) 2>/dev/null; then echo "wrote $f"; else echo "denied $f"; fi',
        "done",
        "echo ok > mine.txt && cat mine.txt",
      ].join("\n"),
      { env: { T1: target, T2: repoTarget } },
    );
    assert.equal(r.outcome.status, "success", JSON.stringify(r.outcome));
    const out = r.logs;
    // The scratch root is under /tmp: the job writes into its private tmpfs, never the host's.
    // So does a checkout under /tmp (a fresh clone there); elsewhere the repository is not mounted.
    const repoLine = repo.startsWith("/tmp/") ? "(?:wrote|denied)" : "denied";
    assert.match(
      out,
      new RegExp(
        `^wrote \\S+\\n${repoLine} \\S+\\ndenied /etc/planted\\ndenied /usr/planted\\ndenied /planted\\n`,
      ),
    );
    assert.match(out, /\nok\n$/);
    assert.equal(existsSync(target), false);
    assert.equal(existsSync(repoTarget), false);
    assert.equal(existsSync("/etc/planted") || existsSync("/usr/planted") || existsSync("/planted"), false);
  });

  test("readOnlyPaths are visible at the same path and cannot be written", async () => {
    const cache = path.join(root, "dep-cache");
    mkdirSync(cache);
    writeFileSync(path.join(cache, "lib.txt"), "cached-lib");
    chmodSync(cache, 0o777);
    const r = await bash(
      'cat "$C/lib.txt"; echo; touch "$C/new" 2>/dev/null && echo wrote || echo denied\n',
      {
        env: { C: cache },
        readOnlyPaths: [cache],
      },
    );
    assert.equal(r.logs, "cached-lib\ndenied\n");
    assert.equal(existsSync(path.join(cache, "new")), false);
  });

  test("network on by default; off cuts even loopback", async () => {
    const server = net.createServer((socket) => socket.end("hello"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const content = [
        "import socket",
        "def main(port: int):",
        "    try:",
        "        with socket.create_connection(('127.0.0.1', port), timeout=2) as s:",
        "            return s.recv(5).decode()",
        "    except OSError as e:",
        "        return 'refused: ' + type(e).__name__",
      ].join("\n");
      const job = { language: "python3" as const, content, args: { port }, argOrder: ["port"] };
      const on = await run(root, job);
      assert.deepEqual(on.outcome, { status: "success", result: "hello" });
      const off = await run(root, { ...job, network: false });
      assert.equal(off.outcome.status, "success");
      assert.match(String((off.outcome as { result: unknown }).result), /^refused: /);
    } finally {
      server.close();
    }
  });

  test("bun and deno run in it too, without the worker's environment", async () => {
    const content =
      'export function main() {\n  return Object.keys(process.env).filter((k) => k.startsWith("MILLRACE_"));\n}\n';
    for (const language of ["bun", "deno"] as const) {
      const r = await run(root, { language, content });
      assert.deepEqual(r.outcome, { status: "success", result: [] }, language);
    }
  });
});

// The worker starts jobs through a ProcessLauncher: the limits must hold there too.
const { launcher, pool: warmSandboxes } = launcherWithWarmPool(root);

const modes = [
  { name: "in the sandbox", sandbox: true, launcher: null, warm: null },
  { name: "without the sandbox", sandbox: false, launcher: null, warm: null },
  { name: "in the sandbox, started by the process launcher", sandbox: true, launcher, warm: null },
  { name: "in a warm sandbox (set up before the job)", sandbox: true, launcher, warm: warmSandboxes },
  // Every job of one reuse key: each limit's job, then the next one, in the sandbox kept from the
  // job before when its stub found it clean.
  {
    name: "in a kept sandbox (one reuse key for every job)",
    sandbox: true,
    launcher,
    warm: warmSandboxes,
    reuseKey: "isolation-limits",
  },
];

for (const mode of modes) {
  describe(`limits ${mode.name}`, () => {
    const bash = async (content: string, options: Partial<ExecuteRequest> = {}) => {
      if (mode.warm) await warmUp(mode.warm, plainSpec("bash"));
      return bashHere(content, {
        launcher: mode.launcher,
        warmSandboxes: mode.warm,
        ...("reuseKey" in mode ? { reuseKey: mode.reuseKey } : {}),
        ...options,
      });
    };
    const run = async (workRoot: string, request: Parameters<typeof runHere>[1]) => {
      if (mode.warm) await warmUp(mode.warm, plainSpec(request.language as "python3"));
      return runHere(workRoot, {
        launcher: mode.launcher,
        warmSandboxes: mode.warm,
        ...("reuseKey" in mode ? { reuseKey: mode.reuseKey } : {}),
        ...request,
      });
    };
    const ok = async () => {
      const r = await bash('echo "still fine"\n', { sandbox: mode.sandbox });
      assert.deepEqual(r.outcome, { status: "success", result: "still fine" });
    };

    test("a fork bomb ends with ProcessLimitExceeded", async () => {
      const r = await bash(":(){ :|:& };:\nsleep 20\n", {
        sandbox: mode.sandbox,
        limits: { maxProcesses: 64 },
        timeoutMs: 30_000,
      });
      assert.equal(r.outcome.status, "failure");
      assert.deepEqual(r.outcome.status === "failure" && r.outcome.error, {
        name: "ProcessLimitExceeded",
        message: "Job reached the limit of 64 processes and threads (a fork bomb?) and was killed",
      });
      await ok();
    });

    test("a memory hog ends with OutOfMemory", async () => {
      const r = await run(root, {
        language: "python3",
        content:
          "def main():\n    blocks = []\n    while True:\n        blocks.append(b'x' * (20 * 1024 * 1024))\n",
        memoryLimitMb: 100,
        sandbox: mode.sandbox,
      });
      assert.equal(r.outcome.status === "failure" && r.outcome.error.name, "OutOfMemory");
      await ok();
    });

    test("an infinite loop ends at the CPU time limit, or at the timeout", async () => {
      const cpu = await bash("while :; do :; done\n", { sandbox: mode.sandbox, limits: { cpuSeconds: 1 } });
      assert.deepEqual(cpu.outcome.status === "failure" && cpu.outcome.error, {
        name: "CpuLimitExceeded",
        message: "Job exceeded its CPU time limit of 1 seconds per process and was killed",
      });
      const wall = await bash("while :; do :; done\n", { sandbox: mode.sandbox, timeoutMs: 500 });
      assert.equal(wall.outcome.status === "failure" && wall.outcome.error.name, "TimeoutError");
      await ok();
    });

    test("a 1 GB print ends with OutputLimitExceeded, keeping the first 2 MB of log", async () => {
      const r = await bash("head -c 1000000000 /dev/zero | tr '\\0' 'a'\necho finished\n", {
        sandbox: mode.sandbox,
      });
      assert.deepEqual(r.outcome.status === "failure" && r.outcome.error, {
        name: "OutputLimitExceeded",
        message: "Job printed more than 32 MB of output and was killed",
      });
      assert.ok(r.logs.endsWith("[output truncated at 2 MB]\n"));
      await ok();
    });

    test("a file past the size limit cannot be written: FileSizeLimitExceeded", async () => {
      const r = await run(root, {
        language: "python3",
        content: "def main():\n    with open('big', 'wb') as f:\n        f.write(b'x' * 2_000_000)\n",
        limits: { maxFileBytes: 1_000_000 },
        sandbox: mode.sandbox,
      });
      assert.equal(r.outcome.status === "failure" && r.outcome.error.name, "FileSizeLimitExceeded");
    });
  });
}
