// Warm sandboxes: set up ahead of their jobs, indistinguishable from a sandbox set up for the job
// (environment, limits, isolation); a bash stub's kept for the next job of the same reuse key
// only, with nothing of the job before left in it.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import type { ExecuteRequest } from "./execute.ts";
import { jobDirRemoved } from "./job-dir.ts";
import { detectSandbox } from "./sandbox.ts";
import { launcherWithWarmPool, plainSpec, run, scratchDir, warmUp, type TestRun } from "./testing.ts";
import { needsCleanExec, WarmSandboxes } from "./warm-sandbox.ts";
import { bunStartEnv, bunStubCanRun } from "./bun-stub.ts";
import { resolvedInterpreters } from "./interpreters.ts";
import { TS_WRAPPER } from "./wrappers.ts";

const root = scratchDir();
const { launcher, pool } = launcherWithWarmPool(root);
const sandbox = detectSandbox();

const bashSpec = plainSpec("bash");

const PROBE = [
  'echo "dir=$PWD"',
  "env | grep -v -E '^(HOME|PWD|TMPDIR|OLDPWD)=' | sort",
  "ulimit -a",
  "ls /",
  "id -u",
  // A bash job runs in the stub's own bash: the same script name, arguments, options, variables.
  'echo "$0 $# $* ${BASH_SOURCE[*]}"',
  "shopt -p",
  "set +o",
  "compgen -v | grep -v -E '^(BASHPID|EPOCH|RANDOM|SRANDOM|LINENO|SECONDS|PPID|BASH_LINENO|_)'",
  // Its error names the script and line as a fresh bash's would. On stdout: stdout and stderr are
  // two pipes, whose chunks the log interleaves in whichever order they are read.
  "undefined_command_of_the_job 2>&1",
  'echo "flags $-"',
  // Builtins only: a pipeline's own processes would make the list racy.
  'for p in /proc/[0-9]*; do read -r c < "$p/comm"; echo "process $c"; done',
].join("\n");

const bash = (content: string, extra: Partial<ExecuteRequest> = {}) =>
  run(root, { language: "bash", content, launcher, env: { JOB_VAR: "mine" }, ...extra });

test("a job in a warm sandbox sees what it would see in a sandbox made for it", async () => {
  assert.equal(sandbox.kind, "bubblewrap");
  const withArgs = { args: { a: "x y", b: "" }, argOrder: ["a", "b"] };
  const cold = await bash(PROBE, withArgs);
  await warmUp(pool, bashSpec);
  const warm = await bash(PROBE, { warmSandboxes: pool, ...withArgs });
  assert.equal(cold.outcome.status, "success", cold.logs);
  assert.equal(warm.outcome.status, "success", warm.logs);
  const dirOf = (logs: string) => /^dir=(.*)$/m.exec(logs)![1]!;
  assert.equal(path.dirname(dirOf(cold.logs)), root);
  assert.match(path.basename(dirOf(warm.logs)), /^warm-/, "the job ran in a warm sandbox");
  // The traces of the stub: the process it is, which the job may see but not read (below), and
  // its control folder's mount point, /run.
  const body = (logs: string) =>
    logs
      .replace(/^dir=.*\n/, "")
      .replace("process millrace-stub\n", "")
      .replace(/^run\n/m, "");
  assert.match(warm.logs, /^process millrace-stub$/m);
  assert.equal(body(warm.logs), body(cold.logs), "same environment, limits, filesystem, user, processes");
  assert.match(warm.logs, /JOB_VAR=mine/);
});

test("variables bash cannot export itself still reach a job in a warm sandbox", async () => {
  await warmUp(pool, bashSpec);
  const env = { JOB_VAR: "mine", "NOT-AN-IDENTIFIER": "a b", _mr_f: "stub-like" };
  const r = await bash("echo \"${PWD##*/}\" | cut -c1-5\nenv | grep -E '^(JOB_VAR|NOT-AN|_mr_f)' | sort", {
    warmSandboxes: pool,
    env,
  });
  assert.equal(r.outcome.status, "success", r.logs);
  assert.equal(r.logs, "warm-\nJOB_VAR=mine\nNOT-AN-IDENTIFIER=a b\n_mr_f=stub-like\n");

  // Read-only in bash (export refuses it) and read by bash at its start: as a fresh bash takes them.
  const script = 'echo "UID=$UID"\nenv | grep -E "^(UID|BASH_ENV)=" | sort';
  const special = { UID: "12345", BASH_ENV: "/nonexistent-bash-env" };
  const cold = await bash(script, { env: special });
  await warmUp(pool, bashSpec);
  const warm = await bash(script, { warmSandboxes: pool, env: special });
  assert.equal(warm.outcome.status, "success", warm.logs);
  assert.match(warm.logs, /BASH_ENV=\/nonexistent-bash-env\nUID=12345\n$/);
  assert.equal(warm.logs, cold.logs);
});

