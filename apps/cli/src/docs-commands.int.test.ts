// Every ```sh test block of the README and docs/, run as written through bash against a test
// instance (the REST router and a real worker), in reading order: README.md, then docs/*.md. A
// failing block fails naming its file and line. Blocks share the instance, so a later block may use
// what an earlier one made (the README's workspace `demo` and script `u/admin/hello`).
//
// Each block gets what a reader has after the README's quick start: $MILLRACE_URL, $PASSWORD (of
// admin@millrace.local, the superadmin) and $TOKEN (an API token of theirs), plus DATABASE_URL for
// the backup commands. It runs in the checkout (where `npx millrace` works) with a fresh HOME. curl
// fails on an HTTP error (--fail-with-body), and `# "…"` comment lines after a command (optionally
// followed by a remark in parentheses) are answers the block's output must hold.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiToken, createUser, principalOf } from "@millrace/core";
import { createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import { docFiles, ROOT, shellBlocks } from "./docs-blocks.ts";

const KEY = "docs-commands-instance-key-0123456789abcd";
const PASSWORD = "docs-test-password";
const BLOCK_TIMEOUT_MS = 30_000;

const PREAMBLE = `set -euo pipefail
curl() { command curl --fail-with-body --silent --show-error --max-time 30 "$@"; }
`;

interface Run {
  code: number | null;
  output: string;
}

function runBlock(code: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", PREAMBLE + code], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      output += `\n[docs test] killed after ${BLOCK_TIMEOUT_MS / 1000} s`;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, BLOCK_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      resolve({ code: exitCode, output });
    });
  });
}

/** The answers a block shows as `# "hello world"` comment lines. */
function expectedAnswers(code: string): string[] {
  return code
    .split("\n")
    .map((line) => /^# ("(?:[^"\\]|\\.)*")(?:\s+\(.*\))?\s*$/.exec(line.trim())?.[1])
    .filter((answer): answer is string => answer !== undefined);
}

const blocks = docFiles().flatMap(shellBlocks);

describe("the commands of the README and docs", () => {
  let services: TestServices;
  let api: TestApi;
  let worker: TestWorker;
  let home: string;
  let env: Record<string, string>;
  const backupsBefore = new Set<string>();

  before(async () => {
    services = await createTestServices();
    const admin = await createUser(services, {
      email: "admin@millrace.local",
      password: PASSWORD,
      superAdmin: true,
    });
    const token = await createApiToken(services, principalOf(admin), { label: "docs test" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, { BASE_URL: api.url, MILLRACE_SECRET_KEY: KEY });
    home = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-docs-home-"));
    env = {
      PATH: `${path.join(ROOT, "node_modules/.bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: home,
      MILLRACE_CONFIG: path.join(home, "millrace.json"),
      MILLRACE_URL: api.url,
      PASSWORD,
      TOKEN: token,
      DATABASE_URL: services.database.url,
      NO_COLOR: "1",
    };
    const backups = path.join(ROOT, "backups");
    if (fs.existsSync(backups)) for (const name of fs.readdirSync(backups)) backupsBefore.add(name);
  });

  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
    // Only what the blocks wrote: a developer's own backups stay.
    const backups = path.join(ROOT, "backups");
    if (fs.existsSync(backups)) {
      for (const name of fs.readdirSync(backups)) {
        if (!backupsBefore.has(name)) fs.rmSync(path.join(backups, name), { recursive: true, force: true });
      }
      if (fs.readdirSync(backups).length === 0) fs.rmdirSync(backups);
    }
  });

  it("finds blocks to run", () => {
    assert.ok(blocks.length >= 10, `only ${blocks.length} blocks marked sh test`);
  });

  for (const block of blocks) {
    it(block.where, async () => {
      const run = await runBlock(block.code, env);
      assert.equal(run.code, 0, `${block.where}: the block exited with ${run.code}:\n${run.output}`);
      for (const answer of expectedAnswers(block.code)) {
        assert.ok(run.output.includes(answer), `${block.where}: expected ${answer} in:\n${run.output}`);
      }
    });
  }
});
