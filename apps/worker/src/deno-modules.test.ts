// deno jobs find windmill-client in their node_modules, beside the packages of their lock: a
// real deno process imports `npm:windmill-client` and a package of a (hand-made) lock that
// itself requires a sibling package, with no registry (DENO_DIR empty, nothing downloaded).
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { run, scratchDir } from "../../../packages/runtime/src/exec/testing.ts";
import { denoModules } from "./job-callback.ts";

function writePackage(nodeModules: string, name: string, main: string): void {
  const dir = path.join(nodeModules, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", main: "index.js" }));
  writeFileSync(path.join(dir, "index.js"), main);
}

describe("deno jobs and the bundled windmill-client", () => {
  it("links the lock's packages and windmill-client into one node_modules, made once", async () => {
    const root = scratchDir();
    chmodSync(root, 0o755);
    const installed = path.join(root, "lock", "node_modules");
    writePackage(
      installed,
      "shout",
      'const exclaim = require("exclaim");\nmodule.exports = (s) => exclaim(s.toUpperCase());\n',
    );
    writePackage(installed, "exclaim", 'module.exports = (s) => s + "!";\n');
    const content = `import * as wmill from "npm:windmill-client@^1";
import shout from "shout";

export function main() {
  return { shout: shout("hi"), workspace: wmill.default.getWorkspace(), version: wmill.OpenAPI.VERSION };
}
`;
    const cache = path.join(root, "cache");
    const modules = denoModules(cache, content, installed);
    assert.ok(modules, "the script imports windmill-client");
    assert.deepEqual(readdirSync(modules.nodeModulesDir).sort(), ["exclaim", "shout", "windmill-client"]);
    assert.deepEqual(denoModules(cache, content, installed), modules, "the same folder next time");
    assert.equal(readdirSync(path.join(cache, "clients")).length, 1, "no temp folder left");

    const job = await run(path.join(root, "jobs"), {
      language: "deno",
      content,
      env: { WM_WORKSPACE: "acme", DENO_DIR: path.join(root, "deno-dir") },
      nodeModulesDir: modules.nodeModulesDir,
      readOnlyPaths: modules.readOnlyPaths,
      timeoutMs: 60_000,
    });
    assert.deepEqual(
      job.outcome,
      {
        status: "success",
        result: { shout: "HI!", workspace: "acme", version: "1.818.0" },
      },
      job.logs,
    );
    assert.doesNotMatch(job.logs, /Download/);
    assert.ok(!existsSync(path.join(root, "deno-dir", "npm")), "nothing came from a registry");
  });

  it("without a lock, only windmill-client; nothing when the script does not need the bundle", () => {
    const cache = scratchDir();
    const alone = denoModules(cache, 'import { getVariable } from "windmill-client";', undefined);
    assert.ok(alone);
    assert.deepEqual(readdirSync(alone.nodeModulesDir), ["windmill-client"]);
    assert.equal(denoModules(cache, 'import x from "npm:lodash";', undefined), null);
    // Other npm: imports without a lock: deno's own download (of windmill-client too).
    assert.equal(
      denoModules(cache, 'import * as w from "npm:windmill-client";\nimport x from "npm:lodash";', undefined),
      null,
    );
    // A version the bundle does not satisfy comes from the registry.
    assert.equal(denoModules(cache, 'import * as w from "npm:windmill-client@1.500.0";', undefined), null);
  });
});
