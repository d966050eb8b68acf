import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chooseBranch, evaluateCondition, evaluateIterator, evaluateTransform } from "./conditions.ts";
import { ExpressionError } from "./expressions.ts";

const env = { flow_input: { tier: "vip", items: [1, 2] }, results: { a: { n: 0 } } };

describe("flow conditions", () => {
  it("takes JavaScript truthiness inside the sandbox, before JSON", async () => {
    assert.equal(await evaluateCondition("flow_input.tier === 'vip'", env), true);
    assert.equal(await evaluateCondition("results.a.n", env), false);
    assert.equal(await evaluateCondition("Infinity", env), true, "JSON would make it null");
    assert.equal(await evaluateCondition("() => 0", env), true, "a function is truthy");
    assert.equal(await evaluateCondition("''", env), false);
    assert.equal(await evaluateCondition("[]", env), true);
    assert.equal(await evaluateCondition("result > 1", { ...env, result: 2 }), true);
  });

  it("chooses the first branch whose condition holds, without running the later ones", async () => {
    const branches = [
      { expr: "flow_input.tier === 'basic'" },
      { expr: "flow_input.tier === 'vip'" },
      { expr: "(() => { while (true) {} })()" },
    ];
    assert.equal(await chooseBranch(branches, env), 1);
    assert.equal(await chooseBranch([{ expr: "false" }, { expr: "0" }], env), -1);
    assert.equal(await chooseBranch([], env), -1);
    await assert.rejects(
      chooseBranch([{ expr: "false" }, { expr: "nope.x" }], env),
      (error: unknown) => error instanceof ExpressionError && error.input === "branches[1]",
    );
  });

  it("gives a for-loop's items and refuses an iterator that is not a list", async () => {
    assert.deepEqual(
      await evaluateIterator({ type: "javascript", expr: "flow_input.items.map((i) => i * 2)" }, env),
      [2, 4],
    );
    assert.deepEqual(await evaluateIterator({ type: "static", value: ["x"] }, env), ["x"]);
    await assert.rejects(
      evaluateIterator({ type: "javascript", expr: "flow_input.tier" }, env),
      (error: unknown) => error instanceof ExpressionError && /gave string, not a list/.test(error.message),
    );
  });

  it("evaluates a sleep or timeout transform, static or scripted", async () => {
    assert.equal(await evaluateTransform({ type: "static", value: 5 }, env), 5);
    assert.equal(
      await evaluateTransform({ type: "javascript", expr: "flow_input.items.length * 10" }, env),
      20,
    );
  });
});
