// The process launcher the worker starts jobs from: output, exit codes, cancel, and what happens
// when the launcher itself dies under a running job.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { ProcessLauncher, spawnHere, type JobProcess } from "./launcher.ts";
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

/** Events of a process spawned with its pipes read here, in the order they came. */
function record(proc: JobProcess): Promise<{ output: string; events: string[] }> {
  let output = "";
  const events: string[] = [];
  proc.on("data", (chunk) => (output += chunk.toString()));
  proc.on("error", (error) => events.push(`error ${error.message}`));
  proc.on("exit", (code, signal) => events.push(`exit ${code} ${signal}`));
  return new Promise((resolve) =>
    proc.on("close", () => {
      // Whether the process was still there when the job was over.
      events.push(`close, alive ${isAlive(proc.pid)}`);
      resolve({ output, events });
    }),
  );
}

function isAlive(pid: number | undefined): boolean {
  try {
    process.kill(pid!, 0);
    return true;
  } catch {
    return false;
  }
}

const spawnRequest = (script: string) => ({ command: "/bin/bash", args: ["-c", script], cwd: root, env: {} });

test("pipes read here: the output goes straight to the worker, the exit through the launcher", async () => {
  for (const spawner of [
    (script: string) => launcher.spawn(spawnRequest(script), { status: false }),
    (script: string) => spawnHere(spawnRequest(script), { status: false }),
  ]) {
    const proc = spawner('echo out; echo err >&2; [[ -e /dev/fd/4 ]] && echo "fd 4 open"; exit 3');
    const { output, events } = await record(proc);
    assert.equal(output, "out\nerr\n");
    assert.deepEqual(events, ["exit 3 null", "close, alive false"]);
  }
});

test("each line on a process's status pipe is a status event; its exit comes from the process", async () => {
  for (const spawner of [
    (script: string) => launcher.spawn(spawnRequest(script), { status: true }),
    (script: string) => spawnHere(spawnRequest(script), { status: true }),
  ]) {
    const proc = spawner('printf "1 0 1\\n2 " >&4; echo out; printf "3 0\\n" >&4; exit 5');
    const lines: string[] = [];
    proc.on("status", (line) => lines.push(line));
    const { output, events } = await record(proc);
    assert.equal(output, "out\n");
    assert.deepEqual(lines, ["1 0 1", "2 3 0"]);
    assert.deepEqual(events, ["exit 5 null", "close, alive false"]);
  }
});
