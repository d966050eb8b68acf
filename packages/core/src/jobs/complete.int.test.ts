import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createPool, withTransaction } from "@millrace/db";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import type { Membership } from "../membership.ts";
import { CLAIM_PAUSE_LOCK_SQL, claimJobs } from "./claim.ts";
import { completeJobs, type JobOutcome } from "./complete.ts";
import { enqueueJobs, markHandOvers, noopJob, offerSlots, type EnqueueInput } from "./enqueue.ts";
import { JOB_DONE_CHANNEL, type NotifiedOutcome } from "./events.ts";
import { waitForResult } from "./wait.ts";
import { requeueAbandonedJobs } from "../maintenance/zombies.ts";

let services: TestServices;
let member: Membership;

function job(tag: string): EnqueueInput {
  return noopJob(member.workspace.id, tag, {}, "alice");
}

/** Enqueues jobs on `tag`, listens for their completion, claims and completes them with `outcomes`. */
async function completeAll(tag: string, outcomes: JobOutcome[]) {
  const ids = await enqueueJobs(
    services.pool,
    services.boss,
    outcomes.map(() => job(tag)),
  );
  const heard = listen(ids);
  const claimed = await claimJobs(
    services.pool,
    services.boss,
    tag,
    ids.map((_, i) => `w${i}`),
  );
  const byId = new Map(claimed.map((c) => [c.id, c]));
  await completeJobs(
    services.pool,
    services.boss,
    ids.map((id, i) => ({ job: byId.get(id)!, outcome: outcomes[i]!, pendingLog: "" })),
  );
  await until(() => heard.size === ids.length);
  return { ids, heard };
}

