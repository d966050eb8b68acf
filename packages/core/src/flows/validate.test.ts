import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "../errors.ts";
import { resultReferences } from "./references.ts";
import { sampleFlow } from "./sample-flow.ts";
import { modernExpression } from "./normalize.ts";
import { checkOpenFlow, validateFlow, type ValidateFlowOptions } from "./validate.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const exists: ValidateFlowOptions = {
  scriptExists: (path) => path === "f/customers/enrich",
  flowExists: async (path) => path === "f/customers/vip_onboarding",
};

async function refused(input: unknown, field: string, pattern: RegExp, options = exists) {
  await assert.rejects(validateFlow(input, options), (error: unknown) => {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, "INVALID_INPUT");
    assert.equal(error.field, field);
    assert.match(error.message, pattern);
    return true;
  });
}

function flow(edit: (value: Json) => void): Json {
  const input = sampleFlow() as Json;
  edit(input.value);
  return input;
}

describe("validateFlow", () => {
  it("accepts the sample flow: loop bodies read their earlier steps, a while-loop step its own last result", async () => {
    const parsed = await validateFlow(sampleFlow(), exists);
    assert.equal(parsed.value.modules.length, 5);
    await validateFlow(sampleFlow());
  });

  it("refuses duplicate step ids, nested ones and the failure module included", async () => {
    await refused(
      flow((v) => (v.modules[3].id = "a")),
      "value.modules[3].id",
      /Step a: another step already has the id a \(value\.modules\[0\]\)/,
    );
    await refused(
      flow((v) => (v.modules[2].value.branches[1].modules[0].id = "c")),
      "value.modules[2].value.branches[1].modules[0].id",
      /Step c: another step already has the id c \(value\.modules\[1\]\.value\.modules\[0\]\)/,
    );
    await refused(
      flow((v) => (v.failure_module.id = "k")),
      "value.failure_module.id",
      /Step k: another step already has the id k/,
    );
  });

  it("refuses a results reference to a later step, naming the step and the input", async () => {
    await refused(
      flow((v) => (v.modules[0].value.input_transforms.since.expr = "results.b[0]")),
      "value.modules[0].value.input_transforms.since.expr",
      /^value\.modules\[0\]\.value\.input_transforms\.since\.expr: Step a: its input since refers to results\.b, a step that does not run before it\.$/,
    );
  });

  it("refuses a reference to a step the flow does not have, or to the step itself", async () => {
    await refused(
      flow((v) => (v.modules[4].value.input_transforms.n.expr = "results['nope'].x")),
      "value.modules[4].value.input_transforms.n.expr",
      /Step l: its input n refers to results\.nope, a step the flow does not have/,
    );
    await refused(
      flow((v) => (v.modules[4].skip_if = { expr: "results.l === 1" })),
      "value.modules[4].skip_if.expr",
      /Step l: its skip_if expression refers to results\.l, the step itself/,
    );
  });

  it("hides a loop's or branch's inner steps from what follows it, and one branch from another", async () => {
    await refused(
      flow((v) => (v.modules[2].value.branches[1].modules[0].value.input_transforms.n.expr = "results.c")),
      "value.modules[2].value.branches[1].modules[0].value.input_transforms.n.expr",
      /Step i: its input n refers to results\.c, a step that does not run before it/,
    );
    await refused(
      flow((v) => (v.modules[2].value.branches[1].modules[0].value.input_transforms.n.expr = "results.h")),
      "value.modules[2].value.branches[1].modules[0].value.input_transforms.n.expr",
      /Step i: its input n refers to results\.h/,
    );
    await refused(
      flow((v) => (v.modules[1].value.iterator.expr = "results.c")),
      "value.modules[1].value.iterator.expr",
      /Step b: its iterator refers to results\.c/,
    );
    await refused(
      flow((v) => (v.modules[1].value.modules[1].value.branches[0].expr = "results.e")),
      "value.modules[1].value.modules[1].value.branches[0].expr",
      /Step d: its branch 0 condition refers to results\.e/,
    );
  });

  it("lets the failure module and stop_after_if read what they may", async () => {
    await validateFlow(
      flow((v) => {
        v.failure_module.value.input_transforms.inner = {
          type: "javascript",
          expr: "[results.c, results.e, results.h]",
        };
        v.modules[0].stop_after_if = { expr: "results.a.length === 0" };
      }),
      exists,
    );
  });

  it("refuses an expression that does not compile, naming the step and the field", async () => {
    await refused(
      flow((v) => (v.modules[1].value.modules[0].skip_if.expr = "flow_input.dry_run &&")),
      "value.modules[1].value.modules[0].skip_if.expr",
      /Step c: its skip_if expression does not compile: SyntaxError/,
    );
    await refused(
      flow((v) => (v.modules[3].value.modules[0].stop_after_if.expr = "result >=> 3")),
      "value.modules[3].value.modules[0].stop_after_if.expr",
      /Step k: its stop_after_if expression does not compile/,
    );
    await refused(
      flow((v) => (v.skip_expr = "flow_input.(")),
      "value.skip_expr",
      /^value\.skip_expr: The flow's skip expression does not compile/,
    );
  });

  it("accepts statements and a function body as an expression", async () => {
    await validateFlow(
      flow((v) => {
        v.modules[0].value.input_transforms.since.expr = "const d = flow_input.since;\nd";
        v.modules[4].value.input_transforms.n.expr = "if (results.j > 2) return 2;\nreturn results.j;";
      }),
    );
  });

  it("deploys a flow calling a hub script or a script or flow not deployed, with a warning each", async () => {
    // Windmill deploys such a flow and fails the step when it runs: so does Millrace.
    const { warnings } = await checkOpenFlow(
      flow((v) => {
        v.modules[1].value.modules[0].value.path = "f/customers/missing";
        v.modules[1].value.modules[1].value.branches[0].modules[0].value.path = "f/x/y";
        v.modules[0].value = { type: "script", path: "hub/123/slack/send", input_transforms: {} };
      }),
      exists,
    );
    assert.deepEqual(
      warnings.map((w) => w.field),
      [
        "value.modules[0].value.path",
        "value.modules[1].value.modules[0].value.path",
        "value.modules[1].value.modules[1].value.branches[0].modules[0].value.path",
      ],
    );
    assert.match(warnings[0]!.message, /hub scripts need the hub; this instance has none/);
    assert.match(warnings[1]!.message, /Step c: the script f\/customers\/missing does not exist/);
    assert.match(warnings[2]!.message, /Step e: the flow f\/x\/y does not exist/);
  });

  it("reads Windmill's loose shapes: parallelism as a number, no input_transforms, no id, windmill@1-1 expressions", async () => {
    const input = {
      summary: "loose",
      value: {
        modules: [
          {
            value: {
              type: "rawscript",
              language: "bash",
              content: "echo",
              input_transforms: {
                n: {
                  type: "javascript",
                  expr: "import { previous_result, flow_input } from 'windmill@1-1'\n\nflow_input.n",
                },
              },
            },
          },
          {
            id: "a",
            value: {
              type: "forloopflow",
              iterator: { type: "javascript", expr: "[1]" },
              skip_failures: false,
              parallel: true,
              parallelism: 4,
              modules: [{ id: "c", value: { type: "script", path: "f/customers/enrich" } }],
            },
          },
        ],
      },
    };
    const before = structuredClone(input);
    const checked = await validateFlow(input, exists);
    // The sender's document is left as it was (it is what a deploy stores).
    assert.deepEqual(input, before);
    const [first, loop] = checked.value.modules;
    assert.equal(first!.id, "b");
    assert.deepEqual(first!.value.type === "rawscript" && first!.value.input_transforms.n, {
      type: "javascript",
      expr: "flow_input.n",
    });
    assert.deepEqual(loop!.value.type === "forloopflow" && loop!.value.parallelism, {
      type: "static",
      value: 4,
    });
    const inner = loop!.value.type === "forloopflow" ? loop!.value.modules[0]! : null;
    assert.deepEqual(inner?.value.type === "script" && inner.value.input_transforms, {});
    assert.equal(modernExpression("flow_input.x"), "flow_input.x");
  });

  it("refuses a failure module that is not a script", async () => {
    await refused(
      flow((v) => (v.failure_module.value = { type: "identity" })),
      "value.failure_module.value.type",
      /Step failure: the failure_module must be a script/,
    );
  });
});

describe("resultReferences", () => {
  it("finds dotted, optional and bracketed reads", () => {
    assert.deepEqual(resultReferences("results.a.x + results?.b + results['c'] + results?.['d']"), {
      steps: ["a", "b", "c", "d"],
      dynamic: false,
    });
  });

  it("skips strings, comments, templates' text and other objects' results", () => {
    const expr =
      "'results.a' + \"results.b\" // results.c\n + /* results.d */ `results.e ${results.f}` + x.results.g + ({ results: 1 })";
    assert.deepEqual(resultReferences(expr), { steps: ["f"], dynamic: false });
  });

  it("marks reads it cannot pin to a step as dynamic", () => {
    assert.equal(resultReferences("results[flow_input.step]").dynamic, true);
    assert.equal(resultReferences("Object.keys(results)").dynamic, true);
    assert.equal(resultReferences("flow_input.x ? results : 1").dynamic, true);
    assert.equal(resultReferences("flow_input.a / 2 / 3").dynamic, false);
  });
});
