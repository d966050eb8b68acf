import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { scratchDir } from "../exec/testing.ts";
import { WarmProcess, type WarmLanguage } from "./warm-process.ts";

const root = scratchDir();
let n = 0;

async function start(language: WarmLanguage, content: string): Promise<WarmProcess> {
  return WarmProcess.start({ language, content, dir: path.join(root, `p${++n}`), env: { BASE_VAR: "base" } });
}

async function run(proc: WarmProcess, args: Record<string, unknown>, order: string[], extra: object = {}) {
  let logs = "";
  const outcome = await proc.run({
    args,
    argOrder: order,
    env: {},
    timeoutMs: 10_000,
    onLog: (chunk) => (logs += chunk),
    ...extra,
  });
  return { outcome, logs };
}

const SCRIPTS: Record<
  WarmLanguage,
  { ok: string; crash: string; hang: string; broken: string; byPath: string }
> = {
  bun: {
    byPath: [
      'import { appendFileSync } from "node:fs";',
      "export function main() {",
      '  appendFileSync("/dev/stdout", "out by path\\n");',
      '  appendFileSync("/dev/stderr", "err by path\\n");',
      "}",
    ].join("\n"),
    ok: [
      "let calls = 0;",
      "export function main(a: number, b = 2) {",
      '  process.stdout.write("no newline");',
      '  console.error("to stderr", a);',
      "  calls++;",
      "  if (a < 0) throw new TypeError(`negative: ${a}`);",
      "  return { sum: a + b, calls, job: process.env.WM_JOB_ID ?? null, base: process.env.BASE_VAR, pid: process.pid };",
      "}",
    ].join("\n"),
    crash: "export function main() { process.exit(3); }",
    hang: "export async function main() { await new Promise(() => setInterval(() => {}, 1000)); }",
    broken: "export function main( {",
  },
  python3: {
    byPath: [
      "def main():",
      '    with open("/dev/stdout", "w") as out:',
      '        out.write("out by path\\n")',
      '    with open("/dev/stderr", "w") as err:',
      '        err.write("err by path\\n")',
    ].join("\n"),
    ok: [
      "import os, sys",
      "calls = 0",
      "def main(a, b=2):",
      "    global calls",
      '    sys.stdout.write("no newline")',
      '    print("to stderr", a, file=sys.stderr)',
      "    calls += 1",
      "    if a < 0:",
      '        raise TypeError(f"negative: {a}")',
      '    return {"sum": a + b, "calls": calls, "job": os.environ.get("WM_JOB_ID"), "base": os.environ.get("BASE_VAR"), "pid": os.getpid()}',
    ].join("\n"),
    crash: "import os\ndef main():\n    os._exit(3)\n",
    hang: "import time\ndef main():\n    time.sleep(60)\n",
    broken: "def main(:\n    pass\n",
  },
};

for (const language of ["bun", "python3"] as const) {
  describe(`${language} warm process`, () => {
    it("imports once and runs jobs one after another, each with its own args, env and logs", async () => {
      const proc = await start(language, SCRIPTS[language].ok);
      try {
        const first = await proc.run({
          args: { a: 1 },
          argOrder: ["a", "b"],
          env: { WM_JOB_ID: "job-1" },
          timeoutMs: 10_000,
          onLog: () => {},
        });
        const second = await run(proc, { a: 5, b: 10 }, ["a", "b"]);
        assert.equal(first.status, "success");
        assert.equal(second.outcome.status, "success");
        const r1 = (first as { result: Record<string, unknown> }).result;
        const r2 = (second.outcome as { result: Record<string, unknown> }).result;
        assert.deepEqual([r1.sum, r1.calls, r1.job, r1.base], [3, 1, "job-1", "base"]);
        // Same process (module state kept), and the previous job's variables are gone.
        assert.deepEqual([r2.sum, r2.calls, r2.job, r2.pid], [15, 2, null, r1.pid]);
        assert.ok(typeof second.outcome === "object" && "execMs" in second.outcome);
        assert.match(second.logs, /no newline/);
        assert.match(second.logs, /to stderr 5/);
        const failed = await run(proc, { a: -1 }, ["a"]);
        assert.equal(failed.outcome.status, "failure");
        if (failed.outcome.status === "failure") {
          assert.equal(failed.outcome.error.name, "TypeError");
          assert.equal(failed.outcome.error.message, "negative: -1");
        }
        assert.equal(proc.dead, false, "an exception does not end the process");
      } finally {
        await proc.close();
      }
    });

    it("a job writes to /dev/stdout and /dev/stderr by path (its output is pipes)", async () => {
      const proc = await start(language, SCRIPTS[language].byPath);
      try {
        const { outcome, logs } = await run(proc, {}, []);
        assert.equal(outcome.status, "success", logs);
        assert.match(logs, /out by path\n/);
        assert.match(logs, /err by path\n/);
      } finally {
        await proc.close();
      }
    });

    it("a crash fails the job and leaves the process dead (its owner starts another)", async () => {
      const proc = await start(language, SCRIPTS[language].crash);
      const { outcome } = await run(proc, {}, []);
      assert.equal(outcome.status, "failure");
      if (outcome.status === "failure")
        assert.match(outcome.error.message, /dedicated process ended.*exit code 3/);
      assert.equal(proc.dead, true);
      await proc.close();
    });

    it("timeout and cancel kill the process", async () => {
      const proc = await start(language, SCRIPTS[language].hang);
      const timedOut = await run(proc, {}, [], { timeoutMs: 300 });
      assert.equal(timedOut.outcome.status, "failure");
      if (timedOut.outcome.status === "failure") assert.equal(timedOut.outcome.error.name, "TimeoutError");
      await proc.close();
      const again = await start(language, SCRIPTS[language].hang);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const canceled = await run(again, {}, [], { signal: controller.signal });
      assert.deepEqual(canceled.outcome, { status: "canceled" });
      await again.close();
      assert.equal(again.dead, true);
    });

    it("a script that does not load fails every job with the load error", async () => {
      const proc = await start(language, SCRIPTS[language].broken);
      try {
        assert.ok(proc.loadError);
        const { outcome } = await run(proc, {}, []);
        assert.equal(outcome.status, "failure");
      } finally {
        await proc.close();
      }
    });
  });
}
