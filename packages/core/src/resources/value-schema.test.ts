import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkTimezone } from "../schedules/cron.ts";
import { checkResourceValue, checkTypeSchema } from "./value-schema.ts";

describe("what wmill sync push sends, kept as written", () => {
  it("keeps a resource type schema's $schema verbatim and still validates values with it", () => {
    for (const dialect of [
      "https://json-schema.org/draft/2020-12/schema",
      "http://json-schema.org/draft-07/schema#",
    ]) {
      const schema = {
        $schema: dialect,
        type: "object",
        properties: { url: { type: "string" } },
        required: ["url"],
      };
      assert.deepEqual(checkTypeSchema(schema), schema);
      checkResourceValue({ url: "https://a.example" }, schema, "acme_api");
      assert.throws(() => checkResourceValue({ url: 1 }, schema, "acme_api"), /url/);
    }
  });

  it("keeps a timezone alias as written and spells a canonical name canonically", () => {
    assert.equal(checkTimezone("Etc/UTC"), "Etc/UTC");
    assert.equal(checkTimezone("UTC"), "UTC");
    assert.equal(checkTimezone("europe/paris"), "Europe/Paris");
    assert.equal(checkTimezone(undefined), "UTC");
    assert.throws(() => checkTimezone("Mars/Olympus_Mons"), /IANA/);
  });
});

describe("user patterns", () => {
  const schema = { type: "object", properties: { a: { type: "string", pattern: "(a+)+$" } } };

  it("validates a backtracking pattern in linear time", () => {
    checkTypeSchema(schema);
    const started = performance.now();
    assert.throws(
      () => checkResourceValue({ a: `${"a".repeat(40_000)}!` }, schema, "bre"),
      /value\.a: must match pattern/,
    );
    checkResourceValue({ a: "aaa" }, schema, "bre");
    // V8's backtracking engine takes minutes on 40 a's; RE2 a few milliseconds on 40,000.
    assert.ok(performance.now() - started < 2000, `${performance.now() - started} ms`);
  });

  it("checks patternProperties with the same engine", () => {
    const keyed = { type: "object", patternProperties: { "^(x+)+$": { type: "integer" } } };
    checkTypeSchema(keyed);
    assert.throws(() => checkResourceValue({ xxx: "no" }, keyed, "keyed"), /value\.xxx: must be integer/);
    checkResourceValue({ [`${"x".repeat(30_000)}!`]: "fine" }, keyed, "keyed");
  });

  it("refuses a pattern the linear-time engine cannot run, naming where it is", () => {
    const lookahead = { type: "object", properties: { p: { type: "string", pattern: "^(?=.*\\d).{8,}$" } } };
    assert.throws(
      () => checkTypeSchema(lookahead),
      (error: Error & { field?: string }) =>
        error.field === "schema.properties.p.pattern" && /lookaround/.test(error.message),
    );
    assert.throws(
      () => checkResourceValue({ p: "x" }, lookahead, "legacy"),
      (error: Error & { field?: string }) => error.field === "resource_type",
    );
  });
});
