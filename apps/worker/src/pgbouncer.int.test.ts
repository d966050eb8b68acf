// PgBouncer 1.18 in transaction mode in front of a server and a worker (issue 38 item 1). The
// test starts Debian's PgBouncer with the pgbouncer.ini that docs/operations.md gives: the
// `millrace` database in transaction mode (a pool of 3 server connections, so that consecutive
// statements of one client land on different ones) and `millrace_session` in session mode for
// DATABASE_URL_DIRECT. Then, as a client from outside: scripts, a flow with an approval, a
// schedule, a job's log over SSE and git sync all work, and PgBouncer's own counters show that
// the traffic went through its transaction pool.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { createApiToken, createUser, createWorkspace, principalOf } from "@millrace/core";
import { createDb, createPool } from "@millrace/db";
import { createTestDatabase, type TestDatabase } from "@millrace/db/testing";
import { startTestGitRemote, type TestGitRemote } from "@millrace/sync/testing/git-remote";
import { freePort, startTestServer, startTestWorker, type TestServer, type TestWorker } from "./testing.ts";

const KEY = "pgbouncer-test-instance-key-0123456789abcdef";
const PGBOUNCER = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((file) => fs.existsSync(file));

/** The pgbouncer.ini of docs/operations.md, with this test's ports and files. */
function pgbouncerIni(dir: string, pgPort: number, dbname: string, port: number): string {
  return `[databases]
millrace = host=127.0.0.1 port=${pgPort} dbname=${dbname} pool_mode=transaction timezone=UTC
millrace_session = host=127.0.0.1 port=${pgPort} dbname=${dbname} pool_mode=session pool_size=20 timezone=UTC

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = md5
auth_file = ${dir}/userlist.txt
admin_users = postgres
pool_mode = transaction
default_pool_size = 3
max_client_conn = 500
ignore_startup_parameters = extra_float_digits,options
logfile = ${dir}/pgbouncer.log
pidfile = ${dir}/pgbouncer.pid
`;
}

