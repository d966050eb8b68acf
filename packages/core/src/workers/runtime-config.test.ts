import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { parseWorkerGroupConfig } from "./group-config.ts";
import { runtimeDirsEnv } from "./runtime-config.ts";

describe("runtime_dirs", () => {
  it("accepts absolute folders and refuses the sandbox's own and malformed paths, naming the entry", () => {
    assert.deepEqual(parseWorkerGroupConfig({ runtime_dirs: ["/opt/datascience"] }).runtime_dirs, [
      "/opt/datascience",
    ]);
    for (const [bad, field] of [
      [["relative/dir"], "runtime_dirs[0]"],
      [["/opt/x", "/usr"], "runtime_dirs[1]"],
      [["/opt/../etc"], "runtime_dirs[0]"],
      [["/opt/a:b"], "runtime_dirs[0]"],
      ["/opt/x", "runtime_dirs"],
    ] as const)
      assert.throws(() => parseWorkerGroupConfig({ runtime_dirs: bad }), { field });
  });

  it("binds what exists, puts bin on the PATH and a virtualenv's site-packages on PYTHONPATH", () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-rt-"));
    try {
      const venv = path.join(base, "venv");
      fs.mkdirSync(path.join(venv, "bin"), { recursive: true });
      fs.mkdirSync(path.join(venv, "lib/python3.11/site-packages"), { recursive: true });
      fs.writeFileSync(path.join(venv, "pyvenv.cfg"), "");
      const tools = path.join(base, "tools");
      fs.mkdirSync(path.join(tools, "bin"), { recursive: true });
      // Not a virtualenv (no pyvenv.cfg): its lib is not put on PYTHONPATH.
      fs.mkdirSync(path.join(tools, "lib/python3.11/site-packages"), { recursive: true });
      assert.deepEqual(runtimeDirsEnv([venv, tools, path.join(base, "missing")], fs), {
        readOnlyPaths: [venv, tools],
        path: [path.join(venv, "bin"), path.join(tools, "bin")],
        pythonPath: [path.join(venv, "lib/python3.11/site-packages")],
      });
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
