import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  allSteps,
  fromYaml,
  insertStep,
  insideLoop,
  moveStep,
  newModule,
  nextStepId,
  removeStep,
  stepOfField,
  stepsBefore,
  toYaml,
  withDefaults,
  type FlowValue,
  type OpenFlow,
} from "./model.ts";

function sample(): FlowValue {
  let value: FlowValue = { modules: [] };
  value = insertStep(value, ["modules"], newModule("rawscript", "a", "bash"));
  value = insertStep(value, ["modules"], newModule("branchone", "b"));
  value = insertStep(value, ["modules", 1, "value", "branches", 0, "modules"], newModule("identity", "c"));
  value = insertStep(value, ["modules"], newModule("forloopflow", "d"));
  value = insertStep(value, ["modules", 2, "value", "modules"], newModule("rawscript", "e", "python3"));
  return value;
}

describe("flow editor model", () => {
  it("adds steps into branches and loops, names new ones a, b, … and lists them depth first", () => {
    const value = sample();
    assert.deepEqual(
      allSteps(value).map((step) => step.module.id),
      ["a", "b", "c", "d", "e"],
    );
    assert.equal(nextStepId(value), "f");
    assert.equal(nextStepId({ modules: [newModule("identity", "a")] }), "b");
  });

  it("moves a step within its own list and removes a step with what it contains", () => {
    const value = sample();
    const moved = moveStep(value, "d", -1);
    assert.deepEqual(
      moved.modules.map((m) => m.id),
      ["a", "d", "b"],
    );
    assert.equal(moveStep(value, "a", -1), value, "the first step cannot move up");
    assert.equal(moveStep(value, "c", 1), value, "the only step of a branch cannot move");
    const removed = removeStep(value, "b");
    assert.deepEqual(
      allSteps(removed).map((step) => step.module.id),
      ["a", "d", "e"],
    );
  });

  it("knows which results a step may read and whether it runs in a loop", () => {
    const value = sample();
    assert.deepEqual(stepsBefore(value, "a"), []);
    assert.deepEqual(stepsBefore(value, "c"), ["a"]);
    assert.deepEqual(stepsBefore(value, "d"), ["a", "b"]);
    assert.deepEqual(stepsBefore(value, "e"), ["a", "b"]);
    assert.equal(insideLoop(value, "e"), true);
    assert.equal(insideLoop(value, "c"), false);
  });

  it("finds the step a server error's field names", () => {
    const value = sample();
    assert.equal(stepOfField(value, "value.modules[1].value.branches[0].modules[0].value.type"), "c");
    assert.equal(stepOfField(value, "value.modules[2].value.iterator.expr"), "d");
    assert.equal(stepOfField(value, "value.modules[2].value.modules[0].value.input_transforms.x.expr"), "e");
    assert.equal(stepOfField(value, "summary"), null);
    assert.equal(stepOfField(value, undefined), null);
  });

  it("writes the flow as YAML and reads it back unchanged; refuses what is not a flow", () => {
    const flow: OpenFlow = {
      summary: "Greet: then loop",
      description: "multi\nline",
      value: sample(),
      schema: { type: "object", properties: { name: { type: "string", default: "world" } }, order: ["name"] },
    };
    assert.deepEqual(fromYaml(toYaml(flow)), flow);
    assert.throws(() => fromYaml("summary: [unclosed"), /does not parse/);
    assert.throws(() => fromYaml("- a\n- b"), /must be a mapping/);
    assert.throws(() => fromYaml("summary: x\nvalue: {}"), /value\.modules/);
    assert.throws(() => fromYaml("value:\n  modules:\n    - value: {type: identity}"), /needs an id/);
  });

  it("writes the same YAML whatever order the stored flow's keys come in (jsonb sorts them)", () => {
    const flow: OpenFlow = {
      summary: "s",
      value: sample(),
      schema: { type: "object", properties: { zeta: {}, a: {} }, order: ["zeta", "a"] },
    };
    // jsonb's order: shorter keys first, then bytewise.
    const jsonbOrder = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(jsonbOrder);
      if (!node || typeof node !== "object") return node;
      return Object.fromEntries(
        Object.entries(node)
          .sort(([a], [b]) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
          .map(([key, value]) => [key, jsonbOrder(value)]),
      );
    };
    const stored = jsonbOrder(flow) as OpenFlow;
    assert.equal(toYaml(stored), toYaml(flow));
    assert.ok(toYaml(stored).indexOf("zeta") < toYaml(stored).indexOf(" a:"));
    assert.match(toYaml(stored), /- id: a\n\s+value:\n\s+type: rawscript/);
  });

  it("fills the schema's defaults into a run's arguments", () => {
    const schema = { type: "object", properties: { a: { default: 1 }, b: {} }, order: ["a", "b"] };
    assert.deepEqual(withDefaults(schema, { b: 2 }), { a: 1, b: 2 });
    assert.deepEqual(withDefaults(schema, { a: 5 }), { a: 5 });
    assert.deepEqual(withDefaults(null, { x: 1 }), { x: 1 });
  });
});