test("a job in a warm sandbox writes to /dev/stdout and /dev/stderr", async () => {
  await warmUp(pool, bashSpec);
  const r = await bash('echo "${PWD##*/}" | cut -c1-5\necho out > /dev/stdout\necho err > /dev/stderr\n', {
    warmSandboxes: pool,
  });
  assert.equal(r.outcome.status, "success", r.logs);
  assert.match(r.logs, /^warm-\n/);
  assert.match(r.logs, /out\n/);
  assert.match(r.logs, /err\n/);
});

test("a bash job ends in a warm sandbox as it would in a fresh bash, however it ends", async () => {
  const endings = [
    "echo hi\nfalse\n", // reaches its end: the stub reports the status
    "echo hi\nexit 3\n",
    "echo hi\nset -e\nfalse\necho never\n",
    // An EXIT trap of the script's own still prints and sets the status after its end.
    "trap 'echo bye; exit 4' EXIT\necho hi\n",
    "trap 'echo bye' EXIT\necho hi\n",
    // The stub writes nowhere the script pointed its fd 247 (here its own stderr).
    "exec 247>&2\necho hi\n",
    "echo hi\nkill -TERM $$\necho never\n",
  ];
  for (const script of endings) {
    const cold = await bash(script);
    await warmUp(pool, bashSpec);
    const warm = await bash(script, { warmSandboxes: pool });
    assert.deepEqual(warm.outcome, cold.outcome, script);
    assert.equal(warm.logs, cold.logs, script);
  }
});

test("a job's stdin is /dev/null in a warm sandbox too (its stub read the job there)", async () => {
  const scripts = {
    bash: 'echo "${PWD##*/}" | cut -c1-5 >&2\nreadlink /proc/$$/fd/0\nread -r line || echo "nothing to read"\n',
    python3:
      "import os, sys\ndef main():\n    print(os.path.basename(os.getcwd())[:5], file=sys.stderr)\n    return [os.readlink('/proc/self/fd/0'), sys.stdin.read()]\n",
    bun: "import fs from 'node:fs';\nexport function main() {\n  console.error(process.cwd().split('/').pop().slice(0, 5));\n  return [fs.readlinkSync('/proc/self/fd/0'), fs.readFileSync(0, 'utf8')];\n}\n",
  } as const;
  // The first line of the logs: the job folder's name, "warm-…" when it ran in a warm sandbox.
  const [where, rest] = [(logs: string) => logs.split("\n")[0], (logs: string) => logs.replace(/^.*\n/, "")];
  for (const [language, content] of Object.entries(scripts) as [keyof typeof scripts, string][]) {
    const spec = language === "bash" ? bashSpec : plainSpec(language);
    const cold = await run(root, { language, content, launcher });
    await warmUp(pool, spec);
    const warm = await run(root, { language, content, launcher, warmSandboxes: pool });
    assert.equal(warm.outcome.status, "success", warm.logs);
    assert.deepEqual(warm.outcome, cold.outcome, language);
    assert.equal(where(warm.logs), "warm-", language);
    assert.notEqual(where(cold.logs), "warm-", language);
    assert.equal(rest(warm.logs), rest(cold.logs), language);
    const expected = language === "bash" ? "nothing to read" : ["/dev/null", ""];
    assert.deepEqual(cold.outcome.status === "success" && cold.outcome.result, expected, language);
  }
});

const resultOf = (r: TestRun) => String(r.outcome.status === "success" && r.outcome.result);

