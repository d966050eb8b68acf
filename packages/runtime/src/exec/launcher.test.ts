// The process launcher the worker starts jobs from: output, exit codes, cancel, and what happens
// when the launcher itself dies under a running job.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { ProcessLauncher } from "./launcher.ts";
import { runProcess } from "./process.ts";
import { run, scratchDir } from "./testing.ts";

const root = scratchDir();
const launcher = new ProcessLauncher();
after(() => launcher.close());

test("a job started by the launcher returns its result and streams its output in order", async () => {
  const r = await run(root, {
    language: "bash",
    content: 'for i in 1 2 3; do echo "line $i"; sleep 0.05; done\necho "$1"\n',
    args: { word: "done" },
    argOrder: ["word"],
    launcher,
  });
  assert.deepEqual(r.outcome, { status: "success", result: "done" });
  assert.equal(r.logs, "line 1\nline 2\nline 3\ndone\n");
});

test("a job started by the launcher writes to /dev/stdout and /dev/stderr (pipes, not sockets)", async () => {
  const r = await run(root, {
    language: "bash",
    content:
      "echo out > /dev/stdout\necho err > /dev/stderr\nreadlink /proc/$$/fd/1 /proc/$$/fd/2 | grep -c '^socket:' || true\n",
    launcher,
  });
  assert.deepEqual(r.outcome, { status: "success", result: 0 }, r.logs);
  assert.match(r.logs, /out\n/);
  assert.match(r.logs, /err\n/);
});

test("multi-byte characters split across chunks and large output survive the relay", async () => {
  const r = await run(root, {
    language: "python3",
    content: "def main():\n    print('é' * 300000)\n    return len('é' * 300000)\n",
    launcher,
  });
  assert.deepEqual(r.outcome, { status: "success", result: 300000 });
  assert.equal(r.logs, "é".repeat(300000) + "\n");
});

test("cancel kills the job's process tree within a second", async () => {
  const controller = new AbortController();
  const started = performance.now();
  const pending = run(root, {
    language: "bash",
    content: "sleep 30 &\nsleep 30\n",
    signal: controller.signal,
    launcher,
  });
  setTimeout(() => controller.abort(), 200);
  const r = await pending;
  assert.deepEqual(r.outcome, { status: "canceled" });
  assert.ok(performance.now() - started < 1500, `took ${performance.now() - started} ms`);
});

test("a command that cannot start is reported as a spawn error", async () => {
  const result = await runProcess({
    command: "/nonexistent/millrace-interpreter",
    args: [],
    cwd: root,
    env: {},
    timeoutMs: 5000,
    onLog: () => {},
    keepStdout: false,
    launcher,
  });
  assert.match(String(result.spawnError?.message), /ENOENT/);
});

test("if the launcher dies under a job, the job fails and the next one gets a new launcher", async () => {
  const own = new ProcessLauncher();
  try {
    const pending = run(root, { language: "bash", content: "echo started\nsleep 30\n", launcher: own });
    // Wait until the job runs, then kill the launcher (not the job).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const launcherPid = (own as unknown as { child: { pid: number } }).child.pid;
    process.kill(launcherPid, "SIGKILL");
    const r = await pending;
    assert.equal(r.outcome.status, "failure");
    assert.match(JSON.stringify(r.outcome), /process launcher exited/);
    const next = await run(root, { language: "bash", content: 'echo "again"\n', launcher: own });
    assert.deepEqual(next.outcome, { status: "success", result: "again" });
  } finally {
    await own.close();
  }
});
