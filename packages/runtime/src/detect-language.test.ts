import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { detectLanguageFamily, languageMismatch } from "./detect-language.ts";

const PYTHON = 'import os\n\ndef main(x: int = 2):\n    return {"twice": x * 2}\n';
const TYPESCRIPT =
  'import * as wmill from "windmill-client";\n\nexport async function main(name: string) {\n  console.log(name);\n  return { name };\n}\n';
const BASH = '#!/bin/bash\nname="$1"\nif [ -z "$name" ]; then\n  exit 1\nfi\necho "hello $name"\n';
const SQL = "-- $1 name (text) = world\nSELECT 'Hello ' || $1 AS greeting;\n";

describe("detectLanguageFamily", () => {
  it("recognises each family", () => {
    assert.equal(detectLanguageFamily(PYTHON), "python");
    assert.equal(detectLanguageFamily(TYPESCRIPT), "typescript");
    assert.equal(detectLanguageFamily(BASH), "bash");
    assert.equal(detectLanguageFamily(SQL), "sql");
    assert.equal(detectLanguageFamily('name="$1"\n\necho "Hello $name"\n'), "bash");
  });

  it("says nothing about code too short to tell", () => {
    assert.equal(detectLanguageFamily(""), null);
    assert.equal(detectLanguageFamily("x\n"), null);
  });
});

describe("languageMismatch", () => {
  it("names the family of code deployed under another language", () => {
    assert.equal(languageMismatch("bash", PYTHON), "python");
    assert.equal(languageMismatch("python3", TYPESCRIPT), "typescript");
    assert.equal(languageMismatch("bun", BASH), "bash");
    assert.equal(languageMismatch("deno", SQL), "sql");
  });

  it("accepts code in its own language, TypeScript under Bun or Deno alike", () => {
    assert.equal(languageMismatch("python3", PYTHON), null);
    assert.equal(languageMismatch("bun", TYPESCRIPT), null);
    assert.equal(languageMismatch("deno", TYPESCRIPT), null);
    assert.equal(languageMismatch("bash", BASH), null);
    assert.equal(languageMismatch("postgresql", SQL), null);
    assert.equal(languageMismatch("bash", "echo hello"), null);
  });
});
