import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_TAGS } from "@millrace/runtime";
import { AppError } from "../errors.ts";
import {
  availableTags,
  formatCustomTag,
  isTagAllowed,
  parseCustomTags,
  type CustomTag,
} from "./custom-tags.ts";

function fails(list: unknown, field: string, pattern: RegExp): void {
  assert.throws(
    () => parseCustomTags(list),
    (error: unknown) => {
      assert.ok(error instanceof AppError, String(error));
      assert.equal(error.code, "INVALID_INPUT");
      assert.equal(error.field, field, error.message);
      assert.match(error.message, pattern);
      assert.ok(error.message.startsWith(`${field}: `), error.message);
      return true;
    },
  );
}

describe("parseCustomTags", () => {
  const valid: [string, CustomTag][] = [
    ["gpu", { tag: "gpu", scope: "all", workspaces: [] }],
    ["gpu(ws1+ws2)", { tag: "gpu", scope: "only", workspaces: ["ws1", "ws2"] }],
    ["gpu(ws1)", { tag: "gpu", scope: "only", workspaces: ["ws1"] }],
    ["gpu(^ws3)", { tag: "gpu", scope: "except", workspaces: ["ws3"] }],
    ["big-mem.v2(^a+b_c+d-1)", { tag: "big-mem.v2", scope: "except", workspaces: ["a", "b_c", "d-1"] }],
    ["normal-$workspace", { tag: "normal-$workspace", scope: "all", workspaces: [] }],
    ["by-$args[region](prod)", { tag: "by-$args[region]", scope: "only", workspaces: ["prod"] }],
  ];
  for (const [source, expected] of valid) {
    it(`parses ${source}`, () => {
      const [parsed] = parseCustomTags([source]);
      assert.deepEqual(parsed, expected);
      assert.equal(formatCustomTag(parsed!), source, "formatting gives back the source");
    });
  }

  it("parses an empty list", () => assert.deepEqual(parseCustomTags([]), []));

  const invalid: [unknown[], string, RegExp][] = [
    [["gpu("], "value[0]", /"gpu\(": missing "\)"/],
    [["ok", "gpu(ws1+)"], "value[1]", /empty workspace id at position 8/],
    [["gpu(+ws1)"], "value[0]", /empty workspace id at position 4/],
    [["g pu"], "value[0]", /unexpected space at position 1/],
    [[""], "value[0]", /empty tag/],
    [["gpu()"], "value[0]", /empty workspace list/],
    [["gpu(^)"], "value[0]", /empty workspace list/],
    [["(ws1)"], "value[0]", /missing the tag name/],
    [["gpu(ws1)x"], "value[0]", /unexpected text after "\)" at position 8/],
    [["gpu(WS1)"], "value[0]", /"WS1" at position 4 is not a workspace id/],
    [["gpu(ws 1)"], "value[0]", /"ws 1" at position 4 is not a workspace id/],
    [["gpu(ws1+ws1)"], "value[0]", /ws1 is listed twice/],
    [["gp$u"], "value[0]", /not a valid tag/],
    [["a", "b", "gpu", "gpu(ws1)"], "value[3]", /tag "gpu" is already declared by value\[2\]/],
    [["bash(ws1)"], "value[0]", /default tag and cannot be restricted/],
    [[42], "value[0]", /must be a string/],
    [["x".repeat(129)], "value[0]", /not a valid tag/],
  ];
  for (const [list, field, pattern] of invalid) {
    it(`refuses ${JSON.stringify(list)} naming ${field}`, () => fails(list, field, pattern));
  }

  it("refuses a value that is not a list", () => {
    fails("gpu", "value", /must be a list/);
    fails({ gpu: true }, "value", /must be a list/);
  });
});

describe("isTagAllowed / availableTags", () => {
  const tags = parseCustomTags(["gpu(ws1+ws2)", "cpu(^ws3)", "shared"]);

  it("applies the three syntaxes", () => {
    assert.ok(isTagAllowed(tags, "ws1", "gpu"));
    assert.ok(!isTagAllowed(tags, "ws3", "gpu"));
    assert.ok(isTagAllowed(tags, "ws1", "cpu"));
    assert.ok(!isTagAllowed(tags, "ws3", "cpu"));
    assert.ok(isTagAllowed(tags, "ws3", "shared"));
  });

  it("allows default and undeclared tags everywhere", () => {
    assert.ok(isTagAllowed(tags, "ws3", "bash"));
    assert.ok(isTagAllowed(tags, "ws3", "something-else"));
  });

  it("lists default tags then the custom tags a workspace may use", () => {
    assert.deepEqual(availableTags(tags, "ws3"), [...DEFAULT_TAGS, "shared"]);
    assert.deepEqual(availableTags(tags, "ws1"), [...DEFAULT_TAGS, "gpu", "cpu", "shared"]);
    assert.deepEqual(availableTags(tags, null), [...DEFAULT_TAGS, "gpu", "cpu", "shared"]);
  });
});
