// Every relative link of the README and docs/ points at a file that exists and, when it names one,
// at a heading of that file; the README stays a newcomer's page.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { anchorOf, brokenLinks, docFiles, ROOT, shellBlocks } from "./docs-blocks.ts";

describe("README and docs", () => {
  it("relative links and anchors resolve", () => {
    assert.deepEqual(docFiles().flatMap(brokenLinks), []);
  });

  it("the README stays short (at most 450 lines)", () => {
    const lines = fs.readFileSync(path.join(ROOT, "README.md"), "utf8").split("\n").length - 1;
    assert.ok(lines <= 450, `README.md has ${lines} lines`);
  });

  it("anchors follow GitHub's rule", () => {
    assert.equal(
      anchorOf("Syncing a workspace with the `wmill` CLI"),
      "syncing-a-workspace-with-the-wmill-cli",
    );
    assert.equal(anchorOf("Failover: a multi-host DATABASE_URL"), "failover-a-multi-host-database_url");
    assert.equal(
      anchorOf("People, roles, tokens, audit and governance"),
      "people-roles-tokens-audit-and-governance",
    );
  });

  it("commands to run are found (```sh test blocks)", () => {
    const blocks = docFiles().flatMap(shellBlocks);
    assert.ok(blocks.length >= 10, `only ${blocks.length} blocks marked sh test`);
    for (const block of blocks) assert.match(block.where, /^(README\.md|docs\/[\w-]+\.md):\d+$/);
  });
});
