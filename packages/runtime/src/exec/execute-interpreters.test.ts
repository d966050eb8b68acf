import assert from "node:assert/strict";
import { test } from "node:test";
import { interpreterPaths } from "../index.ts";
import type { ExecuteOutcome } from "../index.ts";
import { run, scratchDir } from "./testing.ts";

const root = scratchDir();

function failureOf(outcome: ExecuteOutcome): { name: string; message: string; stack?: string } {
  assert.equal(outcome.status, "failure", JSON.stringify(outcome));
  return outcome.status === "failure" ? outcome.error : { name: "", message: "" };
}

test("interpreterPaths resolves real binaries, not shims", () => {
  const paths = interpreterPaths();
  for (const p of Object.values(paths)) assert.ok(p.startsWith("/"), p);
  assert.equal(paths.python3, "/usr/bin/python3");
  assert.match(paths.bun, /bun(\.exe)?$/);
  assert.match(paths.deno, /\/deno$/);
  assert.equal(paths.node, process.execPath);
});

test("python3: args by name, return a dict, logs", async () => {
  const content = [
    "import os",
    "def main(name: str, n: int = 2, tags: list = None):",
    '    print("hello", name, flush=True)',
    '    return {"name": name, "n": n, "tags": tags, "secret": os.environ.get("SECRET_TEST"), "foo": os.environ["FOO"]}',
  ].join("\n");
  process.env.SECRET_TEST = "x";
  try {
    const r = await run(root, {
      language: "python3",
      content,
      args: { name: "wörld \"'\\\n", tags: ["a", { b: null, c: true }] },
      argOrder: ["name", "n", "tags"],
      env: { FOO: "bar" },
    });
    assert.deepEqual(r.outcome, {
      status: "success",
      result: { name: "wörld \"'\\\n", n: 2, tags: ["a", { b: null, c: true }], secret: null, foo: "bar" },
    });
    assert.match(r.logs, /hello wörld/);
  } finally {
    delete process.env.SECRET_TEST;
  }
});

test("python3: an exception is a failure named after its class", async () => {
  const r = await run(root, {
    language: "python3",
    content: "class Oops(Exception):\n    pass\n\ndef main():\n    raise Oops('it broke')\n",
  });
  const error = failureOf(r.outcome);
  assert.equal(error.name, "Oops");
  assert.equal(error.message, "it broke");
  assert.match(error.stack ?? "", /main\.py", line 5, in main/);
  assert.doesNotMatch(error.stack ?? "", /__millrace_run__/);
});

test("python3: a syntax error is a failure", async () => {
  const r = await run(root, { language: "python3", content: "def main(:\n    pass\n" });
  assert.equal(failureOf(r.outcome).name, "SyntaxError");
});

test("python3: async main, non-JSON values and NaN", async () => {
  const content = [
    "import datetime, asyncio",
    "async def main():",
    "    await asyncio.sleep(0)",
    "    return {'when': datetime.date(2024, 1, 2), 'nan': float('nan'), 'set': {1}, 't': (1, 2), 1: 'k'}",
  ].join("\n");
  const r = await run(root, { language: "python3", content });
  assert.deepEqual(r.outcome, {
    status: "success",
    result: { when: "2024-01-02", nan: null, set: "{1}", t: [1, 2], "1": "k" },
  });
});

test("python3: deeply nested args fall back to a JSON args file; __proto__ keys stay data", async () => {
  let deep: unknown = "leaf";
  for (let i = 0; i < 100; i++) deep = [deep];
  const data = JSON.parse('{"__proto__": {"k": 1}}') as unknown;
  const r = await run(root, {
    language: "python3",
    content: "def main(deep, data):\n    return [deep, data]\n",
    args: { deep, data },
    argOrder: ["deep", "data"],
  });
  assert.deepEqual(r.outcome, { status: "success", result: [deep, data] });
});

test("python3: sys.exit(1) fails, a missing main fails", async () => {
  const exit = await run(root, {
    language: "python3",
    content: "import sys\ndef main():\n    sys.exit(1)\n",
  });
  assert.equal(failureOf(exit.outcome).name, "SystemExit");
  const missing = await run(root, { language: "python3", content: "x = 1\n" });
  assert.equal(failureOf(missing.outcome).name, "NameError");
});

test("bun: args mapped to positional parameters, defaults apply, returns an object", async () => {
  const content = [
    "export async function main(a: string, b = 10, c?: { k: number }) {",
    '  console.log("from bun", a);',
    "  return { a, b, c, env: process.env.SECRET_TEST ?? null, foo: process.env.FOO };",
    "}",
  ].join("\n");
  process.env.SECRET_TEST = "x";
  try {
    const r = await run(root, {
      language: "bun",
      content,
      args: { c: { k: 1 }, a: "hi", unknown: 1 },
      argOrder: ["a", "b", "c"],
      env: { FOO: "bar" },
    });
    assert.deepEqual(r.outcome, {
      status: "success",
      result: { a: "hi", b: 10, c: { k: 1 }, env: null, foo: "bar" },
    });
    assert.match(r.logs, /from bun hi/);
  } finally {
    delete process.env.SECRET_TEST;
  }
});

test("bun: a thrown Error is a failure with name, message and stack", async () => {
  const r = await run(root, {
    language: "bun",
    content: 'export function main() {\n  throw new RangeError("too far");\n}\n',
  });
  const error = failureOf(r.outcome);
  assert.equal(error.name, "RangeError");
  assert.equal(error.message, "too far");
  assert.match(error.stack ?? "", /main\.ts:2/);
  assert.doesNotMatch(error.stack ?? "", /__millrace_run__/);
});

test("bun: a thrown non-Error and a syntax error are failures", async () => {
  const thrown = await run(root, {
    language: "bun",
    content: "export function main() {\n  throw { code: 7 };\n}\n",
  });
  assert.deepEqual(failureOf(thrown.outcome), { name: "Error", message: '{"code":7}' });
  const syntax = await run(root, { language: "bun", content: "export function main( {\n" });
  assert.equal(syntax.outcome.status, "failure");
});

test("bun: open handles do not keep the job alive; undefined becomes null", async () => {
  const r = await run(root, {
    language: "bun",
    content: "export function main() {\n  setInterval(() => {}, 1000);\n}\n",
    timeoutMs: 5000,
  });
  assert.deepEqual(r.outcome, { status: "success", result: null });
  assert.ok(r.ms < 3000, `took ${r.ms} ms`);
});

test("deno: args and return value", async () => {
  const content = [
    "export async function main(x: number, y: string[] = []) {",
    '  console.log("from deno");',
    '  return { sum: x + 1, y, home: Deno.env.get("HOME") === Deno.cwd(), secret: Deno.env.get("SECRET_TEST") ?? null };',
    "}",
  ].join("\n");
  process.env.SECRET_TEST = "x";
  try {
    const r = await run(root, { language: "deno", content, args: { x: 41, y: ["a"] }, argOrder: ["x", "y"] });
    assert.deepEqual(r.outcome, {
      status: "success",
      result: { sum: 42, y: ["a"], home: true, secret: null },
    });
    assert.match(r.logs, /from deno/);
  } finally {
    delete process.env.SECRET_TEST;
  }
});

test("deno: a thrown Error is a failure", async () => {
  const r = await run(root, {
    language: "deno",
    content: 'export function main() {\n  throw new TypeError("bad");\n}\n',
  });
  const error = failureOf(r.outcome);
  assert.equal(error.name, "TypeError");
  assert.equal(error.message, "bad");
});
