// A Python script that closes its own stdout or stderr still returns its result, in a sandbox
// made for it and in a warm one (whose stub runs the wrapper in the python3 started ahead).
import assert from "node:assert/strict";
import { test } from "node:test";
import { detectSandbox } from "./sandbox.ts";
import { launcherWithWarmPool, plainSpec, run, scratchDir, warmUp } from "./testing.ts";

const root = scratchDir();
const { launcher, pool } = launcherWithWarmPool(root);

const scripts: [string, string][] = [
  [
    "sys.stdout.close()",
    "import sys\ndef main():\n    print('before')\n    sys.stdout.close()\n    return 42\n",
  ],
  ["os.close(1)", "import os\ndef main():\n    print('before')\n    os.close(1)\n    return 42\n"],
  ["sys.stderr.close()", "import sys\ndef main():\n    sys.stderr.close()\n    return 42\n"],
  [
    "os.close(1) and os.close(2)",
    "import os\ndef main():\n    os.close(1)\n    os.close(2)\n    return 42\n",
  ],
];

test("python3: a script that closes stdout or stderr returns its result", async () => {
  for (const [what, content] of scripts) {
    const cold = await run(root, { language: "python3", content });
    assert.deepEqual(cold.outcome, { status: "success", result: 42 }, `${what}: ${cold.logs}`);
  }
});

test("python3: the same in a warm sandbox", { skip: detectSandbox().kind !== "bubblewrap" }, async () => {
  for (const [what, content] of scripts) {
    await warmUp(pool, plainSpec("python3"));
    const warm = await run(root, { language: "python3", content, launcher, warmSandboxes: pool });
    assert.deepEqual(warm.outcome, { status: "success", result: 42 }, `${what}: ${warm.logs}`);
  }
});
