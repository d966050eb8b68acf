import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { run, scratchDir } from "../exec/testing.ts";
import { lockHash } from "./cache.ts";
import { ensureInstalled, parseNpmLock, resolveDependencies, type InstallOptions } from "./install.ts";
import { npmRequirements, pythonRequirements } from "./requirements.ts";
import { buildWheel, serveIndex } from "./testing.ts";

const root = scratchDir();
const wheels = path.join(root, "wheels");
mkdirSync(wheels);
buildWheel(
  wheels,
  "millrace-greet",
  "1.0.0",
  "millrace_greet",
  'def greet(name):\n    return "hello " + name\n',
);
buildWheel(
  wheels,
  "millrace-greet",
  "2.0.0",
  "millrace_greet",
  'def greet(name):\n    return "HELLO " + name\n',
);

function options(cacheRoot: string, env: Record<string, string>, logs: string[] = []): InstallOptions {
  return { cacheRoot, env, onLog: (chunk) => logs.push(chunk), timeoutMs: 120_000 };
}

describe("python3 dependencies (pip, local index)", () => {
  let index: Awaited<ReturnType<typeof serveIndex>>;
  before(async () => {
    index = await serveIndex(wheels);
  });
  after(() => index.close());

  it("resolves a requirement from PIP_INDEX_URL into the cache, pinned by pip freeze", async () => {
    const cacheRoot = path.join(root, "cache-index");
    const logs: string[] = [];
    const { lock, installed } = await resolveDependencies(
      { language: "python3", packages: ["millrace-greet<2"] },
      options(cacheRoot, { PIP_INDEX_URL: index.url }, logs),
    );
    assert.equal(lock, "millrace-greet==1.0.0");
    assert.ok(index.requests() > 0, "pip asked the local index");
    assert.match(logs.join(""), /Successfully installed millrace-greet-1.0.0/);
    assert.equal(installed.dir, path.join(cacheRoot, "python3", lockHash("python3", lock)));
    assert.deepEqual(installed.readOnlyPaths, [installed.dir]);
    // A job importing it through the environment prepareDependencies hands to executeJob.
    const job = await run(root, {
      language: "python3",
      content: "import millrace_greet\ndef main(name: str):\n    return millrace_greet.greet(name)\n",
      args: { name: "pip" },
      argOrder: ["name"],
      env: installed.env,
      readOnlyPaths: installed.readOnlyPaths,
    });
    assert.deepEqual(job.outcome, { status: "success", result: "hello pip" });
  });

  it("installs a lock on a machine without it, with --find-links, once for concurrent jobs", async () => {
    const cacheRoot = path.join(root, "cache-links");
    const lock = "millrace-greet==2.0.0";
    const env = {
      PIP_INDEX_URL: "http://127.0.0.1:9/unreachable",
      PIP_FIND_LINKS: wheels,
      PIP_NO_INDEX: "1",
    };
    const [a, b] = await Promise.all([
      ensureInstalled("python3", lock, options(cacheRoot, env)),
      ensureInstalled("python3", lock, options(cacheRoot, env)),
    ]);
    assert.equal(a.dir, b.dir);
    // Only the published folder is left: no temp folder of a losing install.
    assert.deepEqual(
      readdirSync(path.join(cacheRoot, "python3")).filter((name) => name !== ".pip-cache"),
      [lockHash("python3", lock)],
    );
    const again = await ensureInstalled(
      "python3",
      lock,
      options(cacheRoot, { PIP_INDEX_URL: "http://127.0.0.1:9/x" }),
    );
    assert.equal(again.dir, a.dir, "a cached lock needs no index");
    const job = await run(root, {
      language: "python3",
      content: "import millrace_greet\ndef main():\n    return millrace_greet.greet('lock')\n",
      env: a.env,
      readOnlyPaths: a.readOnlyPaths,
    });
    assert.deepEqual(job.outcome, { status: "success", result: "HELLO lock" });
  });

  it("fails with pip's reason when a requirement does not exist, leaving no cache folder", async () => {
    const cacheRoot = path.join(root, "cache-missing");
    await assert.rejects(
      resolveDependencies(
        { language: "python3", packages: ["millrace-nonexistent==9.9"] },
        options(cacheRoot, { PIP_INDEX_URL: index.url }),
      ),
      (error: Error) => {
        assert.equal(error.name, "DependencyInstallError");
        assert.match(error.message, /pip install failed[\s\S]*millrace-nonexistent/);
        return true;
      },
    );
    assert.deepEqual(
      readdirSync(path.join(cacheRoot, "python3")).filter((name) => !name.startsWith(".pip")),
      [],
    );
  });

  it("refuses a lock line that is not name==version", async () => {
    await assert.rejects(
      ensureInstalled("python3", "--index-url http://evil/\nx==1", options(path.join(root, "cache-bad"), {})),
      /is not name==version/,
    );
  });
});

describe("npm dependencies (bun install from the registry)", () => {
  it("resolves bare imports, pinned by bun.lock, usable by bun and deno jobs", async () => {
    const cacheRoot = path.join(root, "cache-npm");
    const content =
      'import isOdd from "is-odd@3.0.1";\nimport isNumber from "is-number";\nexport function main(n: number) { return [isOdd(n), isNumber(n)]; }\n';
    const logs: string[] = [];
    const { lock, installed } = await resolveDependencies(
      { language: "bun", packages: npmRequirements(content) },
      options(cacheRoot, {}, logs),
    );
    const { packageJson, bunLock } = parseNpmLock(lock);
    assert.deepEqual(JSON.parse(packageJson).dependencies, {
      "is-number": "latest",
      "is-odd@3.0.1": "npm:is-odd@3.0.1",
    });
    assert.match(bunLock, /"is-odd@3.0.1": \["is-odd@3.0.1"/);
    assert.ok(existsSync(path.join(installed.nodeModulesDir!, "is-odd@3.0.1", "package.json")));
    for (const language of ["bun", "deno"] as const) {
      const job = await run(root, {
        language,
        content,
        args: { n: 3 },
        argOrder: ["n"],
        env: installed.env,
        readOnlyPaths: installed.readOnlyPaths,
        nodeModulesDir: installed.nodeModulesDir,
      });
      assert.deepEqual(job.outcome, { status: "success", result: [true, true] }, `${language}: ${job.logs}`);
    }
    // Another machine: the same lock, installed frozen into an empty cache, lands in the same folder name.
    const otherRoot = path.join(root, "cache-npm-other");
    const other = await ensureInstalled("bun", lock, options(otherRoot, {}));
    assert.equal(path.basename(other.dir), path.basename(installed.dir));
    assert.ok(existsSync(path.join(other.nodeModulesDir!, "is-number", "package.json")));
  });
});

describe("requirements", () => {
  it("reads Windmill's # requirements: block", () => {
    const content =
      "# requirements:\n#requests==2.31.0\n# pandas[excel] >=2, <3\n#\n#numpy\nimport os\n#not-this\n";
    assert.deepEqual(pythonRequirements(content), ["requests==2.31.0", "pandas[excel] >=2, <3", "numpy"]);
    assert.deepEqual(pythonRequirements("import os\ndef main(): pass\n"), []);
  });
});
