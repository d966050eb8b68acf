// Issue 34 item 2: a backup taken while a flow waits for an approval brings the flow back waiting,
// after DROP DATABASE and `millrace backup restore --yes`: no worker claims the flow run as a
// script (which failed it and then crashed the worker at its sandbox refill), the approval then
// resumes it to the end. And a job row a worker cannot run fails with the reason while the worker
// goes on.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import {
  createFlow,
  noopJob,
  enqueueJob,
  redispatchJob,
  requireMembership,
  resumeSuspendedFlowAsOwner,
  runFlowByPath,
  startBoss,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createDb, createPool, withTransaction } from "@millrace/db";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "@millrace/worker/testing";
import { runCli } from "./testing.ts";

const KEY = "backup-flows-instance-key-0123456789abcdef";
const adminUrl = () => process.env.MILLRACE_TEST_ADMIN_URL!;

let services: TestServices;
let membership: Membership;
let worker: TestWorker | null = null;
let dir: string;

async function rows<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

const bash = (id: string, content: string) => ({
  id,
  value: { type: "rawscript", language: "bash", content, input_transforms: {} },
});

async function waitUntil(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}\n${worker?.output() ?? ""}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a restore keeps flows as they were", () => {
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-backup-flows-"));
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "bflows"));
  });
  after(async () => {
    await worker?.stop();
    await services?.close().catch(() => services.database.drop());
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a flow waiting for approval at backup time waits again after the restore, then finishes", async () => {
    const url = services.database.url;
    const me = membership.principal.username;
    worker = await startTestWorker(url, { MILLRACE_SECRET_KEY: KEY });
    await createFlow(services, membership, {
      path: `u/${me}/approve_me`,
      summary: "",
      value: {
        modules: [
          bash("before", "echo before-approval"),
          { id: "gate", value: { type: "identity" }, suspend: { required_events: 1 } },
          bash("after", "echo '\"after-approval\"' > result.json"),
        ],
      },
    });
    const flowId = await runFlowByPath(services, membership, `u/${me}/approve_me`, {});
    const flowState = () =>
      rows<{ status: string; flow_status: { _engine?: { suspended?: unknown } } }>(
        url,
        "SELECT status::text AS status, flow_status FROM job WHERE id = $1",
        [flowId],
      ).then((r) => r[0]!);
    await waitUntil(
      "the flow waits for its approval",
      async () => !!(await flowState()).flow_status._engine?.suspended,
    );
    const snapshot = () =>
      rows(
        url,
        "SELECT id, kind, status::text AS status, flow_status, boss_job_id IS NULL AS undispatched FROM job ORDER BY id",
      );
    const before = await snapshot();

    const file = path.join(dir, "waiting.backup");
    const created = await runCli(["backup", "create", "--out", file, "--json"], { DATABASE_URL: url });
    assert.equal(created.code, 0, created.stderr);
    await worker.stop();
    worker = null;
    await services.boss.stop({ graceful: false, close: true, timeout: 2000 }).catch(() => {});
    await services.events.close();
    await services.pool.end();
    await rows(adminUrl(), `DROP DATABASE "${services.database.name}" WITH (FORCE)`);

    const restored = await runCli(["backup", "restore", file, "--yes", "--json"], { DATABASE_URL: url });
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal((JSON.parse(restored.stdout) as { jobsRedispatched: number }).jobsRedispatched, 0);
    assert.deepEqual(await snapshot(), before, "every job row as it was at backup time");

    // A worker on the restored database leaves the flow alone, and stays up.
    worker = await startTestWorker(url, { MILLRACE_SECRET_KEY: KEY });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const waiting = await flowState();
    assert.equal(waiting.status, "running");
    assert.ok(waiting.flow_status._engine?.suspended, "still waiting for its approval");
    assert.equal(worker.process.exitCode, null, worker.output());
    assert.doesNotMatch(worker.output(), /TypeError/);

    const pool = createPool(url, { max: 3 });
    const boss = await startBoss(url, "server");
    try {
      const ctx = { db: createDb(pool), pool, boss, events: services.events, limits: services.limits };
      const restoredMember = await requireMembership(ctx, membership.principal, "bflows");
      await resumeSuspendedFlowAsOwner(ctx, restoredMember, flowId, { ok: true });
      await waitUntil("the flow ends", async () => (await flowState()).status !== "running");
      const [done] = await rows<{ status: string; result: unknown }>(
        url,
        "SELECT status::text AS status, result FROM job WHERE id = $1",
        [flowId],
      );
      assert.deepEqual(done, { status: "success", result: "after-approval" }, worker.output());
    } finally {
      await boss.stop({ graceful: false, close: true, timeout: 2000 }).catch(() => {});
      await pool.end();
    }
  });
});

describe("a job row a worker cannot run", () => {
  let fresh: TestServices;
  let member: Membership;
  before(async () => {
    fresh = await createTestServices();
    ({ membership: member } = await createTestMember(fresh, "badrows"));
  });
  after(async () => {
    await worker?.stop();
    worker = null;
    await fresh?.close();
  });

  it("fails with the reason, and the worker runs the next job", async () => {
    worker = await startTestWorker(fresh.database.url, { MILLRACE_SECRET_KEY: KEY });
    const me = member.principal.username;
    const odd = await enqueueJob(fresh.pool, fresh.boss, noopJob("badrows", "bash", {}, me));
    await waitForJob(fresh, member, odd, 20_000);
    // The row as a newer server, a hand edit or a broken import could leave it.
    await withTransaction(fresh.pool, async (client) => {
      await client.query(
        "UPDATE job SET kind = 'script', language = 'cobol', content = NULL, status = 'queued' WHERE id = $1",
        [odd],
      );
      await redispatchJob(
        client,
        fresh.boss,
        { id: odd, tag: "bash", priority: 0, timeoutSecs: 10 },
        new Date(),
      );
    });
    const failed = await waitForJob(fresh, member, odd, 20_000);
    assert.equal(failed.status, "failure");
    assert.match(JSON.stringify(failed.result), /UnsupportedLanguage.*cobol/);
    const next = await enqueueJob(fresh.pool, fresh.boss, noopJob("badrows", "bash", { n: 2 }, me));
    assert.equal((await waitForJob(fresh, member, next, 20_000)).status, "success");
    assert.equal(worker.process.exitCode, null, worker.output());
  });
});