test("jobs of one reuse key run one after the other in one sandbox, and none finds anything of the one before", async () => {
  await warmUp(pool, bashSpec);
  const key = { warmSandboxes: pool, reuseKey: `leftovers-${Math.random()}` };
  const leave = [
    "touch left-in-folder /tmp/left-in-tmp /dev/shm/left-in-shm /tmp/.hidden",
    "mkdir -p /tmp/a/b && touch /tmp/a/b/c",
    "(setsid sleep 30 &)",
    "sleep 30 &",
    'echo "$PWD"',
  ].join("\n");
  const look = [
    "ls -A",
    "ls -A /tmp /dev/shm /dev/mqueue",
    'for p in /proc/[0-9]*; do read -r c < "$p/comm"; echo "process $c"; done',
    'read -r score < /proc/self/oom_score_adj; echo "oom score $score"',
    'echo "$PWD"',
  ].join("\n");
  const first = await bash(leave, key);
  assert.equal(first.outcome.status, "success", first.logs);
  const second = await bash(look, key);
  assert.equal(second.outcome.status, "success", second.logs);
  assert.equal(resultOf(second), resultOf(first), "the second job ran in the first one's sandbox");
  assert.doesNotMatch(second.logs, /left-in|hidden|^a$/m);
  // The folders bwrap made under the sandbox's /tmp to bind the job folder (JOB_DIR is under /tmp
  // here) and the interpreters (a checkout under /tmp) stay; nothing else does.
  assert.match(second.logs, /^\/dev\/mqueue:\n\n\/dev\/shm:\n\n\/tmp:\n/m);
  assert.match(second.logs, new RegExp(`^${path.basename(root)}$`, "m"));
  assert.deepEqual(
    second.logs.match(/^process .*$/gm)?.sort(),
    ["process bash", "process bwrap", "process millrace-stub"],
    "the first job's sleeps are gone",
  );
  // The OOM killer picks a kept sandbox's jobs before the worker, as any job's.
  assert.match(second.logs, /^oom score 1000$/m);
  const third = await bash(look, key);
  assert.equal(resultOf(third), resultOf(first));
});

test("a job never shares a sandbox with a job of another reuse key, or of none", async () => {
  const where = async (reuseKey?: string) => {
    await warmUp(pool, bashSpec);
    return resultOf(await bash('echo "$PWD"', { warmSandboxes: pool, ...(reuseKey ? { reuseKey } : {}) }));
  };
  const [a, b] = [`a-${Math.random()}`, `b-${Math.random()}`];
  const first = await where(a);
  assert.notEqual(await where(b), first);
  assert.notEqual(await where(), first);
  assert.equal(await where(a), first, "the sandbox of key a waited for the next job of key a");
});

test("a job cannot read or trace its stub: the stub runs from a file the job may not read", async () => {
  await warmUp(pool, bashSpec);
  const r = await bash(
    [
      'read -r c < /proc/$PPID/comm; echo "parent $c"',
      "cat /proc/$PPID/environ > /dev/null 2>&1 || echo 'environ denied'",
      "head -c 1 /proc/$PPID/mem > /dev/null 2>&1 || echo 'memory denied'",
      "ls /proc/$PPID/fd > /dev/null 2>&1 || echo 'fds denied'",
      "cat /run/millrace/millrace-stub > /dev/null 2>&1 || echo 'binary denied'",
      "touch /run/millrace/x 2>/dev/null || echo 'control folder read-only'",
      "touch /dev/x 2>/dev/null || echo '/dev read-only'",
    ].join("\n"),
    { warmSandboxes: pool, reuseKey: `stub-${Math.random()}` },
  );
  assert.equal(r.outcome.status, "success", r.logs);
  assert.equal(
    r.logs,
    "parent millrace-stub\nenviron denied\nmemory denied\nfds denied\nbinary denied\ncontrol folder read-only\n/dev read-only\n",
  );
});

test("a sandbox whose job left what its stub cannot clean, or that was killed, serves no other job", async () => {
  const reuseKey = `unclean-${Math.random()}`;
  const where = async (script: string, extra: Partial<ExecuteRequest> = {}) => {
    await warmUp(pool, bashSpec);
    return bash(`${script}\necho "$PWD"`, { warmSandboxes: pool, reuseKey, ...extra });
  };
  const first = await where("true");
  // A folder its own user cannot empty.
  const locked = await where("mkdir -p /tmp/locked/in && chmod 0 /tmp/locked");
  assert.equal(resultOf(locked), resultOf(first));
  const after = await where("true");
  assert.notEqual(resultOf(after), resultOf(first), "the unclean sandbox was ended");
  // A job folder the worker does not empty in its own turn (a folder in it): removed with the sandbox.
  const nested = await where("mkdir -p sub/deeper && touch sub/deeper/file");
  assert.equal(resultOf(nested), resultOf(after));
  const fresh = await where("true");
  assert.notEqual(resultOf(fresh), resultOf(after), "the sandbox with a folder to remove was ended");
  await jobDirRemoved();
  assert.ok(!existsSync(resultOf(after)), "and its folder removed");
  // A job killed at its limit (the worker kills the sandbox).
  const cpu = await where("while :; do :; done", { limits: { cpuSeconds: 1 } });
  assert.equal(cpu.outcome.status === "failure" && cpu.outcome.error.name, "CpuLimitExceeded");
  const timedOut = await where("sleep 30", { timeoutMs: 300 });
  assert.equal(timedOut.outcome.status, "failure");
  const next = await where("true");
  assert.notEqual(resultOf(next), resultOf(after));
});

