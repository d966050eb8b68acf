// The backup drill: a database with scripts, finished jobs and their logs, variables (one secret)
// and a schedule is backed up with the real CLI (a child process), dropped, restored with the
// CLI, and everything is back with the manifest's row counts. Also: a restore waits for --yes on a
// database that is not empty, and workers claim nothing while a restore holds the pause.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import {
  createKeyring,
  createSchedule,
  createVariable,
  deployScript,
  getVariableValue,
  noopJob,
  enqueueJob,
  runScriptByPath,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "@millrace/worker/testing";
import { runCli } from "./testing.ts";

const KEY = "backup-drill-instance-key-0123456789abcdef";
const SECRET = "drill-s3cr3t-value";

async function query<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

const adminUrl = () => process.env.MILLRACE_TEST_ADMIN_URL!;

let services: TestServices;
let membership: Membership;
let worker: TestWorker | null = null;
let dir: string;
let servicesOpen = true;

async function closeServices(): Promise<void> {
  if (!servicesOpen) return;
  servicesOpen = false;
  await services.boss.stop({ graceful: false, close: true, timeout: 2000 }).catch(() => {});
  await services.events.close();
  await services.pool.end();
}

describe("backup drill", () => {
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-backup-test-"));
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "drill"));
  });
  after(async () => {
    await worker?.stop();
    await closeServices().catch(() => {});
    await services?.database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("workers claim nothing while a restore holds the pause", async () => {
    worker = await startTestWorker(services.database.url, { MILLRACE_SECRET_KEY: KEY });
    const me = membership.principal.username;
    const holder = new pg.Client({ connectionString: services.database.url });
    await holder.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtext('millrace-claim-pause'))");
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const id = await enqueueJob(services.pool, services.boss, noopJob("drill", "bash", { n: 1 }, me));
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const [held] = await query<{ status: string }>(
        services.database.url,
        "SELECT status FROM job WHERE id = $1",
        [id],
      );
      assert.equal(held!.status, "queued", "no worker claimed the job during the pause");
      await holder.query("SELECT pg_advisory_unlock(hashtext('millrace-claim-pause'))");
      const done = await waitForJob(services, membership, id, 20_000);
      assert.equal(done.status, "success");
      assert.match(worker.output(), /claiming paused: a restore is running/);
      assert.match(worker.output(), /claiming resumed/);
    } finally {
      await holder.end();
    }
  });

  it("backs up with the CLI, survives DROP DATABASE, restores everything with matching counts", async () => {
    const me = membership.principal.username;
    const secrets = { ...services, secrets: createKeyring(KEY) };
    await deployScript(services, membership, {
      path: `u/${me}/greet`,
      language: "bash",
      content: 'name="$1"\necho "hello $name from the drill"',
    });
    await deployScript(services, membership, {
      path: `u/${me}/fail`,
      language: "bash",
      content: 'echo "about to fail"\nexit 3',
    });
    const ids: string[] = [];
    for (const name of ["ada", "grace", "linus"]) {
      ids.push(await runScriptByPath(services, membership, `u/${me}/greet`, { name }));
    }
    ids.push(await runScriptByPath(services, membership, `u/${me}/fail`, {}));
    for (const id of ids) await waitForJob(services, membership, id, 60_000);
    await createVariable(secrets, membership, { path: `u/${me}/plain`, value: "plain value" });
    await createVariable(secrets, membership, { path: `u/${me}/token`, value: SECRET, isSecret: true });
    await createSchedule(services, membership, {
      path: `u/${me}/nightly`,
      schedule: "0 0 3 * * *",
      timezone: "Europe/Paris",
      scriptPath: `u/${me}/greet`,
      args: { name: "night" },
    });
    await worker!.stop();
    worker = null;
    // Queued at backup time, due after the restore: pg-boss's queue is rebuilt from the job rows.
    const deferred = await runScriptByPath(
      services,
      membership,
      `u/${me}/greet`,
      { name: "later" },
      { scheduledFor: new Date(Date.now() + 3000) },
    );
    const url = services.database.url;
    const before = {
      jobs: await query<{ id: string; status: string; logs: string | null }>(
        url,
        `SELECT j.id, j.status::text AS status, (SELECT l.logs FROM job_log l WHERE l.job_id = j.id) AS logs
           FROM job j WHERE j.workspace_id = 'drill' ORDER BY j.id`,
      ),
      scripts: await query(url, "SELECT path, hash, content FROM script ORDER BY hash"),
      variables: await query(url, "SELECT path, value, is_secret FROM variable ORDER BY path"),
      schedules: await query(
        url,
        "SELECT path, schedule, timezone, args, next_run_at FROM schedule ORDER BY path",
      ),
    };
    assert.ok(before.jobs.filter((j) => j.logs?.includes("from the drill")).length >= 3, "jobs with logs");

    const file = path.join(dir, "drill.backup");
    const created = await runCli(["backup", "create", "--out", file, "--json"], { DATABASE_URL: url });
    assert.equal(created.code, 0, created.stderr);
    const summary = JSON.parse(created.stdout) as {
      file: string;
      bytes: number;
      rows: number;
      durationMs: number;
    };
    assert.equal(summary.file, file);
    assert.ok(summary.bytes > 0 && fs.statSync(file).size === summary.bytes);
    const manifest = JSON.parse(fs.readFileSync(`${file}.manifest.json`, "utf8")) as {
      tables: Record<string, number>;
      migrations: string[];
    };
    assert.equal(manifest.tables.job, before.jobs.length);
    assert.ok(manifest.migrations.length > 0);
    // Beside the dump: each workspace's sync files (the scripts' code readable as files).
    const exportDir = path.join(`${file}.workspaces`, "drill");
    const exported = fs.readdirSync(exportDir, { recursive: true, encoding: "utf8" });
    assert.ok(
      exported.some(
        (name) =>
          name.includes("greet") &&
          fs.readFileSync(path.join(exportDir, name), "utf8").includes("from the drill"),
      ),
      `the greet script among ${exported.join(", ")}`,
    );
    console.log(
      `backup create: ${summary.rows} rows, ${summary.bytes} bytes, ${summary.durationMs} ms (CLI ${created.ms} ms)`,
    );

    await closeServices();
    await query(adminUrl(), `DROP DATABASE "${services.database.name}" WITH (FORCE)`);

    const restored = await runCli(["backup", "restore", file, "--json"], { DATABASE_URL: url });
    assert.equal(restored.code, 0, restored.stderr);
    const result = JSON.parse(restored.stdout) as {
      rows: number;
      counts: Record<string, { expected: number; restored: number }>;
      jobsRedispatched: number;
      durationMs: number;
    };
    console.log(`backup restore: ${result.rows} rows, ${result.durationMs} ms (CLI ${restored.ms} ms)`);
    assert.equal(result.rows, summary.rows);
    assert.deepEqual(
      Object.fromEntries(Object.entries(result.counts).map(([t, c]) => [t, c.restored])),
      manifest.tables,
    );
    assert.equal(result.jobsRedispatched, 1, "the deferred job");

    const after = {
      jobs: await query(
        url,
        `SELECT j.id, j.status::text AS status, (SELECT l.logs FROM job_log l WHERE l.job_id = j.id) AS logs
           FROM job j WHERE j.workspace_id = 'drill' ORDER BY j.id`,
      ),
      scripts: await query(url, "SELECT path, hash, content FROM script ORDER BY hash"),
      variables: await query(url, "SELECT path, value, is_secret FROM variable ORDER BY path"),
      schedules: await query(
        url,
        "SELECT path, schedule, timezone, args, next_run_at FROM schedule ORDER BY path",
      ),
    };
    assert.deepEqual(after, before);

    // The restored instance works: the secret decrypts with the same key, the deferred job runs.
    const fresh = await import("@millrace/db");
    const pool = fresh.createPool(url, { max: 2 });
    try {
      const ctx = { db: fresh.createDb(pool), pool, secrets: createKeyring(KEY) };
      assert.equal(await getVariableValue(ctx as never, membership, `u/${me}/token`), SECRET);
      worker = await startTestWorker(url, { MILLRACE_SECRET_KEY: KEY });
      const deadline = Date.now() + 30_000;
      let status = "";
      while (Date.now() < deadline && status !== "success") {
        const rows = await pool.query<{ status: string }>(
          "SELECT status::text AS status FROM job WHERE id = $1",
          [deferred],
        );
        status = rows.rows[0]!.status;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(
        status,
        "success",
        `the job queued at backup time ran after the restore\n${worker.output()}`,
      );
    } finally {
      await pool.end();
    }

    // Not empty now: a second restore asks for --yes (exit 6), then replaces it, under the running
    // worker: it pauses, then runs the job that the backup had queued (queued again by the restore).
    const refused = await runCli(["backup", "restore", file], { DATABASE_URL: url });
    assert.equal(refused.code, 6, refused.stderr);
    assert.match(refused.stderr, /not empty/);
    assert.match(refused.stderr, /--yes/);
    const again = await runCli(["backup", "restore", file, "--yes", "--json"], { DATABASE_URL: url });
    assert.equal(again.code, 0, again.stderr);
    const [jobs] = await query<{ n: number }>(url, "SELECT count(*)::int AS n FROM job");
    assert.equal(jobs!.n, manifest.tables.job);
    assert.equal((JSON.parse(again.stdout) as { jobsRedispatched: number }).jobsRedispatched, 1);
    const rerunDeadline = Date.now() + 30_000;
    let rerun = "";
    while (Date.now() < rerunDeadline && rerun !== "success") {
      const [row] = await query<{ status: string }>(
        url,
        "SELECT status::text AS status FROM job WHERE id = $1",
        [deferred],
      );
      rerun = row!.status;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(
      rerun,
      "success",
      `the live worker ran the queued job after the restore\n${worker.output()}`,
    );
    assert.match(worker.output(), /claiming paused: a restore is running/);
    assert.match(worker.output(), /claiming resumed/);
    await worker.stop();
    worker = null;

    // A backup made by a newer Millrace (a migration this checkout lacks): refused, exit 5.
    const newer = path.join(dir, "newer.backup");
    fs.copyFileSync(file, newer);
    const newerManifest = JSON.parse(fs.readFileSync(`${file}.manifest.json`, "utf8")) as {
      migrations: string[];
    };
    newerManifest.migrations.push("29991231000000_from_the_future");
    fs.writeFileSync(`${newer}.manifest.json`, JSON.stringify(newerManifest));
    const refusedNewer = await runCli(["backup", "restore", newer, "--yes"], { DATABASE_URL: url });
    assert.equal(refusedNewer.code, 5, refusedNewer.stderr);
    assert.match(refusedNewer.stderr, /newer Millrace/);

    // A file that is no backup: exit 5; a missing one: exit 4.
    fs.writeFileSync(path.join(dir, "junk.backup"), "not gzip");
    const junk = await runCli(["backup", "restore", path.join(dir, "junk.backup"), "--yes"], {
      DATABASE_URL: url,
    });
    assert.equal(junk.code, 5, junk.stderr);
    const missing = await runCli(["backup", "restore", path.join(dir, "nope.backup")], { DATABASE_URL: url });
    assert.equal(missing.code, 4, missing.stderr);
  });
});
