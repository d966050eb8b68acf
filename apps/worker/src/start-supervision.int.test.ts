// `npm start`'s children die with it, whatever signal it gets: a worker must never go on claiming
// jobs unsupervised. Real processes: `npm start` (MODE=worker, on the test database) and its worker.
// And what such a worker hands its jobs when it is given only BASE_INTERNAL_URL.
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { deployScript, runScriptByPath, waitForJob } from "@millrace/core";
import { createTestMember, createTestServices } from "@millrace/core/testing";
import { createTestDatabase, type TestDatabase } from "@millrace/db/testing";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
let database: TestDatabase;

/** Pids of the processes whose environment holds `marker` (the test runs as root: all of them). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(marker)) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

function describeProcesses(pids: number[]): string {
  return pids
    .map((pid) => {
      try {
        return `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")}`;
      } catch {
        return `${pid}: (gone)`;
      }
    })
    .join("\n");
}

async function until(check: () => boolean, timeoutMs: number, what: string, left?: () => number[]) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}${left ? `; still running:\n${describeProcesses(left())}` : ""}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `npm start` as MODE=worker; resolves once its worker serves its tags. */
async function npmStart(
  marker: string,
  url = database.url,
): Promise<{ npm: ChildProcess; output: () => string }> {
  let output = "";
  const npm = spawn("npm", ["start"], {
    cwd: repo,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      HOME: os.tmpdir(),
      MODE: "worker",
      DATABASE_URL: url,
      BASE_INTERNAL_URL: "http://127.0.0.1:9",
      WORKER_TAGS: `supervision-${marker}`,
      WORKER_GRACE_PERIOD: "2",
      JOB_DIR: path.join(os.tmpdir(), `millrace-supervision-${marker}`),
      SUPERVISION_TEST_MARKER: marker,
    },
  });
  npm.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await until(() => output.includes("serving tags") || npm.exitCode !== null, 60_000, "the worker");
  assert.match(output, /serving tags/, output);
  return { npm, output: () => output };
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // gone
  }
}

describe("npm start supervises what it started", () => {
  it("MODE=worker refuses to start without BASE_INTERNAL_URL or BASE_URL, naming it", () => {
    const run = spawnSync(process.execPath, [path.join(repo, "scripts/start.ts")], {
      env: {
        PATH: process.env.PATH,
        HOME: os.tmpdir(),
        MODE: "worker",
        DATABASE_URL: "postgresql://u:p@127.0.0.1:9/x",
      },
      encoding: "utf8",
      timeout: 30_000,
    });
    assert.notEqual(run.status, 0);
    assert.match(run.stdout + run.stderr, /BASE_INTERNAL_URL/);
  });

  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    for (const pid of processesWith("SUPERVISION_TEST_MARKER=")) killGroup(pid, "SIGKILL");
    await database?.drop();
  });

  it("refuses to start processes the cluster's max_connections could never hold, naming the numbers", () => {
    const run = spawnSync(process.execPath, [path.join(repo, "scripts/start.ts")], {
      env: {
        PATH: process.env.PATH,
        HOME: os.tmpdir(),
        MODE: "worker",
        DATABASE_URL: database.url,
        BASE_INTERNAL_URL: "http://127.0.0.1:9",
        DB_POOL_SIZE: "500",
      },
      encoding: "utf8",
      timeout: 30_000,
    });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /database connections: up to 505 \(worker 505;/);
    assert.match(
      run.stdout,
      /this install may open 505 database connections, but the cluster's max_connections is \d+/,
    );
  });

  it("kill -9 of npm start's process group stops its worker", async () => {
    const marker = `kill9-${process.pid}`;
    const { npm } = await npmStart(marker);
    const worker = () => processesWith(`SUPERVISION_TEST_MARKER=${marker}`).filter((pid) => pid !== npm.pid);
    assert.ok(worker().length > 0, "the worker runs");
    killGroup(npm.pid!, "SIGKILL");
    await until(() => worker().length === 0, 20_000, "every process npm start started to stop", worker);
  });

  it("SIGTERM to npm start's pid stops its worker", async () => {
    const marker = `term-${process.pid}`;
    const { npm } = await npmStart(marker);
    const all = () => processesWith(`SUPERVISION_TEST_MARKER=${marker}`);
    assert.ok(all().length > 1, "npm and its worker run");
    process.kill(npm.pid!, "SIGTERM");
    await until(() => all().length === 0, 20_000, "npm start and everything it started to stop", all);
  });

  it("MODE=worker given only BASE_INTERNAL_URL hands it to its jobs as BASE_URL and WM_BASE_URL", async () => {
    const services = await createTestServices();
    const marker = `base-${process.pid}`;
    const { npm } = await npmStart(marker, services.database.url);
    try {
      const { membership } = await createTestMember(services, "baseurl");
      const path = `u/${membership.principal.username}/urls`;
      await deployScript(services, membership, {
        path,
        language: "bash",
        tag: `supervision-${marker}`,
        content:
          'echo "{\\"base\\": \\"$BASE_URL\\", \\"wm\\": \\"$WM_BASE_URL\\", \\"internal\\": \\"$BASE_INTERNAL_URL\\"}" > result.json',
      });
      const job = await waitForJob(
        services,
        membership,
        await runScriptByPath(services, membership, path, {}),
        30_000,
      );
      assert.deepEqual(job.result, {
        base: "http://127.0.0.1:9",
        wm: "http://127.0.0.1:9",
        internal: "http://127.0.0.1:9",
      });
    } finally {
      killGroup(npm.pid!, "SIGTERM");
      await until(() => npm.exitCode !== null || npm.signalCode !== null, 20_000, "npm start to stop");
      await services.close();
    }
  });
});
