// Self-fencing (issue 38 item 4): a worker cut off from PostgreSQL while the others still reach
// it kills its running job before the zombie monitor hands that job to another worker, so that
// the job never runs on two workers at once. Real worker processes; one reaches PostgreSQL through
// a TCP proxy the test cuts (every connection dropped, new ones refused), the other directly. The
// job appends a tick (time, its run's random id) to a file every 100 ms: the two runs' ticks must not
// overlap, and the fenced run must write nothing once the proxy is back.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  deployScript,
  getJob,
  handleZombieJobs,
  publishZombieSettings,
  runScriptByPath,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestAgent, startTestApi, startTestWorker, type TestApi, type TestWorker } from "./testing.ts";
import { tcpProxy } from "./tcp-proxy.ts";

const ZOMBIE_JOB_TIMEOUT = 6;
const KEY = "partition-test-instance-key-0123456789abc";
const SUPERADMIN_SECRET = "partition-test-superadmin-secret-01234567";

let services: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];
let dir: string;
let api: TestApi | null = null;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The ticks go to a file of the test's: no sandbox (the fence kills the job's process group the
// same way with one).
const jobEnv = () => ({
  WORKER_PING_INTERVAL: "1",
  DISABLE_SANDBOX: "true",
  JOB_DIR: path.join(dir, `jobs-${workers.length}`),
});

async function worker(databaseUrl: string, env: Record<string, string>) {
  const started = await startTestWorker(databaseUrl, { ...jobEnv(), ...env });
  workers.push(started);
  return started;
}

/** The zombie monitor, as the leader runs it (every 250 ms here); when it put a job back. */
function zombieMonitor() {
  let requeuedAt = 0;
  let monitoring = true;
  const loop = (async () => {
    while (monitoring) {
      const { restarted } = await handleZombieJobs(services.pool, services.boss, {
        timeoutSecs: ZOMBIE_JOB_TIMEOUT,
        restart: true,
      }).catch(() => ({ restarted: [] as string[] }));
      if (restarted.length > 0 && !requeuedAt) requeuedAt = Date.now();
      await sleep(250);
    }
  })();
  return {
    requeuedAt: () => requeuedAt,
    stop: async () => {
      monitoring = false;
      await loop;
    },
  };
}

interface Tick {
  at: number;
  /** The run's own random id. */
  run: string;
}

/**
 * Deploys and runs the ticker `u/t/<name>` on `tag`: a run of its own id appends a tick to `file`
 * every 100 ms, 300 times the first time and `rerunTicks` times when it runs again.
 */
async function runTicker(name: string, tag: string, file: string, rerunTicks: number): Promise<string> {
  await deployScript(services, membership, {
    path: `u/t/${name}`,
    language: "bash",
    tag,
    content: [
      'f="$1"',
      "run=$RANDOM$RANDOM$RANDOM",
      `n=300; [ -e "$f" ] && n=${rerunTicks}`,
      'for i in $(seq 1 $n); do echo "$(date +%s%3N) $run" >> "$f"; sleep 0.1; done',
      'echo "finished by $run"',
    ].join("\n"),
  });
  return runScriptByPath(services, membership, `u/t/${name}`, { f: file });
}

function ticks(file: string): Tick[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => /^\d+ \d+$/.test(line))
    .map((line) => {
      const [at, run] = line.split(" ");
      return { at: Number(at), run: run! };
    });
}

