// Hardening of the limits through real worker processes: the disk quota of a job's folder, the
// file-size limit, the default memory limit, the temporary folders of a worker killed with SIGKILL, secrets masked in what
// a job prints and returns.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createKeyring,
  createResource,
  createVariable,
  deployScript,
  getJob,
  handleZombieJobs,
  runScriptByPath,
  waitForJob,
  type JobWithLogs,
  type Membership,
  type NewScriptInput,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "./testing.ts";

let services: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];
const scratch = mkdtempSync(path.join(os.tmpdir(), "millrace-limits-"));
// Jobs run as nobody: every folder above their own must let them through.
chmodSync(scratch, 0o711);

async function worker(env: Record<string, string>): Promise<TestWorker> {
  const started = await startTestWorker(services.database.url, {
    JOB_DIR: path.join(scratch, "jobs"),
    WORKER_PING_INTERVAL: "1",
    ...env,
  });
  workers.push(started);
  return started;
}

async function deploy(input: Omit<NewScriptInput, "language"> & { language?: string }) {
  return deployScript(services, membership, { language: "bash", ...input });
}

async function run(scriptPath: string, args: Record<string, unknown> = {}): Promise<JobWithLogs> {
  const id = await runScriptByPath(services, membership, scriptPath, args);
  return waitForJob(services, membership, id, 60_000);
}

