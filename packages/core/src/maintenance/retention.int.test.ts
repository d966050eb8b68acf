import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import { deleteExpiredJobs } from "./retention.ts";

let services: TestServices;
const DAY = 86_400;

/** A job completed (or, for live jobs, created) `ageDays` ago, with a log row. */
async function insertJob(status: string, ageDays: number, workspace = "keep"): Promise<string> {
  const { rows } = await services.pool.query<{ id: string }>(
    `INSERT INTO job (id, workspace_id, language, tag, status, created_by, permissioned_as, created_at,
       completed_at)
     VALUES (gen_random_uuid(), $1, 'bash', 'bash', $2::job_status, 'alice', 'u/alice',
       now() - make_interval(days => $3), CASE WHEN $4 THEN now() - make_interval(days => $3) END)
     RETURNING id`,
    [workspace, status, ageDays, ["success", "failure", "canceled"].includes(status)],
  );
  const id = rows[0]!.id;
  await services.pool.query("INSERT INTO job_log (job_id, logs) VALUES ($1, 'output')", [id]);
  return id;
}

async function remaining(ids: string[]): Promise<string[]> {
  const { rows } = await services.pool.query<{ id: string }>("SELECT id FROM job WHERE id = ANY($1)", [ids]);
  return rows.map((row) => row.id).sort();
}

describe("job retention", () => {
  before(async () => {
    services = await createTestServices();
    await createTestMember(services, "keep");
    await createTestMember(services, "other");
  });
  after(() => services?.close());

  it("deletes only finished jobs past the retention, with their logs, in batches", async () => {
    const old = [
      await insertJob("success", 40),
      await insertJob("failure", 31),
      await insertJob("canceled", 35),
      await insertJob("success", 60, "other"),
      await insertJob("success", 45),
    ];
    const kept = [
      await insertJob("success", 29),
      await insertJob("failure", 1),
      await insertJob("queued", 90),
      await insertJob("running", 90),
    ];
    // A live job is never deleted, whatever its completion time says.
    const live = await insertJob("running", 90);
    await services.pool.query("UPDATE job SET completed_at = now() - interval '90 days' WHERE id = $1", [
      live,
    ]);

    const deleted = await deleteExpiredJobs(services.pool, {
      retentionSecs: 30 * DAY,
      batchSize: 2,
      pauseMs: 1,
    });
    assert.equal(deleted, old.length);
    assert.deepEqual(await remaining([...old, ...kept, live]), [...kept, live].sort());
    const { rows } = await services.pool.query("SELECT job_id FROM job_log WHERE job_id = ANY($1)", [old]);
    assert.equal(rows.length, 0, "their logs went with them");
    assert.equal(await deleteExpiredJobs(services.pool, { retentionSecs: 30 * DAY }), 0);
  });

  it("skips rows another transaction holds instead of waiting for them", async () => {
    const locked = await insertJob("success", 50);
    const free = await insertJob("failure", 50);
    const holder = await services.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM job WHERE id = $1 FOR UPDATE", [locked]);
      let timer: NodeJS.Timeout | undefined;
      const deleted = await Promise.race([
        deleteExpiredJobs(services.pool, { retentionSecs: 30 * DAY }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("blocked on a locked row")), 5000);
        }),
      ]).finally(() => clearTimeout(timer));
      assert.equal(deleted, 1);
      assert.deepEqual(await remaining([locked, free]), [locked]);
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    assert.equal(await deleteExpiredJobs(services.pool, { retentionSecs: 30 * DAY }), 1);
  });

  it("refuses a retention that would delete everything", async () => {
    await assert.rejects(deleteExpiredJobs(services.pool, { retentionSecs: 0 }), RangeError);
    await assert.rejects(deleteExpiredJobs(services.pool, { retentionSecs: Number.NaN }), RangeError);
  });
});
