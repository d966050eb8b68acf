import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { ownerTag, removeStaleFolders } from "./owned-folders.ts";
import { scratchDir } from "./testing.ts";

test("removeStaleFolders removes the folders of processes that are gone, and only those", () => {
  const dir = scratchDir();
  const gone = spawnSync("true").pid!;
  const names = [
    `x-${ownerTag()}-mine`,
    `x-${gone}.12345-gone`,
    // pid 1 is alive, but it started at another time: the pid was reused.
    `x-1.1-reused`,
    `x-${process.ppid}.0-no-start-time`,
    `y-${gone}.12345-other-kind`,
    "x-unrelated",
  ];
  for (const name of names) mkdirSync(path.join(dir, name));
  assert.deepEqual(removeStaleFolders(dir, "x-").sort(), ["x-1.1-reused", `x-${gone}.12345-gone`].sort());
  assert.deepEqual(readdirSync(dir).sort(), names.filter((n) => !/gone$|reused$/.test(n)).sort());
});