function errorOf(job: JobWithLogs): { name: string; message: string } {
  assert.equal(job.status, "failure", JSON.stringify(job.result));
  return (job.result as { error: { name: string; message: string } }).error;
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

before(async () => {
  services = await createTestServices();
});
after(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await services?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("job limits with real worker processes", () => {
  before(async () => {
    ({ membership } = await createTestMember(services));
    await Promise.all([
      worker({ WORKER_TAGS: "lim-default" }),
      worker({ WORKER_TAGS: "lim-quota", JOB_DISK_QUOTA_MB: "50" }),
    ]);
  });

  it("a job writing 2 GB into its folder ends with DiskQuotaExceeded at JOB_DISK_QUOTA_MB; the worker goes on", async () => {
    await deploy({
      path: "u/t/fill",
      tag: "lim-quota",
      content: "for i in $(seq 1 20); do head -c 100000000 /dev/zero > f$i; done\necho filled\n",
    });
    await deploy({ path: "u/t/ok-quota", tag: "lim-quota", content: "echo fine" });
    const started = Date.now();
    const job = await run("u/t/fill");
    assert.deepEqual(errorOf(job), {
      name: "DiskQuotaExceeded",
      message: "Job stored more than its disk quota of 50 MB in its folder",
    });
    assert.ok(Date.now() - started < 10_000, `ended after ${Date.now() - started} ms`);
    assert.doesNotMatch(job.logs ?? "", /filled/);
    assert.equal((await run("u/t/ok-quota")).result, "fine");
  });

  it("a file stopped at the 1 GiB file-size limit fails the job with FileSizeLimitExceeded, in bash and python3", async () => {
    await deploy({
      path: "u/t/big-sh",
      tag: "lim-default",
      content: "head -c 1100M /dev/zero > big\necho still here\n",
    });
    await deploy({
      path: "u/t/big-py",
      tag: "lim-default",
      language: "python3",
      content: [
        "def main():",
        "    try:",
        "        with open('big', 'wb') as f:",
        "            for _ in range(1100):",
        "                f.write(b'x' * 1024 * 1024)",
        "    except OSError as e:",
        "        return 'caught: ' + str(e)",
        "    return 'written'",
      ].join("\n"),
    });
    for (const script of ["u/t/big-sh", "u/t/big-py"]) {
      const job = await run(script);
      assert.deepEqual(
        errorOf(job),
        {
          name: "FileSizeLimitExceeded",
          message: "Job tried to write a file larger than 1024 MB, the file-size limit",
        },
        script,
      );
    }
  });

  it("a job whose script sets no memory limit gets the slot's share of the memory, or JOB_MEMORY_LIMIT_MB", async () => {
    // 100 slots on a machine of less than ~34 GB: each slot's share is under the 256 MB floor.
    const defaults = await worker({ WORKER_TAGS: "lim-mem", NUM_WORKERS: "100" });
    assert.match(defaults.output(), /jobs without a memory limit of their own get 256 MB/);
    const hog = [
      "def main():",
      "    held = [b'x' * (1024 * 1024) for _ in range(600)]",
      "    return len(held)",
    ].join("\n");
    await deploy({ path: "u/t/hog", tag: "lim-mem", language: "python3", content: hog });
    const killed = errorOf(await run("u/t/hog"));
    assert.equal(killed.name, "OutOfMemory", killed.message);
    assert.match(killed.message, /256 MB/);
    await defaults.stop();
    await worker({ WORKER_TAGS: "lim-mem", NUM_WORKERS: "100", JOB_MEMORY_LIMIT_MB: "2048" });
    assert.equal((await run("u/t/hog")).result, 600);
  });

  it("the temporary folders of a worker killed with SIGKILL are removed by the next one", async () => {
    // A TMPDIR and a JOB_DIR of their own: nothing of the other workers' is seen here.
    const tmp = path.join(scratch, "tmp-kill");
    const jobDir = path.join(scratch, "jobs-kill");
    mkdirSync(tmp, { mode: 0o711 });
    const env = { TMPDIR: tmp, JOB_DIR: jobDir, WORKER_TAGS: "lim-kill", WORKER_GROUP: "kill" };
    const first = await worker(env);
    const folders = () => [
      ...readdirSync(tmp).filter((name) => name.startsWith("millrace-pipes-")),
      ...readdirSync(jobDir),
    ];
    await deploy({ path: "u/t/quick", tag: "lim-kill", content: "echo quick" });
    await deploy({
      path: "u/t/slow",
      tag: "lim-kill",
      language: "python3",
      content: "import time\ndef main():\n    time.sleep(60)\n",
    });
    assert.equal((await run("u/t/quick")).result, "quick");
    // Its FIFOs' folder in TMPDIR, its waiting sandboxes' folders and a running job's in JOB_DIR.
    await until("the worker keeps warm sandboxes", () => folders().some((name) => name.startsWith("warm-")));
    const slow = await runScriptByPath(services, membership, "u/t/slow", {});
    await until("the slow job runs", () => existsSync(path.join(jobDir, slow)));
    await first.kill9();
    // Its process launcher, which outlives it a moment, removes its own FIFOs' folder as it exits.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const left = folders();
    assert.ok(
      left.some((name) => name.startsWith("millrace-pipes-")),
      `left: ${left.join(" ")}`,
    );
    assert.ok(
      left.some((name) => name.startsWith("warm-")) && left.includes(slow),
      `left: ${left.join(" ")}`,
    );
    // The zombie monitor ends the job of the dead worker.
    await handleZombieJobs(services.pool, services.boss, { timeoutSecs: 1, restart: false });
    assert.equal((await waitForJob(services, membership, slow, 10_000)).status, "failure");

    const second = await worker(env);
    assert.equal((await run("u/t/quick")).result, "quick");
    const stale = () => folders().filter((name) => left.includes(name));
    await until("the next worker removed them", () => stale().length === 0, 10_000).catch(() => {
      assert.deepEqual(stale(), [], "folders of the killed worker");
    });
    await second.stop();
    // A worker that stops normally leaves nothing either.
    assert.deepEqual(
      readdirSync(tmp).filter((name) => name.startsWith("millrace-")),
      [],
    );
    assert.deepEqual(readdirSync(jobDir), []);
  });
});

const KEY = "limits-test-instance-key-0123456789abcdef";
const SECRET = "Zq8-secret-value-77";
const PLAIN = "plain-value-not-secret";

describe("secrets a job got are masked in its logs and result", () => {
  let api: TestApi | undefined;
  let me: string;

  before(async () => {
    ({ membership } = await createTestMember(services));
    me = membership.principal.username;
    const ctx = { ...services, secrets: createKeyring(KEY) };
    await createVariable(ctx, membership, { path: `u/${me}/token`, value: SECRET, isSecret: true });
    await createVariable(ctx, membership, { path: `u/${me}/plain`, value: PLAIN, isSecret: false });
    await createResource(ctx, membership, {
      path: `u/${me}/db`,
      resourceType: "postgresql",
      value: { host: "db.internal", port: 5432, user: "app", dbname: "app", password: `$var:u/${me}/token` },
    });
    api = await startTestApi(services.database.url, KEY);
    await worker({
      WORKER_TAGS: "lim-secret",
      BASE_URL: api.url,
      MILLRACE_SECRET_KEY: KEY,
      NUM_WORKERS: "2",
    });
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await api?.close();
  });

  it("a $var: argument printed, split across two writes, and returned", async () => {
    await deploy({
      path: `u/${me}/print_arg`,
      tag: "lim-secret",
      content: [
        'token="$1"',
        'plain="$2"',
        'echo "got $token and $plain"',
        'printf "%s" "${token:0:6}"',
        "sleep 0.4",
        'printf "%s\\n" "${token:6}"',
        'echo "$token"',
      ].join("\n"),
    });
    const job = await run(`u/${me}/print_arg`, { token: `$var:u/${me}/token`, plain: `$var:u/${me}/plain` });
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.equal(job.result, "***");
    assert.equal(job.logs, `got *** and ${PLAIN}\n***\n***\n`);
  });

  it("secrets read through WM_TOKEN (a variable, a resource) are masked in the streamed log and the result", async () => {
    await deployScript(services, membership, {
      path: `u/${me}/read_py`,
      tag: "lim-secret",
      language: "python3",
      content: [
        "import time, wmill",
        "",
        "def main():",
        `    secret = wmill.get_variable("u/${me}/token")`,
        "    print('read', secret, flush=True)",
        "    time.sleep(1.5)",
        `    db = wmill.get_resource("u/${me}/db")`,
        "    return {'secret': secret, 'password': db['password'], 'reversed': secret[::-1], secret: 1}",
      ].join("\n"),
    });
    const id = await runScriptByPath(services, membership, `u/${me}/read_py`, {});
    // While it runs, what it printed is already stored (and streamed), masked.
    await until("the job's first line is stored", async () =>
      (await getJob(services, membership, id)).logs.includes("read "),
    );
    const running = await getJob(services, membership, id);
    assert.equal(running.status, "running");
    assert.equal(running.logs, "read ***\n");
    const job = await waitForJob(services, membership, id, 60_000);
    assert.deepEqual(job.result, {
      secret: "***",
      password: "***",
      reversed: [...SECRET].reverse().join(""),
      "***": 1,
    });
    assert.doesNotMatch(job.logs ?? "", new RegExp(SECRET));
  });
});