describe("a worker cut off from the database (or an agent from its server) fences itself", () => {
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-partition-"));
    // Jobs run as an unprivileged user: it must reach the job folders and write the ticks.
    fs.chmodSync(dir, 0o711);
    fs.mkdirSync(path.join(dir, "ticks"));
    fs.chmodSync(path.join(dir, "ticks"), 0o777);
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    // What the leader's zombie monitor publishes (apps/web/server/background.ts).
    await publishZombieSettings(services.pool, { timeoutSecs: ZOMBIE_JOB_TIMEOUT, restart: true });
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await api?.close();
    await services?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The ticker job runs on the worker behind the proxy; the proxy is cut once it ticks and
   * `startDirect` has started the worker that may rerun it; then restored. Checks no overlap, one
   * rerun to its end, nothing written for the job by the fenced worker once it is back.
   */
  async function scenario(options: {
    name: string;
    tag: string;
    proxy: Awaited<ReturnType<typeof tcpProxy>>;
    fenced: TestWorker;
    startDirect: () => Promise<unknown>;
    fencedLine: RegExp;
    recoveredLine: string;
  }): Promise<void> {
    const { proxy, fenced } = options;
    const monitor = zombieMonitor();
    try {
      const file = path.join(dir, "ticks", options.name);
      // 30 s the first time, 2 s when it runs again.
      const id = await runTicker(options.name, options.tag, file, 20);
      const deadline = Date.now() + 15_000;
      while (ticks(file).length < 3) {
        if (Date.now() > deadline) {
          const state = await getJob(services, membership, id);
          assert.fail(`the job did not start behind the proxy: ${JSON.stringify(state)}\n${fenced.output()}`);
        }
        await sleep(50);
      }
      const first = ticks(file)[0]!.run;
      // The other worker reaches PostgreSQL directly; it starts while the job runs on the first.
      await options.startDirect();
      const cutAt = Date.now();
      proxy.cut();

      const job = await waitForJob(services, membership, id, 30_000);
      assert.equal(job.status, "success", job.logs);
      const requeuedAt = monitor.requeuedAt();
      const all = ticks(file);
      const firstRun = all.filter((tick) => tick.run === first);
      const secondRun = all.filter((tick) => tick.run !== first);
      const story = () =>
        `${all.map((tick) => `${tick.at - cutAt} ${tick.run}`).join(", ")}\nrequeued at ${requeuedAt - cutAt} ms\n` +
        `${workers.map((w) => w.output()).join("\n")}\n${job.logs}`;
      assert.ok(requeuedAt > 0, `the zombie monitor put the job back: ${story()}`);
      assert.ok(firstRun.length >= 3 && firstRun.length < 300, `the first run was cut short: ${story()}`);
      assert.equal(new Set(secondRun.map((tick) => tick.run)).size, 1, `one rerun: ${story()}`);
      assert.equal(secondRun.length, 20, `the rerun ran to its end: ${story()}`);
      const lastFirst = Math.max(...firstRun.map((tick) => tick.at));
      const firstSecond = Math.min(...secondRun.map((tick) => tick.at));
      console.log(
        `${options.name}, after the cut: the fenced run's last tick at ${lastFirst - cutAt} ms, the job put ` +
          `back at ${requeuedAt - cutAt} ms, the rerun's first tick at ${firstSecond - cutAt} ms`,
      );
      // The fenced run stopped before the monitor put the job back, so before the rerun began.
      assert.ok(lastFirst < requeuedAt, story());
      assert.ok(lastFirst < firstSecond, `no overlap of the two runs: ${story()}`);
      assert.equal(job.result, `finished by ${secondRun[0]!.run}`);
      assert.match(fenced.output(), options.fencedLine);
      assert.match(job.logs, /zombie restart 1 of 3/);
      assert.equal(job.logs.match(/finished by/g)?.length, 1, job.logs);
      const row = async () =>
        (
          await services.pool.query<{ zombie_restarts: number; completed_at: Date; worker_name: string }>(
            "SELECT zombie_restarts, completed_at, worker_name FROM job WHERE id = $1",
            [id],
          )
        ).rows[0];
      const recorded = await row();
      assert.equal(recorded?.zombie_restarts, 1);

      // The proxy comes back: the fenced worker resumes and writes nothing for that job.
      proxy.restore();
      const back = Date.now() + 15_000;
      while (!fenced.output().includes(options.recoveredLine)) {
        assert.ok(Date.now() < back, `the fenced worker recovers:\n${fenced.output()}`);
        await sleep(100);
      }
      await sleep(1000);
      const settled = await getJob(services, membership, id);
      assert.equal(settled.status, "success");
      assert.equal(settled.result, job.result);
      assert.equal(settled.logs, job.logs, "nothing written for the job after the fence");
      assert.deepEqual(await row(), recorded);
      assert.equal(ticks(file).filter((tick) => tick.run === first).length, firstRun.length);
    } finally {
      await monitor.stop();
    }
  }

  it("a database worker kills its job before the zombie monitor reruns it elsewhere, then claims again", async () => {
    const proxy = await tcpProxy(new URL(services.database.url));
    try {
      const fenced = await worker(proxy.url, { WORKER_TAGS: "part,part-a", WORKER_NAME_PREFIX: "fenced" });
      await scenario({
        name: "ticker",
        tag: "part",
        proxy,
        fenced,
        startDirect: () =>
          worker(services.database.url, { WORKER_TAGS: "part", WORKER_NAME_PREFIX: "direct" }),
        fencedLine: /FENCED: no heartbeat reached the database/,
        recoveredLine: "the database answers again",
      });
      // It claims again: a job only it serves.
      await deployScript(services, membership, {
        path: "u/t/after",
        language: "bash",
        tag: "part-a",
        content: 'echo "claimed again"',
      });
      const later = await waitForJob(
        services,
        membership,
        await runScriptByPath(services, membership, "u/t/after", {}),
        20_000,
      );
      assert.equal(later.status, "success", later.logs);
      assert.equal(later.result, "claimed again");
      assert.match(later.workerName ?? "", /^fenced-/);
    } finally {
      await proxy.close();
    }
  });

  /** Cut until the worker behind the proxy fences, then restored before the zombie timeout. */
  async function shortOutage(options: {
    name: string;
    tag: string;
    proxy: Awaited<ReturnType<typeof tcpProxy>>;
    fenced: TestWorker;
  }): Promise<void> {
    const { proxy, fenced } = options;
    const file = path.join(dir, "ticks", options.name);
    const id = await runTicker(options.name, options.tag, file, 5);
    const deadline = Date.now() + 15_000;
    while (ticks(file).length < 3) {
      assert.ok(Date.now() < deadline, `the job started:\n${fenced.output()}`);
      await sleep(50);
    }
    const first = ticks(file)[0]!.run;
    proxy.cut();
    while (!fenced.output().includes("FENCED")) {
      assert.ok(Date.now() < deadline + 10_000, `the worker fenced:\n${fenced.output()}`);
      await sleep(50);
    }
    // Back well before ZOMBIE_JOB_TIMEOUT: no zombie monitor runs here anyway.
    const restoredAt = Date.now();
    proxy.restore();
    const job = await waitForJob(services, membership, id, 20_000);
    assert.equal(job.status, "success", `${job.logs}\n${fenced.output()}`);
    const runs = ticks(file);
    assert.ok(runs.filter((tick) => tick.run === first).every((tick) => tick.at < restoredAt));
    assert.equal(runs.filter((tick) => tick.run !== first).length, 5);
    assert.match(job.logs, /fenced itself .* \(zombie restart 1 of 3\)/);
    assert.equal(job.logs.match(/finished by/g)?.length, 1, job.logs);
  }

  it("back before the zombie monitor acted: the fenced worker puts its job back itself, as a zombie restart", async () => {
    const proxy = await tcpProxy(new URL(services.database.url));
    try {
      const fenced = await worker(proxy.url, { WORKER_TAGS: "part-short", WORKER_NAME_PREFIX: "short" });
      await shortOutage({ name: "short", tag: "part-short", proxy, fenced });
    } finally {
      await proxy.close();
    }
  });

  /** An agent token for `tag` (the test API is started on first use). */
  async function agentToken(tag: string): Promise<string> {
    process.env.SUPERADMIN_SECRET = SUPERADMIN_SECRET;
    api ??= await startTestApi(services.database.url, KEY);
    const created = await fetch(`${api.url}/api/agent_workers/create_agent_token`, {
      method: "POST",
      headers: { authorization: `Bearer ${SUPERADMIN_SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ worker_group: "edge", tags: [tag], exp: Math.floor(Date.now() / 1000) + 3600 }),
    });
    assert.equal(created.status, 200, await created.clone().text());
    return created.text();
  }

  it("an agent cut off from its server does the same", async () => {
    const token = await agentToken("part_agent");
    const proxy = await tcpProxy(new URL(api!.url));
    try {
      const agent = await startTestAgent(proxy.url, token, {
        ...jobEnv(),
        AGENT_POLL_MS: "100",
      });
      workers.push(agent);
      await scenario({
        name: "agent_ticker",
        tag: "part_agent",
        proxy,
        fenced: agent,
        startDirect: () =>
          worker(services.database.url, { WORKER_TAGS: "part_agent", WORKER_NAME_PREFIX: "direct-agent" }),
        fencedLine: /FENCED: no ping answered by the server/,
        recoveredLine: "the server answers again",
      });
    } finally {
      await proxy.close();
    }
  });

  it("an agent back before the zombie monitor acted: the server puts its fenced job back, as a zombie restart", async () => {
    const token = await agentToken("part_agent_short");
    const proxy = await tcpProxy(new URL(api!.url));
    try {
      const agent = await startTestAgent(proxy.url, token, { ...jobEnv(), AGENT_POLL_MS: "100" });
      workers.push(agent);
      await shortOutage({ name: "agent_short", tag: "part_agent_short", proxy, fenced: agent });
    } finally {
      await proxy.close();
    }
  });
});
