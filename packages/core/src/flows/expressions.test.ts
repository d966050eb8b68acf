import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  ExpressionError,
  evaluateExpression,
  evaluateTransforms,
  expressionSyntaxErrors,
  loadExpressionSandbox,
  withExpressions,
  type ExpressionFailureReason,
} from "./expressions.ts";

const env = {
  flow_input: { n: 2, name: "ada", list: [1, 2, 3] },
  results: { a: { x: 40 }, b: [1, 2], big: "x".repeat(1000) },
  previous_result: { total: 7 },
};

async function fails(
  expr: string,
  reason: ExpressionFailureReason,
  message: RegExp,
  limits?: Parameters<typeof evaluateExpression>[2],
) {
  await assert.rejects(evaluateExpression(expr, env, limits), (error: unknown) => {
    assert.ok(error instanceof ExpressionError, String(error));
    assert.equal(error.reason, reason, error.message);
    assert.equal(error.expr, expr);
    assert.match(error.message, message);
    return true;
  });
  // The sandbox is healthy afterwards.
  assert.equal(await evaluateExpression("results.a.x + flow_input.n", env), 42);
}

describe("evaluateExpression", () => {
  it("computes over flow_input, results, previous_result and the loop's iter", async () => {
    assert.equal(await evaluateExpression("results.a.x + flow_input.n", env), 42);
    assert.equal(await evaluateExpression("previous_result.total * 2", env), 14);
    assert.deepEqual(
      await evaluateExpression("flow_input.list.map((v) => v * flow_input.n)", env),
      [2, 4, 6],
    );
    assert.equal(await evaluateExpression("`hi ${flow_input.name}`", env), "hi ada");
    const iter = { ...env, iter: { value: { id: 9 }, index: 3 } };
    assert.deepEqual(
      await evaluateExpression("[flow_input.iter.value.id, flow_input.iter.index, flow_input.n]", iter),
      [9, 3, 2],
    );
    assert.equal(await evaluateExpression("results['b'].length", env), 2);
    assert.equal(
      await evaluateExpression("Object.keys(results).length", env),
      3,
      "a dynamic read sees every result",
    );
  });

  it("accepts an object literal, statements and a function body", async () => {
    assert.deepEqual(await evaluateExpression("{ a: flow_input.n }", env), { a: 2 });
    assert.equal(await evaluateExpression("const k = flow_input.n * 10;\nk + 1", env), 21);
    assert.equal(
      await evaluateExpression("if (flow_input.n > 1) return 'big';\nreturn 'small';", env),
      "big",
    );
  });

  it("returns plain JSON: undefined and functions become null, dates strings", async () => {
    assert.equal(await evaluateExpression("undefined", env), null);
    assert.equal(await evaluateExpression("() => 1", env), null);
    assert.equal(await evaluateExpression("new Date(0)", env), "1970-01-01T00:00:00.000Z");
    const value = await evaluateExpression("({ nested: { list: [1, 'a', null, true] } })", env);
    assert.deepEqual(value, { nested: { list: [1, "a", null, true] } });
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepEqual(await evaluateExpression("[1, () => 2, undefined]", env), [1, null, null]);
  });

  it("fails an endless loop with reason timeout within the cap", async () => {
    const started = Date.now();
    await fails("(() => { while (true) {} })()", "timeout", /took longer than 50 ms/, { timeoutMs: 50 });
    assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
    await fails("while (true) {}", "timeout", /took longer than 100 ms/);
  });

  it("fails unbounded allocation with reason memory", async () => {
    const started = Date.now();
    // A generous time cap, so that the memory cap is what stops it.
    await fails("let a = []; while (true) a.push(new Array(1e6).fill(1))", "memory", /more than 16 MiB/, {
      timeoutMs: 30_000,
    });
    await fails("'x'.repeat(1e8)", "memory", /memory/);
    await fails("let s = ''; while (true) s += 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'", "memory", /memory/, {
      timeoutMs: 30_000,
      memoryBytes: 4 * 1024 * 1024,
    });
    assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
  });

  it("has no way to the host: process, require, fetch and the host's globals do not exist", async () => {
    await fails("process.env", "error", /ReferenceError: 'process' is not defined/);
    await fails("require('fs')", "error", /ReferenceError: 'require' is not defined/);
    await fails("fetch('http://127.0.0.1/')", "error", /ReferenceError: 'fetch' is not defined/);
    await fails("import('fs')", "error", /could not load module|not supported|import/i);
    assert.deepEqual(
      await evaluateExpression(
        "[typeof globalThis.process, typeof Buffer, typeof setTimeout, typeof WebAssembly]",
        env,
      ),
      ["undefined", "undefined", "undefined", "undefined"],
    );
  });

  it("fails deep recursion, thrown values and syntax errors with reason error", async () => {
    await fails("(function f() { return f() })()", "error", /stack overflow/);
    await fails("throw new TypeError('nope')", "error", /^TypeError: nope$/);
    await fails("throw 'boom'", "error", /boom/);
    await fails("results.a.x +", "error", /SyntaxError/);
    await fails("results.missing.x", "error", /TypeError/);
  });

  it("waits for a promise the expression returns", async () => {
    assert.equal(await evaluateExpression("Promise.resolve(flow_input.n).then((n) => n * 3)", env), 6);
    assert.equal(
      await evaluateExpression(
        "(async () => { const v = await Promise.resolve(results.a.x); return v + 1 })()",
        env,
      ),
      41,
    );
    await fails("Promise.reject(new Error('no'))", "error", /Error: no/);
    await fails("new Promise(() => {})", "error", /never settles/);
  });

  it("gives stop_after_if and retry_if the step's result and error", async () => {
    assert.equal(await evaluateExpression("result >= 3", { ...env, result: 3 }), true);
    assert.equal(await evaluateExpression("result === null", { ...env, result: undefined }), true);
    assert.equal(
      await evaluateExpression("error.name === 'Timeout'", { ...env, error: { name: "Timeout" } }),
      true,
    );
  });

  it("keeps nothing from one evaluation to the next", async () => {
    assert.equal(await evaluateExpression("globalThis.leak = 1", env), 1);
    assert.equal(await evaluateExpression("typeof leak", env), "undefined");
  });
});

