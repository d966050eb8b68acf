import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "./errors.ts";
import { checkJsonInput, checkTextInput, MAX_JSON_DEPTH } from "./input.ts";

function refused(run: () => void, field: string, pattern: RegExp) {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, "INVALID_INPUT");
    assert.equal(error.field, field);
    assert.ok(error.message.startsWith(`${field}: `), error.message);
    assert.match(error.message, pattern);
    return true;
  });
}

/** `{"x": [[[…]]]}` with `levels` levels in all (the object counts as one). */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 1; i < levels; i++) value = [value];
  return { x: value };
}

describe("checkJsonInput", () => {
  it("accepts ordinary input, paired surrogates and nesting up to the limit", () => {
    checkJsonInput({ path: "u/a/b", value: "héllo 😀", n: 1, list: [true, null, { k: "v" }] });
    checkJsonInput(nested(MAX_JSON_DEPTH));
    checkJsonInput("plain", "args");
    checkJsonInput(null);
  });

  it("names the field holding a NUL character", () => {
    refused(() => checkJsonInput({ path: "u/a/b", value: "a\u0000b" }), "value", /NUL character/);
    refused(() => checkJsonInput({ name: "a\u0000" }, "args"), "args.name", /NUL/);
    refused(() => checkJsonInput({ list: ["ok", "b\u0000"] }, "args"), "args.list[1]", /NUL/);
    refused(() => checkJsonInput("\u0000"), "body", /NUL/);
  });

  it("names the object whose key holds a NUL character", () => {
    refused(
      () => checkJsonInput({ value: { "ho\u0000st": "x" } }),
      "value",
      /^value: key "ho\\u0000st" must not contain the NUL character/,
    );
  });

  it("refuses unpaired surrogates in values and keys", () => {
    refused(() => checkJsonInput({ s: "\ud800" }, "args"), "args.s", /unpaired surrogate/);
    refused(() => checkJsonInput({ s: "x\udc00" }, "args"), "args.s", /unpaired surrogate/);
    refused(
      () => checkJsonInput({ ["\ud83d"]: 1 }, "args"),
      "args",
      /key "\\ud83d" must not contain an unpaired/,
    );
  });

  it("refuses input nested deeper than the limit, naming its top-level field", () => {
    refused(() => checkJsonInput(nested(MAX_JSON_DEPTH + 1)), "x", /nested more than 100 levels/);
    refused(() => checkJsonInput(nested(5000), "args"), "args.x", /nested more than 100 levels/);
  });
});

describe("checkTextInput", () => {
  it("refuses NUL and unpaired surrogates, naming the field", () => {
    checkTextInput("workspace", "demo");
    refused(() => checkTextInput("workspace", "de\u0000mo"), "workspace", /NUL/);
    refused(() => checkTextInput("label", "\udfff"), "label", /unpaired surrogate/);
  });
});
