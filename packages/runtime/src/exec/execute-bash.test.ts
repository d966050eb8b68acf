import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { executeJob, jobDirRemoved } from "../index.ts";
import type { ExecuteRequest } from "../index.ts";
import { run, scratchDir } from "./testing.ts";

const root = scratchDir();
const bash = (content: string, extra: Partial<ExecuteRequest> = {}) =>
  run(root, { language: "bash", content, ...extra });

/** Pids of the host's processes whose command line holds `marker` (the test runs as root: all of them). */
function processesShowing(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`).includes(marker)) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

test("bash: args are positional in argOrder order; the last line is the result", async () => {
  const r = await bash('a="$1"\nb="$2"\nc="$3"\necho "log line"\necho "$b|$a|$c"\n', {
    args: { c: { k: [1] }, a: "x y", b: 2 },
    argOrder: ["a", "b", "c"],
  });
  assert.deepEqual(r.outcome, { status: "success", result: '2|x y|{"k":[1]}' });
  assert.match(r.logs, /log line\n/);
});

test("bash: missing and null args become empty strings", async () => {
  const r = await bash('echo "[$1][$2]"\n', { args: { a: null }, argOrder: ["a", "b"] });
  assert.deepEqual(r.outcome, { status: "success", result: "[][]" });
});

test("bash: a JSON last line is parsed; trailing blank lines are skipped", async () => {
  const r = await bash("echo first\necho '{\"x\": [1, 2]}'\necho\necho '   '\n");
  assert.deepEqual(r.outcome, { status: "success", result: { x: [1, 2] } });
});

test("bash: no output gives a null result", async () => {
  assert.deepEqual((await bash("true\n")).outcome, { status: "success", result: null });
});

test("bash: ./result.json wins over stdout", async () => {
  const r = await bash('echo \'{"from": "file"}\' > result.json\necho 42\n');
  assert.deepEqual(r.outcome, { status: "success", result: { from: "file" } });
});

test("bash: invalid result.json is a failure", async () => {
  const r = await bash("echo 'nope{' > result.json\n");
  assert.equal(r.outcome.status, "failure");
});

test("bash: non-zero exit is an ExecutionErr with the code and the last lines", async () => {
  const r = await bash("echo step one\necho 'bad thing' >&2\nexit 3\n");
  assert.equal(r.outcome.status, "failure");
  if (r.outcome.status !== "failure") return;
  assert.equal(r.outcome.error.name, "ExecutionErr");
  assert.match(r.outcome.error.message, /ExitCode: 3/);
  assert.match(r.outcome.error.message, /step one\nbad thing/);
});

let markers = 0;
/** A sleep length no other process has: its command line finds the job's processes on the host. */
function sleepMarker(): string {
  return `100.${process.pid}${++markers}`;
}

async function gone(marker: string): Promise<number[]> {
  for (let i = 0; i < 50 && processesShowing(marker).length > 0; i++)
    await new Promise((res) => setTimeout(res, 20));
  return processesShowing(marker);
}

// Without the sandbox, on purpose (DISABLE_SANDBOX): jobs still die whole (see processFence).
test("bash: timeout kills the whole process tree quickly", async () => {
  const marker = sleepMarker();
  const r = await bash(`sleep ${marker} &\nbash -c "sleep ${marker}"\n`, { timeoutMs: 300, sandbox: false });
  assert.deepEqual(r.outcome, {
    status: "failure",
    error: { name: "TimeoutError", message: "Job exceeded the timeout of 0.3 seconds" },
  });
  assert.ok(r.ms < 2000, `took ${r.ms} ms`);
  assert.deepEqual(await gone(marker), []);
});

test("bash: background children are killed when the script ends, setsid and double-forked ones too", async () => {
  const marker = sleepMarker();
  const r = await bash(
    `sleep ${marker} &\nsetsid sleep ${marker} &\n(setsid sh -c "sleep ${marker} &" &)\necho done\n`,
    { sandbox: false },
  );
  assert.deepEqual(r.outcome, { status: "success", result: "done" });
  assert.ok(r.ms < 2000, `took ${r.ms} ms`);
  assert.deepEqual(await gone(marker), []);
});

test("bash: without the sandbox a job is not its namespace's init: its signals reach it", async () => {
  const r = await bash("echo before\nkill -TERM $$\necho after\n", { sandbox: false });
  assert.equal(r.outcome.status, "failure");
  assert.match(JSON.stringify(r.outcome), /Terminated by signal SIGTERM/);
  assert.doesNotMatch(r.logs, /after/);
});

test("bash: abort cancels and kills the tree", async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 150);
  const r = await bash("echo started\nsleep 100\n", { signal: controller.signal });
  assert.deepEqual(r.outcome, { status: "canceled" });
  assert.ok(r.ms < 2000, `took ${r.ms} ms`);
  assert.match(r.logs, /started/);
});

test("bash: an already aborted signal never starts the job", async () => {
  const r = await bash("echo should-not-run\n", { signal: AbortSignal.abort() });
  assert.deepEqual(r.outcome, { status: "canceled" });
  assert.equal(r.logs, "");
});

test("bash: the script sees only req.env plus PATH, HOME, TMPDIR and LANG", async () => {
  process.env.SECRET_TEST = "x";
  try {
    const r = await bash("env\n", { env: { FOO: "bar", HOME: "/ignored" } });
    assert.equal(r.outcome.status, "success");
    const vars = Object.fromEntries(
      r.logs
        .trim()
        .split("\n")
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
    assert.equal(vars.SECRET_TEST, undefined);
    assert.equal(vars.FOO, "bar");
    assert.equal(vars.HOME, r.jobDir);
    assert.equal(vars.TMPDIR, r.jobDir);
    assert.equal(vars.LANG, "C.UTF-8");
    assert.equal(vars.PATH?.split(":")[0], path.dirname(process.execPath));
    // bash itself adds PWD, SHLVL and _.
    assert.deepEqual(Object.keys(vars).sort(), [
      "FOO",
      "HOME",
      "LANG",
      "PATH",
      "PWD",
      "SHLVL",
      "TMPDIR",
      "_",
    ]);
  } finally {
    delete process.env.SECRET_TEST;
  }
});

test("bash: the job dir is fresh, private, and removed afterwards", async () => {
  const jobId = "fixed-id";
  const first = await bash('touch leftover\nstat -c %a "$PWD"\n', { jobId });
  assert.deepEqual(first.outcome, { status: "success", result: 700 });
  await jobDirRemoved();
  assert.equal(existsSync(first.jobDir), false);
  const second = await bash("ls -A\n", { jobId });
  // A cold start reads its arguments from .millrace-args (never from a command line).
  assert.equal(second.logs, ".millrace-args\nmain.sh\n");
});

test("bash: output beyond 2 MB is truncated with a note while the script keeps running", async () => {
  const r = await bash("head -c 3000000 /dev/zero | tr '\\0' 'a'\necho\necho finished\n");
  assert.deepEqual(r.outcome, { status: "success", result: "finished" });
  assert.ok(r.logs.endsWith("\n[output truncated at 2 MB]\n"));
  assert.equal(Buffer.byteLength(r.logs), 2 * 1024 * 1024 + "\n[output truncated at 2 MB]\n".length);
});

test("bash: multi-byte characters survive chunk boundaries", async () => {
  const r = await bash("for i in $(seq 1 20000); do printf 'é€😀'; done\necho\n");
  assert.equal(r.logs, `${"é€😀".repeat(20000)}\n`);
});

test("bash: stdout and stderr are both logged", async () => {
  const r = await bash("echo out\necho err >&2\n");
  assert.match(r.logs, /out\n/);
  assert.match(r.logs, /err\n/);
});

// Windmill's workers give jobs pipes; a socket (Node's default for a child's stdio) cannot be
// opened again by path, and `echo … > /dev/stderr` failed with "No such device or address".
const VIA_DEV =
  'readlink /proc/$$/fd/1 | grep -c "^socket:" || true\necho to-stdout > /dev/stdout\necho to-stderr > /dev/stderr\necho "$1"\n';

for (const sandbox of [true, false]) {
  test(`bash: /dev/stdout and /dev/stderr can be written to (${sandbox ? "sandbox" : "no sandbox"})`, async () => {
    const r = await bash(VIA_DEV, { sandbox, args: { last: "done" }, argOrder: ["last"] });
    assert.deepEqual(r.outcome, { status: "success", result: "done" }, r.logs);
    assert.match(r.logs, /^0\n/, "stdout is not a socket");
    assert.match(r.logs, /to-stdout\n/);
    assert.match(r.logs, /to-stderr\n/);
    assert.doesNotMatch(r.logs, /No such device|Permission denied/);
  });
}

test("invalid job ids are rejected before touching the disk", async () => {
  for (const jobId of ["../escape", ".deno-cache", "", "a/b"]) {
    await assert.rejects(
      executeJob({
        jobId,
        language: "bash",
        content: "echo hi",
        args: {},
        argOrder: [],
        env: {},
        workRoot: root,
        timeoutMs: 1000,
        onLog: () => {},
      }),
      /invalid job id/,
    );
  }
});

test("postgresql without a database argument fails saying what is missing", async () => {
  const r = await run(root, { language: "postgresql", content: "select 1" });
  assert.equal(r.outcome.status, "failure");
  assert.match(JSON.stringify(r.outcome), /needs a `database` argument/);
});

test("a work root the job user cannot reach is refused with a clear error (root workers)", async () => {
  const hidden = path.join(root, "hidden");
  mkdirSync(hidden, { mode: 0o700 });
  const attempt = run(path.join(hidden, "jobs"), { language: "bash", content: "echo reached" });
  if (process.getuid?.() === 0) {
    await assert.rejects(attempt, /cannot reach .*hidden\/jobs: .*hidden is not searchable by others/);
  } else {
    assert.deepEqual((await attempt).outcome, { status: "success", result: "reached" });
  }
});

test("bash: arguments (maybe resolved secrets) never appear on a command line", async () => {
  const marker = `arg-marker-${process.pid}-${Date.now()}`;
  const seen: number[] = [];
  let running = true;
  const watch = (async () => {
    while (running) {
      seen.push(...processesShowing(marker).filter((pid) => pid !== process.pid));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const r = await bash('sleep 0.5\necho "[$1]"\n', { args: { secret: marker }, argOrder: ["secret"] });
  running = false;
  await watch;
  assert.deepEqual(r.outcome, { status: "success", result: `[${marker}]` });
  assert.deepEqual(seen, [], "no process showed the argument");
});