describe("servers and workers through PgBouncer in transaction mode", () => {
  let dir: string;
  let database: TestDatabase;
  let bouncer: ChildProcess;
  let bouncerPort: number;
  let pooledUrl: string;
  let server: TestServer;
  let worker: TestWorker;
  let remote: TestGitRemote;
  let token: string;
  let passed = false;

  before(async () => {
    assert.ok(PGBOUNCER, "PgBouncer is installed (apt-get install pgbouncer)");
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-pgbouncer-"));
    fs.chmodSync(dir, 0o777);
    // A fresh database of the test cluster, behind the PgBouncer this test starts.
    database = await createTestDatabase();
    const direct = new URL(database.url);
    const password = decodeURIComponent(direct.password);
    bouncerPort = await freePort();
    fs.writeFileSync(
      path.join(dir, "userlist.txt"),
      `"${decodeURIComponent(direct.username)}" "${password}"\n`,
      {
        mode: 0o644,
      },
    );
    fs.writeFileSync(
      path.join(dir, "pgbouncer.ini"),
      pgbouncerIni(dir, Number(direct.port), database.name, bouncerPort),
      { mode: 0o644 },
    );
    // PgBouncer refuses to run as root.
    const command = process.getuid?.() === 0 ? "runuser" : PGBOUNCER!;
    const args = [path.join(dir, "pgbouncer.ini")];
    bouncer = spawn(
      command,
      process.getuid?.() === 0 ? ["-u", "postgres", "--", PGBOUNCER!, ...args] : args,
      {
        stdio: "ignore",
      },
    );
    const base = `postgresql://${direct.username}:${direct.password}@127.0.0.1:${bouncerPort}`;
    pooledUrl = `${base}/millrace?pgbouncer=true`;
    const sessionUrl = `${base}/millrace_session`;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const probe = new pg.Client({ connectionString: sessionUrl });
      try {
        await probe.connect();
        await probe.end();
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    // Written through the transaction pool, as everything below.
    const pool = createPool(pooledUrl, { max: 2 });
    const ctx = { pool, db: createDb(pool) };
    const user = await createUser(ctx, { email: "bouncer@example.com", password: "bouncer-password-1" });
    await createWorkspace(ctx as never, principalOf(user), { id: "pgb", name: "pgb" });
    token = await createApiToken(ctx, principalOf(user), { label: "pgbouncer" });
    await pool.end();

    remote = await startTestGitRemote();
    const env = { DATABASE_URL_DIRECT: sessionUrl, MILLRACE_SECRET_KEY: KEY };
    server = await startTestServer({
      ...env,
      DATABASE_URL: pooledUrl,
      SERVER_BACKGROUND: "true",
    });
    worker = await startTestWorker(pooledUrl, { ...env, BASE_INTERNAL_URL: server.url, NUM_WORKERS: "2" });
  });

  after(async () => {
    if (!passed) {
      console.log(`server:\n${server?.output().slice(-5000)}\nworker:\n${worker?.output().slice(-5000)}`);
      if (dir && fs.existsSync(path.join(dir, "pgbouncer.log")))
        console.log(`pgbouncer:\n${fs.readFileSync(path.join(dir, "pgbouncer.log"), "utf8").slice(-3000)}`);
    }
    await worker?.stop();
    await server?.stop();
    await remote?.close();
    bouncer?.kill("SIGTERM");
    if (bouncer && bouncer.exitCode === null) await new Promise((resolve) => bouncer.once("exit", resolve));
    await database?.drop().catch(() => {});
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${server.url}/api/w/pgb/${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    assert.ok(response.status < 300, `${method} ${route}: ${response.status} ${text}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  };

  async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, ms = 20_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await check();
      if (value) return value;
      assert.ok(Date.now() < deadline, `${what}: not within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it("scripts, flows with an approval, schedules, SSE logs and git sync work", async () => {
    // A script, deployed and run by path, its result waited for (claim, completion, result).
    await call("POST", "scripts/create", {
      path: "f/demo/hello",
      summary: "",
      description: "",
      language: "bash",
      content: 'name="$1"\necho "hello $name"',
    });
    for (let i = 0; i < 5; i++)
      assert.equal(
        await call("POST", "jobs/run_wait_result/p/f/demo/hello", { name: `n${i}` }),
        `hello n${i}`,
      );

    // A job's log followed over SSE until it completes.
    const id = (await call("POST", "jobs/run/preview", {
      language: "bash",
      content: 'for i in 1 2 3; do echo "line $i"; sleep 0.3; done',
      args: {},
    })) as string;
    const sse = await fetch(`${server.url}/api/w/pgb/jobs_u/getupdate_sse/${id}`, {
      headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
    });
    assert.equal(sse.status, 200);
    const streamed = await sse.text();
    assert.match(streamed, /line 1[\s\S]*line 2[\s\S]*line 3/);
    assert.match(streamed, /"completed":\s*true/);

    // A flow whose second step waits for an approval, resumed by its owner.
    const flowId = (await call("POST", "jobs/run/preview_flow", {
      value: {
        modules: [
          {
            id: "a",
            value: { type: "rawscript", language: "bash", content: "echo first", input_transforms: {} },
          },
          { id: "b", value: { type: "identity" }, suspend: { required_events: 1, timeout: 60 } },
          {
            id: "c",
            value: { type: "rawscript", language: "bash", content: "echo last", input_transforms: {} },
          },
        ],
      },
      args: {},
    })) as string;
    await until("the flow waits for its approval", async () => {
      const job = (await call("GET", `jobs_u/get/${flowId}`)) as {
        flow_status?: { modules: { type: string }[] };
      };
      return job.flow_status?.modules[1]?.type === "WaitingForEvents";
    });
    await call("POST", `jobs/flow/resume/${flowId}`, { approved: true });
    const flowResult = await until("the flow completes", async () => {
      const answer = (await call("GET", `jobs_u/completed/get_result_maybe/${flowId}`)) as {
        completed: boolean;
        success?: boolean;
        result?: unknown;
      };
      return answer.completed ? answer : null;
    });
    assert.equal(flowResult.success, true, JSON.stringify(flowResult));
    assert.equal(flowResult.result, "last");

    // A schedule every second: its ticks run (the ticker's LISTEN and the leader's lock are
    // sessions on DATABASE_URL_DIRECT).
    await call("POST", "schedules/create", {
      path: "f/demo/every_second",
      schedule: "* * * * * *",
      timezone: "UTC",
      script_path: "f/demo/hello",
      is_flow: false,
      args: { name: "tick" },
      enabled: true,
    });
    await until(
      "three scheduled runs succeed",
      async () => {
        const jobs = (await call(
          "GET",
          "jobs/list?schedule_path=f/demo/every_second&success=true",
        )) as unknown[];
        return jobs.length >= 3;
      },
      30_000,
    );
    await call("POST", "schedules/setenabled/f/demo/every_second", { enabled: false });

    // Git sync: the workspace pushed to a real remote over HTTP (its lock is a transaction-level
    // advisory lock, which transaction pooling keeps on one server connection).
    await call("POST", "git_sync/settings", {
      remote_url: remote.url,
      username: remote.username,
      password: remote.password,
    });
    await call("POST", "git_sync/run");
    const files = await until(
      "the remote has the workspace's script",
      async () => {
        const commits = await remote.commits().catch(() => []);
        const all = commits.flatMap((commit) => commit.files);
        return all.some((file) => file.startsWith("f/demo/hello")) ? all : null;
      },
      30_000,
    );
    assert.ok(files.length > 0);

    // Nothing failed for want of a session: no lost prepared statement, no refused parameter.
    for (const [name, output] of [
      ["server", server.output()],
      ["worker", worker.output()],
    ] as const)
      assert.doesNotMatch(
        output,
        /prepared statement .* does not exist|unsupported startup parameter/i,
        name,
      );

    // PgBouncer's own counters: the millrace (transaction) pool carried the traffic.
    const admin = new pg.Client({
      connectionString: pooledUrl.replace("/millrace?pgbouncer=true", "/pgbouncer"),
    });
    await admin.connect();
    const stats = await admin.query<{ database: string; total_xact_count: string }>("SHOW STATS");
    await admin.end();
    const pooled = Number(stats.rows.find((row) => row.database === "millrace")?.total_xact_count ?? 0);
    console.log(`transactions through the transaction pool: ${pooled}`);
    assert.ok(pooled > 100, `PgBouncer's transaction pool carried the traffic: ${pooled} transactions`);
    passed = true;
  });
});
