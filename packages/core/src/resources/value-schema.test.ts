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
