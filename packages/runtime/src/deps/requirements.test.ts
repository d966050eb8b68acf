import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { scratchDir } from "../exec/testing.ts";
import { cacheDir, publish, tempDir } from "./cache.ts";
import {
  hasRequirements,
  npmRequirements,
  pythonRequirements,
  RequirementsError,
  scriptRequirements,
} from "./requirements.ts";

describe("python requirements", () => {
  it("takes the comment lines after # requirements:, up to the first other line", () => {
    const content =
      "import os\n# requirements:\n#requests==2.31.0\n#  numpy \n#\n# pandas[excel]>=2,<3 ; python_version >= '3.8'\n\n#later\n";
    assert.deepEqual(pythonRequirements(content), [
      "requests==2.31.0",
      "numpy",
      "pandas[excel]>=2,<3 ; python_version >= '3.8'",
    ]);
  });

  it("refuses pip options and direct references (they would steer the worker's pip)", () => {
    for (const line of ["--index-url http://evil/simple", "-r /etc/passwd", "pkg @ file:///etc", "-e ."]) {
      assert.throws(() => pythonRequirements(`# requirements:\n#${line}\n`), RequirementsError, line);
    }
  });

  it("has none without a block", () => {
    assert.equal(scriptRequirements("python3", "def main():\n    return 1\n"), null);
    assert.equal(hasRequirements("python3", "# requirements:\n#x==1\ndef main(): pass\n"), true);
    assert.equal(hasRequirements("bash", 'import x from "pkg"'), false);
  });
});

describe("npm requirements", () => {
  it("finds bare imports (static, dynamic, re-exports, require) with optional versions", () => {
    const content = [
      'import a from "lodash";',
      'import { b } from "@scope/pkg@^2.1/sub/path";',
      'import type { T } from "zod@3.23.8";',
      'export * from "is-odd@3";',
      'const c = await import("left-pad");',
      'const d = require("ms");',
      'import fs from "node:fs";',
      'import path from "path";',
      'import { $ } from "bun";',
      'import local from "./local.ts";',
      'import remote from "https://deno.land/x/mod.ts";',
      'import npm from "npm:chalk@5";',
      'import * as wmill from "windmill-client";',
      '// import nope from "commented-out";',
      'const s = "import nope2 from \\"in-a-string\\"";',
    ].join("\n");
    assert.deepEqual(
      npmRequirements(content).map((r) => [r.alias, r.name, r.version]),
      [
        ["@scope/pkg@^2.1", "@scope/pkg", "^2.1"],
        ["is-odd@3", "is-odd", "3"],
        ["left-pad", "left-pad", "latest"],
        ["lodash", "lodash", "latest"],
        ["ms", "ms", "latest"],
        ["zod@3.23.8", "zod", "3.23.8"],
      ],
    );
  });

  it("refuses what is not an npm package name", () => {
    assert.throws(() => npmRequirements('import x from "Bad_Name";'), RequirementsError);
  });
});

describe("cache folders", () => {
  it("publishes a finished install atomically; a second install of the same lock is dropped", () => {
    const root = scratchDir();
    const final = cacheDir(root, "python3", "abc");
    const first = tempDir(root, "python3");
    const second = tempDir(root, "python3");
    writeFileSync(path.join(first, "marker"), "first");
    writeFileSync(path.join(second, "marker"), "second");
    publish(first, final);
    publish(second, final);
    assert.deepEqual(readdirSync(path.join(root, "python3")), ["abc"]);
    assert.deepEqual(readdirSync(final), ["marker"]);
    assert.ok(!existsSync(second));
    mkdirSync(path.join(root, "python3", "def"));
    const third = tempDir(root, "python3");
    publish(third, path.join(root, "python3", "def"));
    assert.ok(!existsSync(third));
  });
});
