import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { scratchDir } from "../exec/testing.ts";
import { cacheDir, publish, tempDir } from "./cache.ts";
import { packageOfImport, pythonImports } from "./python-imports.ts";
import {
  hasRequirements,
  importsBundledClient,
  npmRequirements,
  npmSchemeImports,
  pythonRequirements,
  RequirementsError,
  satisfiesRange,
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

describe("python requirements inferred from imports (no # requirements: block)", () => {
  it("maps third-party imports to their packages, leaving out the stdlib, wmill, workspace scripts and relative imports", () => {
    const content = [
      "import os, sys as system",
      "import json",
      "from __future__ import annotations",
      "import wmill",
      "from f.folder.helper import util",
      "from u.someone.other import thing",
      "from . import sibling",
      "from .local import x",
      "import yaml",
      "from PIL import Image",
      "from sklearn.linear_model import LinearRegression",
      "from bs4 import BeautifulSoup",
      "from dateutil import parser",
      "import psycopg2.extras",
      "import requests; import pandas as pd",
      "from google.cloud import bigquery",
      "import google.cloud.storage",
      "from azure.storage.blob import BlobServiceClient",
      "from mysql.connector import connect",
      "import numpy as np  # pin: numpy==1.26.4",
      "import cv2",
      "import slack_sdk",
      "",
      "def main():",
      "    import boto3",
      "    try:",
      "        import ujson as fastjson",
      "    except ImportError:",
      "        pass",
      '    text = """',
      "import not_an_import",
      '"""',
      "    other = 'import nope'  # import nope2",
      "    from typing import (",
      "        Any,",
      "    )",
      "    return 1",
    ].join("\n");
    assert.deepEqual(pythonRequirements(content), [
      "pyyaml",
      "pillow",
      "scikit-learn",
      "beautifulsoup4",
      "python-dateutil",
      "psycopg2-binary",
      "requests",
      "pandas",
      "google-cloud-bigquery",
      "google-cloud-storage",
      "azure-storage-blob",
      "mysql-connector-python",
      "numpy==1.26.4",
      "opencv-python",
      "slack_sdk",
      "boto3",
      "ujson",
    ]);
  });

  it("a # requirements: block wins: nothing is inferred, even when it is empty", () => {
    assert.deepEqual(
      pythonRequirements("# requirements:\n#requests==2.31.0\nimport yaml\nimport requests\n"),
      ["requests==2.31.0"],
    );
    assert.deepEqual(pythonRequirements("# requirements:\n\nimport yaml\n"), []);
    assert.equal(scriptRequirements("python3", "# requirements:\nimport yaml\ndef main(): pass\n"), null);
  });

  it("adds an # extra_requirements: block to what is inferred", () => {
    assert.deepEqual(
      pythonRequirements("# extra_requirements:\n#httpx[http2]>=0.27\nimport yaml\ndef main(): pass\n"),
      ["pyyaml", "httpx[http2]>=0.27"],
    );
  });

  it("a script with only stdlib and wmill imports has no requirements (no dependency job)", () => {
    const content =
      "import wmill\nimport json, re\nfrom datetime import datetime\ndef main():\n    return 1\n";
    assert.equal(scriptRequirements("python3", content), null);
    assert.equal(hasRequirements("python3", content), false);
    assert.deepEqual(scriptRequirements("python3", "import yaml\ndef main(): pass\n"), {
      language: "python3",
      packages: ["pyyaml"],
    });
  });

  it("a # pin: that is not a plain requirement is refused as a block's line would be", () => {
    assert.throws(
      () => pythonRequirements("import x  # pin: --index-url http://evil/simple\n"),
      RequirementsError,
    );
  });

  it("reads imports across continuation lines and ignores strings", () => {
    assert.deepEqual(
      pythonImports('import a, \\\n    b.c\nx = "import d"\nfrom e.f import (g,\n h)\n').map((i) => i.module),
      ["a", "b.c", "e.f"],
    );
    assert.equal(packageOfImport("_thread"), null);
    assert.equal(packageOfImport("tomllib"), null);
    assert.equal(packageOfImport("jwt"), "pyjwt");
    assert.equal(packageOfImport("google.protobuf.json_format"), "protobuf");
  });
});

describe("windmill-client bundled for deno", () => {
  it("knows the imports the bundled copy answers", () => {
    assert.equal(importsBundledClient('import * as wmill from "npm:windmill-client";', "1.818.0"), true);
    assert.equal(importsBundledClient('import * as wmill from "windmill-client";', "1.818.0"), true);
    assert.equal(importsBundledClient('import { x } from "npm:windmill-client@^1.800";', "1.818.0"), true);
    assert.equal(importsBundledClient('import { x } from "npm:windmill-client@1.818.0";', "1.818.0"), true);
    assert.equal(importsBundledClient('import { x } from "npm:windmill-client@1.500.0";', "1.818.0"), false);
    assert.equal(importsBundledClient('import { x } from "npm:windmill-client@^2";', "1.818.0"), false);
    assert.equal(importsBundledClient('import { x } from "windmill-client@1.818.0";', "1.818.0"), false);
    assert.equal(importsBundledClient('import x from "npm:lodash";', "1.818.0"), false);
    assert.deepEqual(
      npmSchemeImports('import a from "npm:lodash@4/fp";\nimport b from "npm:@scope/p@1";\nimport "x";'),
      ["lodash", "@scope/p"],
    );
  });

  it("checks version ranges", () => {
    for (const [range, ok] of [
      ["", true],
      ["latest", true],
      ["1", true],
      ["1.x", true],
      ["1.818", true],
      ["^1.700.2", true],
      ["~1.818.0", true],
      [">=1.0.0", true],
      ["1.817.0", false],
      ["^1.819.0", false],
      ["~1.817.0", false],
      ["2", false],
      ["<2", false],
    ] as const) {
      assert.equal(satisfiesRange("1.818.0", range), ok, range);
    }
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
