// While PostgreSQL is away, a server answers 503 with Retry-After, never 500 (issue 38 item 3):
// a real cluster of the test's own is restarted under load, then its connections are exhausted
// by other clients while a fresh server starts; REST and tRPC calls, reads and submits, are
// counted by status from outside, as a client (or nginx) would see them.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { createApiToken, createUser, createWorkspace, principalOf } from "@millrace/core";
import { createDb, createPool } from "@millrace/db";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "@millrace/db/embedded";
import { migrateDeploy } from "@millrace/db/migrate";
import { freePort, startTestServer, type TestServer } from "./testing.ts";

const KEY = "database-away-test-instance-key-0123456789";

interface Tally {
  byStatus: Map<number, number>;
  /** 503 answers without a Retry-After header (there must be none). */
  withoutRetryAfter: number;
  /** Connection-level failures (the server itself gone): there must be none either. */
  transportErrors: number;
}

function tally(): Tally {
  return { byStatus: new Map(), withoutRetryAfter: 0, transportErrors: 0 };
}

const count = (t: Tally, status: number) => t.byStatus.get(status) ?? 0;

/** Calls the server in `workers` loops until `stop()`; every answer is tallied. */
function load(server: TestServer, token: string, t: Tally, workers = 4) {
  let running = true;
  const auth = { authorization: `Bearer ${token}` };
  const calls: (() => Promise<Response>)[] = [
    () => fetch(`${server.url}/api/w/away/scripts/list`, { headers: auth }),
    () =>
      fetch(`${server.url}/api/w/away/jobs/run/preview`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ language: "bash", content: "echo hi", args: {} }),
      }),
    () => fetch(`${server.url}/api/trpc/workspace.list`, { headers: auth }),
    () => fetch(`${server.url}/api/w/away/variables/list`, { headers: auth }),
  ];
  const loops = Array.from({ length: workers }, async (_, i) => {
    for (let n = i; running; n++) {
      try {
        const response = await calls[n % calls.length]!();
        await response.arrayBuffer();
        t.byStatus.set(response.status, count(t, response.status) + 1);
        if (response.status === 503 && !response.headers.get("retry-after")) t.withoutRetryAfter++;
      } catch {
        t.transportErrors++;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
  return async () => {
    running = false;
    await Promise.all(loops);
  };
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("the database away: 503 with Retry-After, never 500", () => {
  let dir: string;
  let port: number;
  let database: EmbeddedDatabase;
  let token: string;
  const servers: TestServer[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-away-"));
    port = await freePort();
    database = await startEmbeddedPostgres(path.join(dir, "pg"), { port });
    await migrateDeploy(database.url);
    const pool = createPool(database.url, { max: 2 });
    const ctx = { pool, db: createDb(pool) };
    const user = await createUser(ctx, { email: "away@example.com", password: "away-password-1" });
    await createWorkspace(ctx as never, principalOf(user), { id: "away", name: "away" });
    token = await createApiToken(ctx, principalOf(user), { label: "away" });
    await pool.end();
  });
  after(async () => {
    for (const server of servers) await server.stop();
    await database?.stop().catch(() => {});
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function server(): Promise<TestServer> {
    const started = await startTestServer({ DATABASE_URL: database.url, MILLRACE_SECRET_KEY: KEY });
    servers.push(started);
    return started;
  }
  const answers = async (s: TestServer) =>
    (await fetch(`${s.url}/api/w/away/scripts/list`, { headers: { authorization: `Bearer ${token}` } }))
      .status === 200;

  it("a PostgreSQL restart under load: 503s while it is down, then answers again, no restart of the server", async () => {
    const s = await server();
    await waitFor("the server to answer", () => answers(s));
    const t = tally();
    const stop = load(s, token, t);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await database.stop();
    // Down for about two seconds, as in the drill that saw 101 × 500.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const version = await fetch(`${s.url}/api/version`);
    assert.equal(version.status, 200, "/api/version answers while the database is down");
    database = await startEmbeddedPostgres(path.join(dir, "pg"), { port });
    await waitFor("the server to answer after the restart", () => answers(s));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await stop();
    const summary = JSON.stringify(Object.fromEntries(t.byStatus));
    if (count(t, 500) > 0) fs.writeFileSync("/tmp/database-away-server.log", s.output());
    assert.equal(count(t, 500), 0, `no 500: ${summary}\n${s.output()}`);
    assert.ok(count(t, 503) > 0, `503s while the database was down: ${summary}`);
    assert.equal(t.withoutRetryAfter, 0, "every 503 says when to retry");
    assert.equal(t.transportErrors, 0, "the server itself stayed up");
    assert.ok(count(t, 200) + count(t, 201) > 0, summary);
  });

  it("connections exhausted by other clients: a server starting then answers 503, and serves once they are freed", async () => {
    // Take every connection the cluster has left.
    const hogs: pg.Client[] = [];
    for (;;) {
      const client = new pg.Client({ connectionString: database.url });
      try {
        await client.connect();
        hogs.push(client);
      } catch (error) {
        assert.equal((error as { code?: string }).code, "53300", `${(error as Error).message}`);
        break;
      }
      assert.ok(hogs.length < 1000, "max_connections is reached");
    }
    try {
      const s = await server();
      const t = tally();
      const stop = load(s, token, t);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const version = await fetch(`${s.url}/api/version`);
      await stop();
      assert.equal(version.status, 200, "/api/version answers without a database connection");
      const summary = JSON.stringify(Object.fromEntries(t.byStatus));
      if (count(t, 500) > 0) fs.writeFileSync("/tmp/database-away-server2.log", s.output());
      assert.equal(count(t, 500), 0, `no 500: ${summary}\n${s.output()}`);
      assert.ok(count(t, 503) > 0, `503s while no connection is free: ${summary}`);
      assert.equal(t.withoutRetryAfter, 0);
      const message = await (
        await fetch(`${s.url}/api/w/away/scripts/list`, { headers: { authorization: `Bearer ${token}` } })
      ).text();
      assert.match(message, /database is unavailable/);
      await Promise.all(hogs.splice(0).map((client) => client.end()));
      await waitFor("the server to answer once connections are free", () => answers(s));
    } finally {
      await Promise.all(hogs.map((client) => client.end().catch(() => {})));
    }
  });
});
