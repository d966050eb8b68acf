// Failover without a DNS switch (issue 38 item 2): a primary and a streaming replica
// (`pg_basebackup -R`, Debian's PostgreSQL binaries, both started here), a server and a worker
// given libpq's multi-host DATABASE_URL. The replica is promoted and the primary stopped: jobs
// queued before complete, new ones run, and neither process is restarted.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { createApiToken, createUser, createWorkspace, principalOf } from "@millrace/core";
import { createDb, createPool } from "@millrace/db";
import { migrateDeploy } from "@millrace/db/migrate";
import { freePort, startTestServer, startTestWorker, type TestServer, type TestWorker } from "./testing.ts";

const KEY = "failover-test-instance-key-0123456789abcdef";
const BIN = fs.existsSync("/usr/lib/postgresql")
  ? path.join("/usr/lib/postgresql", fs.readdirSync("/usr/lib/postgresql").sort().at(-1)!, "bin")
  : "";

/** Runs a PostgreSQL binary as the `postgres` user (the server refuses to run as root). */
function asPostgres(binary: string, args: string[]): string {
  const command = path.join(BIN, binary);
  return process.getuid?.() === 0
    ? execFileSync("runuser", ["-u", "postgres", "--", command, ...args], { encoding: "utf8" })
    : execFileSync(command, args, { encoding: "utf8" });
}

describe("failover to a promoted replica behind a multi-host DATABASE_URL", () => {
  let dir: string;
  let primaryPort: number;
  let replicaPort: number;
  let primaryDir: string;
  let replicaDir: string;
  let url: string;
  let token: string;
  let server: TestServer;
  let worker: TestWorker;

  const pgCtl = (dataDir: string, ...args: string[]) => asPostgres("pg_ctl", ["-D", dataDir, "-w", ...args]);
  const start = (dataDir: string, port: number) =>
    pgCtl(
      dataDir,
      "-l",
      `${dataDir}.log`,
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
      "start",
    );

  before(async () => {
    assert.ok(BIN, "Debian's PostgreSQL binaries (apt-get install postgresql) are installed");
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-failover-"));
    fs.chmodSync(dir, 0o777);
    if (process.getuid?.() === 0) execFileSync("chown", ["postgres", dir]);
    primaryDir = path.join(dir, "primary");
    replicaDir = path.join(dir, "replica");
    [primaryPort, replicaPort] = [await freePort(), await freePort()];
    asPostgres("initdb", [
      "-D",
      primaryDir,
      "-U",
      "postgres",
      "--auth=trust",
      "--encoding=UTF8",
      "--locale=C",
    ]);
    start(primaryDir, primaryPort);
    const admin = new pg.Client({
      connectionString: `postgresql://postgres@127.0.0.1:${primaryPort}/postgres`,
    });
    await admin.connect();
    await admin.query("CREATE DATABASE millrace");
    await admin.end();
    const primaryUrl = `postgresql://postgres@127.0.0.1:${primaryPort}/millrace`;
    await migrateDeploy(primaryUrl);
    asPostgres("pg_basebackup", [
      "-h",
      "127.0.0.1",
      "-p",
      String(primaryPort),
      "-U",
      "postgres",
      "-D",
      replicaDir,
      "-R",
      "-X",
      "stream",
      // Without it pg_basebackup waits for a spread checkpoint (about 100 s here).
      "--checkpoint=fast",
    ]);
    start(replicaDir, replicaPort);
    url = `postgresql://postgres@127.0.0.1:${primaryPort},127.0.0.1:${replicaPort}/millrace?target_session_attrs=read-write`;

    // Written through the multi-host URL: it must find the primary (listed first here).
    const pool = createPool(url, { max: 2 });
    const ctx = { pool, db: createDb(pool) };
    const user = await createUser(ctx, { email: "failover@example.com", password: "failover-password-1" });
    await createWorkspace(ctx as never, principalOf(user), { id: "fo", name: "fo" });
    token = await createApiToken(ctx, principalOf(user), { label: "failover" });
    await pool.end();

    server = await startTestServer({ DATABASE_URL: url, MILLRACE_SECRET_KEY: KEY });
    worker = await startTestWorker(url, { MILLRACE_SECRET_KEY: KEY, BASE_INTERNAL_URL: server.url });
  });
  after(async () => {
    await worker?.stop();
    await server?.stop();
    for (const dataDir of [replicaDir, primaryDir]) {
      try {
        if (dataDir && fs.existsSync(path.join(dataDir, "postmaster.pid")))
          pgCtl(dataDir, "-m", "immediate", "stop");
      } catch {
        // already stopped
      }
    }
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const call = (method: string, route: string, body?: unknown) =>
    fetch(`${server.url}/api/w/fo/${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  /** Submits a preview job; during the failover a 503 is asked again, as a client would. */
  async function submit(n: number): Promise<string> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const response = await call("POST", "jobs/run/preview", {
        language: "bash",
        content: `sleep 0.5; echo "job ${n}"`,
        args: {},
      });
      if (response.status === 201) return response.text();
      assert.equal(response.status, 503, await response.text());
      assert.ok(Date.now() < deadline, "the server took a submit again within 30 s");
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  async function completed(id: string): Promise<boolean> {
    const response = await call("GET", `jobs_u/completed/get_result_maybe/${id}`);
    if (response.status !== 200) return false;
    const answer = (await response.json()) as { completed: boolean; success?: boolean };
    return answer.completed && answer.success === true;
  }

  it("jobs queued before complete, new ones run, no process restarted", async () => {
    const before = await Promise.all([1, 2, 3, 4, 5, 6].map(submit));
    // A planned failover: the replica has replayed what the primary wrote, then takes over.
    const primary = new pg.Client({
      connectionString: `postgresql://postgres@127.0.0.1:${primaryPort}/millrace`,
    });
    await primary.connect();
    const { rows } = await primary.query<{ lsn: string }>("SELECT pg_current_wal_lsn()::text AS lsn");
    await primary.end();
    const replica = new pg.Client({
      connectionString: `postgresql://postgres@127.0.0.1:${replicaPort}/millrace`,
    });
    await replica.connect();
    for (let i = 0; ; i++) {
      const caught = await replica.query<{ ok: boolean }>(
        "SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok",
        [rows[0]!.lsn],
      );
      if (caught.rows[0]!.ok) break;
      assert.ok(i < 100, "the replica caught up");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await replica.end();
    pgCtl(replicaDir, "promote");
    pgCtl(primaryDir, "-m", "fast", "stop");

    const afterwards = await Promise.all([7, 8, 9].map(submit));
    const deadline = Date.now() + 90_000;
    const pending = new Set([...before, ...afterwards]);
    while (pending.size > 0) {
      for (const id of [...pending]) if (await completed(id).catch(() => false)) pending.delete(id);
      if (pending.size === 0) break;
      assert.ok(
        Date.now() < deadline,
        `jobs still not completed: ${[...pending].join(", ")}\n${worker.output()}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(worker.process.exitCode, null, "the worker was not restarted");
    assert.equal(worker.process.signalCode, null);
    assert.equal((await fetch(`${server.url}/api/version`)).status, 200, "the server is the same process");
    // Each job ran once.
    const check = new pg.Client({
      connectionString: `postgresql://postgres@127.0.0.1:${replicaPort}/millrace`,
    });
    await check.connect();
    const runs = await check.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM job WHERE id = ANY($1::uuid[]) AND status = 'success'",
      [[...before, ...afterwards]],
    );
    await check.end();
    assert.equal(runs.rows[0]!.n, 9);
  });
});
