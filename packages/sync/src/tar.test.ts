import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { tarArchive } from "./tar.ts";

test("tarArchive: GNU tar extracts every file, long paths and non-ASCII text included", () => {
  const long = `f/${"folder".repeat(12)}/${"sub".repeat(20)}/${"name".repeat(20)}.script.yaml`;
  const files = new Map([
    ["wmill.yaml", "defaultTs: bun\n"],
    ["f/ops/hello.sh", 'echo "héllo €"\n'],
    [long, "summary: ''\n"],
    ["f/ops/empty.sh", ""],
  ]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-tar-"));
  try {
    const archive = path.join(dir, "a.tar");
    fs.writeFileSync(archive, tarArchive(files));
    const out = path.join(dir, "out");
    fs.mkdirSync(out);
    const run = spawnSync("tar", ["-xf", archive, "-C", out], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    for (const [name, text] of files) assert.equal(fs.readFileSync(path.join(out, name), "utf8"), text, name);
    assert.deepEqual(tarArchive(files), tarArchive(files), "same files, same bytes");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("tarArchive: a path too long for ustar is refused naming it", () => {
  const name = `f/${"x".repeat(300)}`;
  assert.throws(() => tarArchive(new Map([[name, ""]])), /path too long/);
});