describe("plain property paths (read without a sandbox)", () => {
  // `[expr][0]` is no plain path: the sandbox computes it, and must agree.
  const bySandbox = (expr: string, on: Parameters<typeof evaluateExpression>[1] = env) =>
    evaluateExpression(`[${expr}][0]`, on);

  it("gives the value the sandbox gives, and a copy each time", async () => {
    for (const expr of [
      "flow_input.n",
      "flow_input . list [2]",
      "results.a",
      "results['a'][\"x\"]",
      "results.b.length",
      "previous_result",
      "results.big",
    ]) {
      assert.deepEqual(await evaluateExpression(expr, env), await bySandbox(expr), expr);
    }
    const first = (await evaluateExpression("results.a", env)) as { x: number };
    first.x = 0;
    assert.deepEqual(await evaluateExpression("results.a", env), { x: 40 });
    assert.deepEqual(
      await evaluateExpression("flow_input.iter.value", { ...env, iter: { value: "v", index: 3 } }),
      "v",
    );
  });

  it("leaves to the sandbox what is not an own property of the inputs", async () => {
    const weird = { flow_input: JSON.parse('{"__proto__": {"x": 1}, "s": "abc"}') as unknown };
    for (const expr of [
      "flow_input.__proto__",
      "flow_input.s.length",
      "flow_input.toString",
      "flow_input.s[0]",
    ]) {
      assert.deepEqual(await evaluateExpression(expr, weird), await bySandbox(expr, weird), expr);
    }
    // A missing step result, a property of undefined: the sandbox's own error.
    await fails("results.missing.x", "error", /TypeError: cannot read property 'x' of undefined/);
    // Sloppy JavaScript reads a leading zero as octal: the sandbox decides.
    assert.deepEqual(
      await evaluateExpression("flow_input.list[01]", env),
      await bySandbox("flow_input.list[01]"),
    );
  });

  it("tests truthiness as JavaScript does", async () => {
    const on = { flow_input: { zero: 0, empty: "", list: [], no: false, yes: "y" } };
    const exprs = [
      "flow_input.zero",
      "flow_input.empty",
      "flow_input.list",
      "flow_input.no",
      "flow_input.yes",
    ];
    const tested = await withExpressions(exprs, on, undefined, ({ test }) => exprs.map((expr) => test(expr)));
    assert.deepEqual(tested, [false, false, true, false, true]);
  });
});

describe("evaluateTransforms", () => {
  it("passes static values through and evaluates javascript ones", async () => {
    const args = await evaluateTransforms(
      {
        fixed: { type: "static", value: { k: [1] } },
        sum: { type: "javascript", expr: "results.a.x + 2" },
        item: { type: "javascript", expr: "flow_input.iter.value" },
      },
      { ...env, iter: { value: "v", index: 0 } },
    );
    assert.deepEqual(args, { fixed: { k: [1] }, sum: 42, item: "v" });
  });

  it("names the input whose expression failed", async () => {
    await assert.rejects(
      evaluateTransforms(
        { ok: { type: "javascript", expr: "1" }, bad: { type: "javascript", expr: "nope.x" } },
        env,
      ),
      (error: unknown) =>
        error instanceof ExpressionError && error.input === "bad" && error.reason === "error",
    );
  });
});

describe("expressionSyntaxErrors", () => {
  it("reports syntax errors without running anything", async () => {
    const errors = await expressionSyntaxErrors(["flow_input.x", "1 +", "while (true) {}", "return 1"]);
    assert.equal(errors[0], undefined);
    assert.match(errors[1]!, /SyntaxError/);
    assert.equal(errors[2], undefined, "compiled, not run");
    assert.equal(errors[3], undefined);
  });
});

describe("evaluation cost", () => {
  it("stays well under a millisecond per trivial expression once warm", async () => {
    await loadExpressionSandbox();
    for (let i = 0; i < 200; i++) await evaluateExpression("flow_input.n + 1", env);
    const runs = 1000;
    const started = performance.now();
    for (let i = 0; i < runs; i++) await evaluateExpression("flow_input.n + 1", env);
    const each = (performance.now() - started) / runs;
    console.log(`per evaluation: ${each.toFixed(3)} ms`);
    assert.ok(each < 5, `${each} ms per evaluation`);
  });
});
