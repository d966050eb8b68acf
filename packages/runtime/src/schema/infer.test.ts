import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_TAGS, LANGUAGES, defaultTagForLanguage, inferSchema, isLanguage } from "../index.ts";

test("languages and default tags", () => {
  assert.deepEqual(LANGUAGES, ["bash", "python3", "bun", "deno", "postgresql"]);
  assert.deepEqual(DEFAULT_TAGS, [
    "bash",
    "python3",
    "bun",
    "deno",
    "postgresql",
    "flow",
    "dependency",
    "other",
  ]);
  for (const language of LANGUAGES) {
    assert.ok(isLanguage(language));
    assert.ok(DEFAULT_TAGS.includes(defaultTagForLanguage(language)));
  }
  assert.equal(isLanguage("go"), false);
  assert.equal(isLanguage("toString"), false);
});

test("inferSchema dispatches on the language and returns a Windmill-shaped schema", () => {
  const sources = {
    bash: 'x="$1"\n',
    python3: "def main(x: str):\n    pass\n",
    bun: "export function main(x: string) {}\n",
    deno: "export function main(x: string) {}\n",
    postgresql: "-- $1 x (text)\nselect $1;\n",
  };
  const database = { type: "object", description: "", format: "resource-postgresql" };
  for (const language of LANGUAGES) {
    const sql = language === "postgresql";
    assert.deepEqual(inferSchema(language, sources[language]), {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: sql
        ? { database, x: { type: "string", description: "" } }
        : { x: { type: "string", description: "" } },
      required: sql ? ["database", "x"] : ["x"],
      order: sql ? ["database", "x"] : ["x"],
    });
  }
});
