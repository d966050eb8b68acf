import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "../errors.ts";
import { parseOpenFlow, type OpenFlow } from "./format.ts";
import { sampleFlow } from "./sample-flow.ts";

function refused(run: () => unknown, field: string, pattern: RegExp) {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, "INVALID_INPUT");
    assert.equal(error.field, field);
    assert.match(error.message, pattern);
    return true;
  });
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe("parseOpenFlow", () => {
  it("parses a realistic flow with every step kind and keeps fields it does not know", () => {
    const flow: OpenFlow = parseOpenFlow(sampleFlow());
    assert.equal(flow.summary, "Sync customers");
    assert.deepEqual(
      flow.value.modules.map((m) => m.value.type),
      ["rawscript", "forloopflow", "branchall", "whileloopflow", "rawscript"],
    );
    const first = flow.value.modules[0]!.value as Json;
    assert.deepEqual(first.assets, [], "unknown fields pass through");
    assert.equal(flow.value.failure_module?.id, "failure");
  });

  it("refuses an unknown step kind, naming the step and the field", () => {
    const input = sampleFlow() as Json;
    input.value.modules[1].value.modules[1].value.type = "goto";
    refused(
      () => parseOpenFlow(input),
      "value.modules[1].value.modules[1].value.type",
      /Step d: the step kind "goto" is not known/,
    );
  });

  it("refuses Windmill's AI agent step as not supported", () => {
    const input = sampleFlow() as Json;
    input.value.modules[0].value = { type: "aiagent", input_transforms: {}, tools: [] };
    refused(
      () => parseOpenFlow(input),
      "value.modules[0].value.type",
      /Step a: .*"aiagent" is not supported/,
    );
  });

  it("refuses missing required fields", () => {
    const noPath = sampleFlow() as Json;
    delete noPath.value.modules[1].value.modules[0].value.path;
    refused(
      () => parseOpenFlow(noPath),
      "value.modules[1].value.modules[0].value.path",
      /Step c: path is required/,
    );

    const noIterator = sampleFlow() as Json;
    delete noIterator.value.modules[1].value.iterator;
    refused(
      () => parseOpenFlow(noIterator),
      "value.modules[1].value.iterator",
      /Step b: iterator is required/,
    );

    const noExpr = sampleFlow() as Json;
    delete noExpr.value.modules[2].value.branches;
    refused(() => parseOpenFlow(noExpr), "value.modules[2].value.branches", /Step g: branches is required/);

    const noSummary = sampleFlow();
    delete noSummary.summary;
    refused(() => parseOpenFlow(noSummary), "summary", /^summary: Summary is required/);

    const noId = sampleFlow() as Json;
    delete noId.value.modules[0].id;
    refused(() => parseOpenFlow(noId), "value.modules[0].id", /the step has no id/i);
  });

  it("refuses a transform of unknown type, a language Millrace does not run and a bad step id", () => {
    const transform = sampleFlow() as Json;
    transform.value.modules[0].value.input_transforms.since = { type: "template", value: "x" };
    refused(
      () => parseOpenFlow(transform),
      "value.modules[0].value.input_transforms.since.type",
      /Step a: the transform type "template" is not known/,
    );

    const language = sampleFlow() as Json;
    language.value.modules[0].value.language = "nativets";
    refused(
      () => parseOpenFlow(language),
      "value.modules[0].value.language",
      /Step a: the language is not one Millrace runs/,
    );

    const id = sampleFlow() as Json;
    id.value.modules[0].id = "a b";
    refused(() => parseOpenFlow(id), "value.modules[0].id", /letters, digits/);

    refused(
      () => parseOpenFlow({ summary: "x", value: { modules: {} } }),
      "value.modules",
      /expected array/i,
    );
    refused(() => parseOpenFlow(null), "flow", /expected object/i);
  });
});
