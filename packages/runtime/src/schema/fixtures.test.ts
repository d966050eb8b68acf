import assert from "node:assert/strict";
import { test } from "node:test";
import { inferSchema } from "../index.ts";
import { bashCases } from "./fixtures/bash.ts";
import { postgresqlCases } from "./fixtures/postgresql.ts";
import { pythonCases } from "./fixtures/python.ts";
import { denoCases, typescriptCases } from "./fixtures/typescript.ts";
import { normalize } from "./testing.ts";
import type { Language } from "../languages.ts";
import type { SchemaCase } from "./testing.ts";

const suites: [Language, SchemaCase[]][] = [
  ["python3", pythonCases],
  ["bun", typescriptCases],
  ["deno", [...typescriptCases, ...denoCases]],
  ["bash", bashCases],
  ["postgresql", postgresqlCases],
];

for (const [language, cases] of suites) {
  test(`${language}: at least 30 real-world signatures, with distinct names`, () => {
    assert.ok(cases.length >= 30, `${cases.length} cases`);
    assert.equal(new Set(cases.map((c) => c.name)).size, cases.length);
  });
  for (const { name, source, expected } of cases) {
    test(`${language} signature: ${name}`, () => {
      assert.deepEqual(normalize(inferSchema(language, source)), normalize(expected));
    });
  }
}
