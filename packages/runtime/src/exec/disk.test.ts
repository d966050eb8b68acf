// The disk quota of a job's folder and the file-size limit, in every way a job can be started.
import assert from "node:assert/strict";
import { linkSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { sampleDir } from "./disk.ts";
import type { ExecuteOutcome, ExecuteRequest } from "./execute.ts";
import { detectSandbox } from "./sandbox.ts";
import { launcherWithWarmPool, plainSpec, run, scratchDir, warmUp } from "./testing.ts";

const root = scratchDir();
const MB = 1024 * 1024;

function errorOf(outcome: ExecuteOutcome): { name: string; message: string } {
  assert.equal(outcome.status, "failure", JSON.stringify(outcome));
  return outcome.status === "failure" ? outcome.error : { name: "", message: "" };
}

test("sampleDir counts allocated blocks once per inode, and sees a file at the size limit", () => {
  const dir = path.join(root, "sample");
  mkdirSync(path.join(dir, "sub"), { recursive: true });
  writeFileSync(path.join(dir, "sub", "a"), Buffer.alloc(MB, 1));
  linkSync(path.join(dir, "sub", "a"), path.join(dir, "b"));
  const sample = sampleDir({ dir, maxBytes: 10 * MB, maxFileBytes: 2 * MB });
  assert.equal(sample.entries, 3);
  assert.ok(sample.bytes >= MB && sample.bytes < 1.2 * MB, String(sample.bytes));
  assert.equal(sample.fileAtLimit, false);
  assert.equal(sampleDir({ dir, maxBytes: 10 * MB, maxFileBytes: MB }).fileAtLimit, true);
  assert.equal(sampleDir({ dir, maxBytes: 10 * MB, maxFileBytes: MB }, 1).complete, false);
});

const sandboxed = detectSandbox().kind === "bubblewrap";
const { launcher, pool } = launcherWithWarmPool(root);
const modes = [
  { name: "in the sandbox", sandbox: true, launcher: null, warm: null },
  { name: "without the sandbox", sandbox: false, launcher: null, warm: null },
  { name: "in a warm sandbox", sandbox: true, launcher, warm: pool },
].filter((mode) => sandboxed || !mode.sandbox);

for (const mode of modes) {
  describe(`disk limits ${mode.name}`, () => {
    const job = async (
      language: "bash" | "python3",
      content: string,
      options: Partial<ExecuteRequest> = {},
    ): Promise<ExecuteOutcome> => {
      if (mode.warm) await warmUp(mode.warm, plainSpec(language));
      const r = await run(root, {
        language,
        content,
        sandbox: mode.sandbox,
        launcher: mode.launcher,
        warmSandboxes: mode.warm,
        ...options,
      });
      return r.outcome;
    };

    test("a command stopped at the file-size limit fails the job (bash goes on after it)", async () => {
      const outcome = await job("bash", "head -c 3000000 /dev/zero > big\necho went on\n", {
        limits: { maxFileBytes: 2 * MB },
      });
      assert.deepEqual(errorOf(outcome), {
        name: "FileSizeLimitExceeded",
        message: "Job tried to write a file larger than 2 MB, the file-size limit",
      });
    });

    test("python3 catching EFBIG still fails with FileSizeLimitExceeded", async () => {
      const content = [
        "def main():",
        "    try:",
        "        with open('big', 'wb') as f:",
        "            f.write(b'x' * 3_000_000)",
        "    except OSError as e:",
        "        return 'caught ' + str(e)",
        "    return 'written'",
      ].join("\n");
      const outcome = await job("python3", content, { limits: { maxFileBytes: 2 * MB } });
      assert.equal(errorOf(outcome).name, "FileSizeLimitExceeded");
    });

    test("files up to the limits are fine", async () => {
      const outcome = await job(
        "bash",
        "head -c 1000000 /dev/zero > a\nhead -c 1000000 /dev/zero > b\necho ok\n",
        {
          limits: { maxFileBytes: 2 * MB, maxDiskBytes: 4 * MB },
        },
      );
      assert.deepEqual(outcome, { status: "success", result: "ok" });
    });

    test("a folder over its quota at the end fails the job with DiskQuotaExceeded", async () => {
      const outcome = await job(
        "bash",
        "for i in 1 2 3 4 5 6; do head -c 1000000 /dev/zero > f$i; done\necho ok\n",
        {
          limits: { maxDiskBytes: 4 * MB },
        },
      );
      assert.deepEqual(errorOf(outcome), {
        name: "DiskQuotaExceeded",
        message: "Job stored more than its disk quota of 4 MB in its folder",
      });
    });

    test("a job filling its folder is killed while it runs", async () => {
      const started = Date.now();
      const outcome = await job(
        "bash",
        "for i in $(seq 1 200); do head -c 1000000 /dev/zero > f$i; sleep 0.02; done\necho finished\n",
        { limits: { maxDiskBytes: 10 * MB } },
      );
      assert.equal(errorOf(outcome).name, "DiskQuotaExceeded");
      assert.ok(Date.now() - started < 3000, `killed after ${Date.now() - started} ms`);
    });

    test("deleted files still open count against the quota", async () => {
      const content = [
        "import os, time",
        "def main():",
        "    files = []",
        "    for i in range(30):",
        "        f = open('hidden%d' % i, 'wb')",
        "        os.unlink('hidden%d' % i)",
        "        f.write(b'x' * 1_000_000)",
        "        f.flush()",
        "        files.append(f)",
        "    time.sleep(5)",
        "    return 'not caught'",
      ].join("\n");
      const started = Date.now();
      const outcome = await job("python3", content, { limits: { maxDiskBytes: 10 * MB } });
      assert.equal(errorOf(outcome).name, "DiskQuotaExceeded");
      assert.ok(Date.now() - started < 3000, `killed after ${Date.now() - started} ms`);
    });

    test("a deleted file held open by an orphaned process counts too", async () => {
      // The subshell exits at once: the writer is adopted by the namespace's init (in the sandbox
      // and the fence) or keeps only its session (without either), wherever the watch looks.
      const content = [
        "( bash -c 'exec 3>hidden; rm hidden; head -c 20000000 /dev/zero >&3; sleep 5' & )",
        "sleep 5",
        "echo not caught",
      ].join("\n");
      const started = Date.now();
      const outcome = await job("bash", content, { limits: { maxDiskBytes: 10 * MB } });
      assert.equal(errorOf(outcome).name, "DiskQuotaExceeded");
      assert.ok(Date.now() - started < 3000, `killed after ${Date.now() - started} ms`);
    });
  });
}