test("what a job left running goes with its sandbox, after the job is over", async () => {
  const marker = `sleep ${30 + Math.random()}`;
  const running = () =>
    readdirSync("/proc").filter((pid) => {
      try {
        return (
          /^\d+$/.test(pid) &&
          readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim() === marker
        );
      } catch {
        return false;
      }
    });
  await warmUp(pool, bashSpec);
  // The job ends once its background sleep is running.
  const r = await bash(
    `${marker} &\nuntil [[ $(tr '\\0' ' ' < /proc/$!/cmdline) == "${marker} " ]]; do sleep 0.01; done\necho "$PWD"\n`,
    { warmSandboxes: pool },
  );
  assert.equal(r.outcome.status, "success", r.logs);
  const deadline = Date.now() + 5000;
  while (running().length > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(running(), [], "the background sleep was killed");
  await jobDirRemoved();
  assert.ok(!existsSync(String(r.outcome.status === "success" && r.outcome.result)), "its folder is gone");
});

test("only names bash would mishandle with export need the env -i way", () => {
  for (const name of ["JOB_VAR", "WM_TOKEN", "_private", "PATH", "HOME", "x1"]) {
    assert.equal(needsCleanExec(name), false, name);
  }
  for (const name of ["NOT-AN-IDENTIFIER", "1ABC", "", "BASH_ENV", "SHELLOPTS", "IFS", "UID", "_mr_x"]) {
    assert.equal(needsCleanExec(name), true, name);
  }
});

for (const language of ["python3", "bun"] as const) {
  test(`${language}: a job in a warm sandbox gets the environment it would get cold`, async () => {
    const spec = plainSpec(language, true, { JOB_VAR: "mine" });
    const content =
      language === "python3"
        ? "import os\ndef main():\n    return sorted(k for k in os.environ if k not in ('HOME', 'TMPDIR'))\n"
        : "export function main() {\n  return Object.keys(process.env).filter((k) => !['HOME', 'TMPDIR'].includes(k)).sort();\n}\n";
    const job = (extra: Partial<ExecuteRequest> = {}) =>
      run(root, { language, content, launcher, env: { JOB_VAR: "mine" }, ...extra });
    const cold = await job();
    await warmUp(pool, spec);
    const warm = await job({ warmSandboxes: pool });
    assert.equal(cold.outcome.status, "success", cold.logs);
    assert.deepEqual(warm.outcome, cold.outcome);
    assert.ok(cold.outcome.status === "success" && (cold.outcome.result as string[]).includes("JOB_VAR"));
  });
}

/**
 * Checks that a cold and a warm run of a job reporting `stub` (whether its interpreter was
 * started ahead) both succeeded and differ in that alone; returns the cold run's result.
 */
function sameButStub(cold: TestRun, warm: TestRun, interpreter: string): Record<string, unknown> {
  assert.equal(cold.outcome.status, "success", cold.logs);
  assert.equal(warm.outcome.status, "success", warm.logs);
  const coldResult = (cold.outcome as { result: Record<string, unknown> }).result;
  const warmResult = (warm.outcome as { result: Record<string, unknown> }).result;
  assert.equal(coldResult.stub, false);
  assert.equal(warmResult.stub, true, `the job ran in the ${interpreter} started ahead`);
  assert.deepEqual({ ...warmResult, stub: false }, coldResult);
  return coldResult;
}

test("python3: a job run by a warm python3 sees what a fresh python3 would", async () => {
  const spec = plainSpec("python3");
  const content = [
    "import os, sys, resource",
    "def main(x):",
    "    here = os.getcwd()",
    "    main_module = sys.modules['__main__']",
    "    return {",
    "        'x': x,",
    "        'argv': sys.argv,",
    "        'path0': sys.path[0] == here,",
    "        'pythonpath': sys.path[1] if os.environ.get('PYTHONPATH') else None,",
    "        'file': main_module.__file__ == os.path.join(here, sys.argv[0]),",
    "        'flags': list(sys.flags),",
    "        'encodings': [sys.stdout.encoding, sys.stdout.errors, sys.getfilesystemencoding()],",
    "        'limits': [resource.getrlimit(r) for r in (resource.RLIMIT_CPU, resource.RLIMIT_FSIZE, resource.RLIMIT_CORE, resource.RLIMIT_NPROC)],",
    "        'env': sorted(k for k in os.environ if k not in ('HOME', 'TMPDIR')),",
    "        'stub': '-c' in sys.orig_argv,",
    "    }",
    "",
  ].join("\n");
  const job = (extra: Partial<ExecuteRequest> = {}) =>
    run(root, {
      language: "python3",
      content,
      launcher,
      args: { x: "é" },
      argOrder: ["x"],
      env: { JOB_VAR: "mine", PYTHONPATH: "/nonexistent-deps" },
      ...extra,
    });
  const cold = await job();
  await warmUp(pool, spec);
  const warm = await job({ warmSandboxes: pool });
  const coldResult = sameButStub(cold, warm, "python3");
  assert.equal(coldResult.pythonpath, "/nonexistent-deps");
});

test("bun: a job run by a warm bun sees what a fresh bun would", async () => {
  const env = { JOB_VAR: "mine", NODE_PATH: "/nonexistent-clients", WM_JOB_ID: "per-job" };
  const content = [
    'import { readFileSync } from "node:fs";',
    "export function main(x: string) {",
    "  const here = process.cwd();",
    "  return {",
    "    x,",
    "    argv: process.argv.slice(1).map((arg) => arg.replace(here, '<dir>')),",
    "    argv0: process.argv[0] === process.execPath,",
    "    execArgv: process.execArgv,",
    "    env: Object.entries(process.env)",
    "      .filter(([k]) => !['HOME', 'TMPDIR', 'PWD'].includes(k))",
    "      .sort(([a], [b]) => a.localeCompare(b)),",
    "    dirs: [process.env.HOME, process.env.TMPDIR, process.env.PWD].map((d) => d === here),",
    "    limits: readFileSync('/proc/self/limits', 'utf8'),",
    "    stub: readFileSync('/proc/self/cmdline', 'utf8').split('\\0').includes('-e'),",
    "  };",
    "}",
    "",
  ].join("\n");
  const job = (extra: Partial<ExecuteRequest> = {}) =>
    run(root, { language: "bun", content, launcher, args: { x: "é" }, argOrder: ["x"], env, ...extra });
  const cold = await job();
  await warmUp(pool, plainSpec("bun", true, env));
  const warm = await job({ warmSandboxes: pool });
  const coldResult = sameButStub(cold, warm, "bun");
  assert.deepEqual(coldResult.dirs, [true, true, true]);
  assert.match(String(coldResult.limits), /Max cpu time\s+\d+\s+\d+ +seconds/);
});

test("bun: a job's limits apply in a warm bun", async () => {
  const spec = plainSpec("bun");
  await warmUp(pool, spec);
  const cpu = await run(root, {
    language: "bun",
    content: "export function main() {\n  for (;;) {}\n}\n",
    launcher,
    warmSandboxes: pool,
    limits: { cpuSeconds: 1 },
  });
  assert.equal(cpu.outcome.status === "failure" && cpu.outcome.error.name, "CpuLimitExceeded", cpu.logs);
});

test("a warm bun only becomes jobs whose start-time variables are its own", () => {
  const bun = resolvedInterpreters().bun;
  const stubEnv = { NODE_PATH: "/clients", PATH: "/usr/bin", HOME: "/d", TMPDIR: "/d", LANG: "C.UTF-8" };
  const jobEnv = {
    ...stubEnv,
    WM_TOKEN: "t",
    WM_JOB_ID: "j",
    BASE_INTERNAL_URL: "http://x",
    PYTHONPATH: "/p",
  };
  assert.equal(bunStubCanRun(bun, stubEnv, jobEnv, [bun, TS_WRAPPER]), true);
  assert.equal(
    bunStubCanRun(bun, stubEnv, { ...jobEnv, NODE_PATH: "/deps:/clients" }, [bun, TS_WRAPPER]),
    false,
  );
  assert.equal(bunStubCanRun(bun, stubEnv, { ...jobEnv, NODE_OPTIONS: "--x" }, [bun, TS_WRAPPER]), false);
  const { NODE_PATH: _dropped, ...withoutNodePath } = jobEnv;
  assert.equal(bunStubCanRun(bun, stubEnv, withoutNodePath, [bun, TS_WRAPPER]), false);
  assert.equal(bunStubCanRun(bun, stubEnv, jobEnv, [bun, "other.ts"]), false);
  assert.equal(bunStubCanRun(bun, stubEnv, jobEnv, [bun, "--smol", TS_WRAPPER]), false);
  assert.deepEqual(bunStartEnv({ ...jobEnv, JOB_VAR: "x" }), { NODE_PATH: "/clients", JOB_VAR: "x" });
});

test("without a reuse key each warm sandbox serves one job, and its folder goes with the job", async () => {
  await warmUp(pool, bashSpec);
  const first = await bash('touch left-behind\necho "$PWD"', { warmSandboxes: pool });
  await warmUp(pool, bashSpec);
  const second = await bash('ls -A; echo "$PWD"', { warmSandboxes: pool });
  const dirOf = (r: typeof first) => String(r.outcome.status === "success" && r.outcome.result);
  assert.notEqual(dirOf(first), dirOf(second));
  assert.equal(
    second.logs,
    `.millrace-args\nmain.sh\n${dirOf(second)}\n`,
    "nothing of the first job is there",
  );
  await jobDirRemoved();
  assert.ok(!existsSync(dirOf(first)) && !existsSync(dirOf(second)));
});

test("the job's limits apply in a warm sandbox, and cancel kills it", async () => {
  await warmUp(pool, bashSpec);
  const cpu = await bash("while :; do :; done\n", { warmSandboxes: pool, limits: { cpuSeconds: 1 } });
  assert.equal(cpu.outcome.status === "failure" && cpu.outcome.error.name, "CpuLimitExceeded");
  await warmUp(pool, bashSpec);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  const started = performance.now();
  const canceled = await bash("sleep 30 &\nsleep 30\n", { warmSandboxes: pool, signal: controller.signal });
  assert.deepEqual(canceled.outcome, { status: "canceled" });
  assert.ok(performance.now() - started < 1500);
});

test("a job whose sandbox differs (another network setting) runs cold", async () => {
  await warmUp(pool, bashSpec);
  const r = await bash('echo "$PWD"', { warmSandboxes: pool, network: false });
  assert.equal(path.dirname(String(r.outcome.status === "success" && r.outcome.result)), root);
  assert.equal(pool.available(bashSpec), 1, "the waiting sandbox was left for a job of its kind");
});

test("a used sandbox is replaced after its job is over, not in the turn it ended, even once none is left", async () => {
  const otherRoot = path.join(root, "replenish");
  const other = new WarmSandboxes({ workRoot: otherRoot, bwrap: "/usr/bin/bwrap", launcher, perSpec: 2 });
  try {
    await warmUp(other, bashSpec);
    while (other.available(bashSpec) < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    const made = new Set(readdirSync(otherRoot));
    const newFolders = () => readdirSync(otherRoot).filter((name) => !made.has(name));
    const turn = () => new Promise((resolve) => setImmediate(resolve));

    const first = await run(root, { language: "bash", content: "echo one", launcher, warmSandboxes: other });
    assert.equal(first.outcome.status, "success", first.logs);
    await turn();
    assert.deepEqual(newFolders(), [], "one sandbox is still ready: the replacement waits");
    assert.equal(other.available(bashSpec), 1);

    const second = await run(root, { language: "bash", content: "echo two", launcher, warmSandboxes: other });
    assert.equal(second.outcome.status, "success", second.logs);
    await turn();
    assert.deepEqual(newFolders(), [], "the emptied pool waits too, while the job's outcome is recorded");
    assert.equal(other.available(bashSpec), 0);
    // Then it is topped up (perSpec): the next jobs start warm.
    while (other.available(bashSpec) < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(newFolders().length >= 2, "two replacements were set up");
  } finally {
    other.close();
  }
});

test("closing the pool ends the waiting sandboxes and removes their folders", async () => {
  const otherRoot = path.join(root, "other");
  const other = new WarmSandboxes({ workRoot: otherRoot, bwrap: "/usr/bin/bwrap", launcher, perSpec: 2 });
  await warmUp(other, bashSpec);
  while (other.available(bashSpec) < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(readdirSync(otherRoot).length, 2);
  other.close();
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(other.available(bashSpec), 0);
  assert.deepEqual(readdirSync(otherRoot), [], "no folder of the closed pool is left");
});
