// A group's custom runtime (docs/operations.md, "Custom runtimes and worker sizes"), as an image
// built FROM millrace-worker would install it, tested without Docker: a runtime folder (a Python
// virtualenv with a module and a tool in its bin) that group "datascience" names in its config.
// Real worker processes in the sandbox: only that group's jobs see the folder, read-only, with its
// bin on the PATH; the group's worker_size is its jobs' memory limit.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  runPreview,
  SUPERADMIN_SECRET_PRINCIPAL,
  updateWorkerGroupConfig,
  waitForJob,
  type JobWithLogs,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";

const base = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-runtime-"));
const runtime = path.join(base, "opt-datascience");
const jobDir = path.join(base, "jobs");
let services: TestServices;
let membership: Membership;
let datascience: TestWorker;
let plain: TestWorker;

/** What `python3 -m venv /opt/datascience && pip install …` leaves, reduced to what jobs use. */
function buildRuntime(): void {
  const site = path.join(runtime, "lib/python3.11/site-packages");
  fs.mkdirSync(site, { recursive: true });
  fs.mkdirSync(path.join(runtime, "bin"));
  fs.writeFileSync(
    path.join(runtime, "pyvenv.cfg"),
    "home = /usr/bin\ninclude-system-site-packages = false\n",
  );
  fs.writeFileSync(path.join(site, "dsmodule.py"), "def answer():\n    return 42\n");
  fs.writeFileSync(path.join(runtime, "bin/dstool"), "#!/bin/sh\necho dstool says $1\n", { mode: 0o755 });
}

async function run(tag: string, language: string, content: string): Promise<JobWithLogs> {
  const id = await runPreview(services, membership, { language, content, args: {}, tag });
  return waitForJob(services, membership, id, 60_000);
}

const PROBE = [
  'echo "PATH=$PATH"',
  'if command -v dstool >/dev/null; then dstool hello; else echo "no dstool"; fi',
  `if [ -e ${runtime} ]; then echo "sees runtime"; else echo "no runtime"; fi`,
  `if touch ${runtime}/written 2>/dev/null; then echo "runtime writable"; else echo "runtime read-only"; fi`,
].join("\n");

describe("a worker group's runtime folders and size", () => {
  before(async () => {
    // Jobs run as an unprivileged user: the folders on their way must be searchable.
    fs.chmodSync(base, 0o755);
    buildRuntime();
    fs.mkdirSync(jobDir);
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    await updateWorkerGroupConfig(services, SUPERADMIN_SECRET_PRINCIPAL, "datascience", {
      worker_tags: ["datascience"],
      runtime_dirs: [runtime],
      worker_size: 300,
    });
    const common = { JOB_DIR: jobDir, WORKER_PING_INTERVAL: "1" };
    [datascience, plain] = await Promise.all([
      startTestWorker(services.database.url, { ...common, WORKER_GROUP: "datascience" }),
      startTestWorker(services.database.url, { ...common, WORKER_GROUP: "default", WORKER_TAGS: "plain" }),
    ]);
  });
  after(async () => {
    await Promise.all([datascience?.stop(), plain?.stop()]);
    await services?.close();
    fs.rmSync(base, { recursive: true, force: true });
  });

  it("gives the group's jobs the folder, read-only with its bin first on the PATH; other groups' jobs never see it", async () => {
    assert.match(datascience.output(), /jobs limited to 300 MB, runtime folders /);
    const inGroup = await run("datascience", "bash", PROBE);
    assert.equal(inGroup.status, "success", inGroup.logs);
    assert.match(inGroup.logs, new RegExp(`PATH=${runtime}/bin:`));
    assert.match(inGroup.logs, /dstool says hello/);
    assert.match(inGroup.logs, /sees runtime/);
    assert.match(inGroup.logs, /runtime read-only/);
    assert.ok(!fs.existsSync(path.join(runtime, "written")));

    // An empty `# requirements:` block (Windmill's: the whole list, nothing inferred): the script
    // uses what the group's runtime provides instead of installing its imports.
    const python = await run(
      "datascience",
      "python3",
      "# requirements:\n\nimport dsmodule\n\ndef main():\n    return dsmodule.answer()\n",
    );
    assert.equal(python.status, "success", python.logs);
    assert.equal(python.result, 42);

    const elsewhere = await run("plain", "bash", PROBE);
    assert.equal(elsewhere.status, "success", elsewhere.logs);
    assert.match(elsewhere.logs, /no dstool/);
    assert.match(elsewhere.logs, /no runtime/);
    assert.doesNotMatch(elsewhere.logs, /opt-datascience/);
    const noModule = await run(
      "plain",
      "python3",
      "# requirements:\n\nimport dsmodule\n\ndef main():\n    return 1\n",
    );
    assert.equal(noModule.status, "failure");
    assert.match(JSON.stringify(noModule.result), /No module named 'dsmodule'/);
  });

  it("limits the group's jobs to its worker size", async () => {
    // 300 MB workers: a job holding 400 MB is stopped as out of memory; 100 MB is fine.
    const hog = (mb: number) =>
      `import time\n\ndef main():\n    block = bytearray(${mb} * 1024 * 1024)\n    time.sleep(1.5)\n    return len(block)\n`;
    const big = await run("datascience", "python3", hog(400));
    assert.equal(big.status, "failure", JSON.stringify(big.result));
    assert.match(JSON.stringify(big.result), /memory/i);
    const small = await run("datascience", "python3", hog(100));
    assert.equal(small.status, "success", small.logs);
  });
});