function listen(ids: string[]): Map<string, NotifiedOutcome | null> {
  const heard = new Map<string, NotifiedOutcome | null>();
  for (const id of ids) services.events.on(JOB_DONE_CHANNEL, id, (_, outcome) => heard.set(id, outcome));
  return heard;
}

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("enqueue and completion", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership: member } = await createTestMember(services, "complete-ws"));
  });
  after(() => services.close());

  it("writes a job, its pg-boss dispatch and its audit entry together, on one tag or several", async () => {
    const [single] = await enqueueJobs(services.pool, services.boss, [
      {
        ...job("complete-one"),
        audit: {
          actor: member.principal,
          entry: { workspaceId: member.workspace.id, operation: "jobs.run.test", resource: "x" },
        },
      },
    ]);
    const several = await enqueueJobs(services.pool, services.boss, [job("complete-a"), job("complete-b")]);
    for (const id of [single!, ...several]) {
      const { rows } = await services.pool.query(
        "SELECT j.status, b.id AS boss_id FROM job j JOIN pgboss.job b ON b.id = j.boss_job_id WHERE j.id = $1",
        [id],
      );
      assert.equal(rows.length, 1, "the job and its dispatch exist");
      assert.equal(rows[0].status, "queued");
    }
    const { rows: audit } = await services.pool.query(
      "SELECT parameters FROM audit_log WHERE operation = 'jobs.run.test'",
    );
    assert.deepEqual(
      audit.map((row) => row.parameters.job_id),
      [single],
    );
  });

  it("commits an awaited run without waiting for a WAL flush, and only that statement", async () => {
    // One connection, so that its own WAL fsyncs can be counted (pg_stat_io per backend).
    const single = createPool(services.database.url, { max: 1 });
    try {
      const fsyncs = async () => {
        const { rows } = await single.query(
          "SELECT coalesce(sum(fsyncs), 0)::int AS n FROM pg_stat_get_backend_io(pg_backend_pid()) WHERE object = 'wal'",
        );
        return rows[0].n as number;
      };
      const flushesOf = async (awaited: boolean) => {
        const before = await fsyncs();
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          // The backend's I/O counts reach the shared statistics when it goes idle after this.
          await single.query("SELECT pg_stat_force_next_flush()");
          ids.push(...(await enqueueJobs(single, services.boss, [job("complete-awaited")], { awaited })));
        }
        await single.query("SELECT pg_stat_force_next_flush()");
        await single.query("SELECT 1");
        const { rows } = await single.query("SELECT count(*)::int AS n FROM job WHERE id = ANY($1)", [ids]);
        assert.equal(rows[0].n, 5, "the jobs were written either way");
        return (await fsyncs()) - before;
      };
      assert.ok((await flushesOf(false)) > 0, "a plain enqueue waits for its WAL to be flushed");
      assert.equal(await flushesOf(true), 0, "an awaited one does not");
      const { rows } = await single.query("SHOW synchronous_commit");
      assert.equal(rows[0].synchronous_commit, "on", "the connection's later statements commit durably");
    } finally {
      await single.end();
    }
  });

  it("hands a job enqueued in a transaction to an offered slot: written running, its token bounded as a claim's", async () => {
    const tag = "complete-handover";
    const stepJob: EnqueueInput = {
      ...job(tag),
      kind: "flowscript",
      permissionedAs: `u/${member.principal.username}`,
      createdBy: member.principal.username,
      boundedBy: ["someone-else"],
    };
    const { ids, slots } = await withTransaction(services.pool, async (client) => {
      const offer = offerSlots(client, [
        { workerName: "w-other", tags: ["not-this-tag"] },
        { workerName: "w-slot", tags: [tag] },
      ]);
      try {
        // Two jobs for one matching slot: the first is handed over, the second is queued.
        const ids = await enqueueJobs(services.pool, services.boss, [stepJob, stepJob], {
          transaction: client,
        });
        return { ids, slots: offer.slots };
      } finally {
        offer.stop();
      }
    });
    assert.equal(slots[0]!.job, null, "a slot of other tags takes nothing");
    const handed = slots[1]!.job!;
    assert.equal(handed.id, ids[0]);
    assert.equal(handed.workerName, "w-slot");
    assert.match(handed.callbackToken ?? "", /^jt_/);
    const { rows } = await services.pool.query(
      `SELECT j.id, j.status, j.worker_name, b.id AS dispatch FROM job j LEFT JOIN pgboss.job b ON b.id = j.boss_job_id
        WHERE j.id = ANY($1) ORDER BY j.id = $2 DESC`,
      [ids, ids[0]],
    );
    assert.deepEqual(
      rows.map((row) => [row.status, row.worker_name, row.dispatch !== null]),
      [
        ["running", "w-slot", false],
        ["queued", null, true],
      ],
      "the handed job runs without a dispatch; the other waits in the queue",
    );
    // Its token acts within the job's bounds, as a token issued by a claim does.
    const { rows: tokens } = await services.pool.query(
      "SELECT bounded_by FROM api_token WHERE kind = 'job' AND label = $1",
      [`job ${ids[0]}`],
    );
    assert.deepEqual(tokens[0]?.bounded_by, ["someone-else"]);
    await completeJobs(services.pool, services.boss, [
      { job: handed, outcome: { status: "success", result: 1 }, pendingLog: "" },
    ]);
    const { rows: done } = await services.pool.query("SELECT status FROM job WHERE id = $1", [ids[0]]);
    assert.equal(done[0].status, "success", "the slot completes it as its claim");
  });

  it("a hand-over rolled back to a savepoint frees its slot; while claims are paused, nothing is handed over", async () => {
    const tag = "complete-handover-undo";
    await withTransaction(services.pool, async (client) => {
      const offer = offerSlots(client, [{ workerName: "w-slot", tags: [tag] }]);
      const handed = () => offer.slots[0]!.job;
      await client.query("SAVEPOINT s");
      const undo = markHandOvers(client);
      const [rolledBack] = await enqueueJobs(services.pool, services.boss, [job(tag)], {
        transaction: client,
      });
      assert.equal(handed()?.id, rolledBack);
      await client.query("ROLLBACK TO SAVEPOINT s");
      undo();
      assert.equal(handed(), null, "the slot is free again");
      const [kept] = await enqueueJobs(services.pool, services.boss, [job(tag)], { transaction: client });
      assert.equal(handed()?.id, kept, "and takes the next job");
      offer.stop();
    });
    // A restore holds the claim-pause lock: the job goes to the queue instead.
    const restore = await services.pool.connect();
    try {
      await restore.query("BEGIN");
      await restore.query(`SELECT pg_advisory_xact_lock(${CLAIM_PAUSE_LOCK_SQL})`);
      const { id, taken } = await withTransaction(services.pool, async (client) => {
        const offer = offerSlots(client, [{ workerName: "w-slot", tags: [tag] }]);
        const [id] = await enqueueJobs(services.pool, services.boss, [job(tag)], { transaction: client });
        offer.stop();
        return { id: id!, taken: offer.slots[0]!.job };
      });
      assert.equal(taken, null);
      const { rows } = await services.pool.query("SELECT status FROM job WHERE id = $1", [id]);
      assert.equal(rows[0].status, "queued");
    } finally {
      await restore.query("ROLLBACK");
      restore.release();
    }
  });

  it("a claim uses up the jobs' pg-boss dispatches: nothing is left to fetch or settle", async () => {
    const tag = "complete-dispatch";
    const ids = await enqueueJobs(services.pool, services.boss, [job(tag), job(tag)]);
    const claimed = await claimJobs(services.pool, services.boss, tag, ["w1", "w2", "w3"]);
    assert.deepEqual(claimed.map((c) => c.id).sort(), [...ids].sort());
    const { rows } = await services.pool.query(
      `SELECT j.status, j.boss_job_id IS NOT NULL AS dispatched, b.state
         FROM job j LEFT JOIN pgboss.job b ON b.id = j.boss_job_id WHERE j.id = ANY($1)`,
      [ids],
    );
    assert.deepEqual(
      rows.map((row) => [row.status, row.dispatched, row.state]),
      [
        ["running", true, null],
        ["running", true, null],
      ],
      "the jobs run and their pg-boss jobs are gone",
    );
    assert.deepEqual(
      await claimJobs(services.pool, services.boss, tag, ["w4"]),
      [],
      "nothing to fetch again",
    );
    await completeJobs(
      services.pool,
      services.boss,
      claimed.map((c) => ({ job: c, outcome: { status: "success", result: null }, pendingLog: "" })),
    );
    const { rows: done } = await services.pool.query("SELECT status FROM job WHERE id = ANY($1)", [ids]);
    assert.deepEqual(
      done.map((row) => row.status),
      ["success", "success"],
    );
  });

  it("notifies completions with their outcome when it is small, as stored", async () => {
    const large = "x".repeat(2000);
    const outcomes: JobOutcome[] = [
      { status: "success", result: { b: 1, a: [1, 2] } },
      { status: "failure", result: { error: { name: "Error", message: "boom" } } },
      { status: "success", result: large },
    ];
    const { ids, heard } = await completeAll("complete-notify", outcomes);
    assert.deepEqual(heard.get(ids[0]!), { status: "success", result: { a: [1, 2], b: 1 } });
    assert.deepEqual(heard.get(ids[1]!), outcomes[1]);
    assert.equal(heard.get(ids[2]!), null, "a large result is read from the row instead");
    // Whatever the notification carried, the waiter answers what the row holds.
    for (const [i, id] of ids.entries()) {
      assert.deepEqual(await waitForResult(services, member, id, 1000), {
        status: outcomes[i]!.status,
        result: outcomes[i]!.result,
      });
    }
  });

  it("splits many completions into notifications PostgreSQL accepts", async () => {
    // ~900 bytes per line: a payload of them all would be far over the 8000-byte limit.
    const outcomes: JobOutcome[] = Array.from({ length: 40 }, (_, i) => ({
      status: "success",
      result: `${i}:${"y".repeat(880)}`,
    }));
    const { ids, heard } = await completeAll("complete-many", outcomes);
    for (const [i, id] of ids.entries()) assert.deepEqual(heard.get(id), outcomes[i]);
  });

  it("answers a waiter from the notification of a job that ends while it waits", async () => {
    const tag = "complete-wait";
    const [id] = await enqueueJobs(services.pool, services.boss, [job(tag)]);
    const waiting = waitForResult(services, member, id!, 5000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [claimed] = await claimJobs(services.pool, services.boss, tag, ["w1"]);
    await completeJobs(services.pool, services.boss, [
      { job: claimed!, outcome: { status: "success", result: [1, "two"] }, pendingLog: "" },
    ]);
    assert.deepEqual(await waiting, { status: "success", result: [1, "two"] });
  });

  it("a stale completion (the job was put back meanwhile) writes neither outcome nor output", async () => {
    const [id] = await enqueueJobs(services.pool, services.boss, [job("complete-stale")]);
    const [first] = await claimJobs(services.pool, services.boss, "complete-stale", ["fenced-1"]);
    assert.equal(first?.id, id);
    // What the zombie monitor (or a fenced worker once back) does: a new dispatch, counted.
    await requeueAbandonedJobs(
      services.pool,
      services.boss,
      [{ id: id!, bossJobId: first!.bossJobId, workerName: "fenced-1" }],
      "fenced itself",
      { restart: true },
    );
    const [rerun] = await claimJobs(services.pool, services.boss, "complete-stale", ["other-1"]);
    assert.equal(rerun?.id, id);
    assert.notEqual(rerun!.bossJobId, first!.bossJobId);
    const logOf = async () =>
      (await services.pool.query<{ logs: string }>("SELECT logs FROM job_log WHERE job_id = $1", [id]))
        .rows[0]?.logs ?? "";
    const before = await logOf();
    assert.match(before, /zombie restart 1 of 3/);
    await completeJobs(services.pool, services.boss, [
      { job: first!, outcome: { status: "success", result: "stale" }, pendingLog: "stale output\n" },
    ]);
    const { rows } = await services.pool.query<{ status: string; zombie_restarts: number }>(
      "SELECT status, zombie_restarts FROM job WHERE id = $1",
      [id],
    );
    assert.deepEqual(rows[0], { status: "running", zombie_restarts: 1 });
    assert.equal(await logOf(), before);
    await completeJobs(services.pool, services.boss, [
      { job: rerun!, outcome: { status: "success", result: "rerun" }, pendingLog: "rerun output\n" },
    ]);
    const done = await services.pool.query<{ status: string; result: unknown }>(
      "SELECT status, result FROM job WHERE id = $1",
      [id],
    );
    assert.deepEqual(done.rows[0], { status: "success", result: "rerun" });
    assert.match(await logOf(), /rerun output/);
    assert.doesNotMatch(await logOf(), /stale output/);
  });
});
