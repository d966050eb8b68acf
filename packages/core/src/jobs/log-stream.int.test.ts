import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AppError } from "../errors.ts";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import type { Membership } from "../membership.ts";
import { appendJobLog } from "./claim.ts";
import { JOB_DONE_CHANNEL } from "./events.ts";
import { getJobUpdate, MAX_UPDATE_LOG_CHARS, streamJobUpdates, type JobUpdate } from "./log-stream.ts";

let services: TestServices;
let membership: Membership;
let stranger: Membership;

async function insertJob(status = "queued"): Promise<string> {
  const { rows } = await services.pool.query<{ id: string }>(
    `INSERT INTO job (id, workspace_id, script_path, language, tag, status, created_by, permissioned_as)
     VALUES (gen_random_uuid(), $1, 'f/ops/stream', 'bash', 'bash', $2::job_status, 'alice', 'u/alice')
     RETURNING id`,
    [membership.workspace.id, status],
  );
  return rows[0]!.id;
}

// What a worker does, minus pg-boss: mark running, append output (which notifies), complete.
const worker = {
  start: (id: string) =>
    services.pool.query("UPDATE job SET status = 'running', started_at = now() WHERE id = $1", [id]),
  log: (id: string, chunk: string) => appendJobLog(services.pool, id, chunk),
  complete: async (id: string, result: unknown) => {
    await services.pool.query(
      "UPDATE job SET status = 'success', result = $2, completed_at = now() WHERE id = $1",
      [id, JSON.stringify(result)],
    );
    await services.pool.query("SELECT pg_notify($1, $2)", [JOB_DONE_CHANNEL, id]);
  },
};

/** Collects a stream's updates in the background; `next(n)` waits until n have arrived. */
function collect(stream: AsyncGenerator<JobUpdate>) {
  const updates: JobUpdate[] = [];
  const waiters: (() => void)[] = [];
  const done = (async () => {
    for await (const update of stream) {
      updates.push(update);
      waiters.splice(0).forEach((wake) => wake());
    }
  })();
  const next = async (count: number, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs;
    while (updates.length < count) {
      if (Date.now() > deadline)
        assert.fail(`only ${updates.length} of ${count} updates after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return updates;
  };
  return { updates, done, next };
}

const logsOf = (updates: JobUpdate[]) => updates.map((update) => update.newLogs).join("");

// Long safety-net intervals: every update below must come from a notification.
const NOTIFY_ONLY = { pollMs: 60_000, queuedPollMs: 60_000 };

describe("job log streams", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "streams"));
    ({ membership: stranger } = await createTestMember(services, "elsewhere"));
  });
  after(() => services?.close());

  it("follows a job from queued to completed, woken by notifications", async () => {
    const id = await insertJob();
    const { updates, done, next } = collect(streamJobUpdates(services, membership, id, NOTIFY_ONLY));
    await next(1);
    assert.deepEqual(updates[0], { running: false, completed: false, newLogs: "", logOffset: 0 });
    await worker.start(id);
    await worker.log(id, "line-1\n");
    await next(2);
    assert.deepEqual(updates[1], { running: true, completed: false, newLogs: "line-1\n", logOffset: 7 });
    await worker.log(id, "line-2\n");
    await next(3);
    await worker.log(id, "é😀\n");
    await worker.complete(id, { ok: true });
    await done;
    const last = updates.at(-1)!;
    assert.equal(last.completed, true);
    assert.equal(last.running, false);
    assert.equal(last.job?.status, "success");
    assert.deepEqual(last.job?.result, { ok: true });
    assert.equal(logsOf(updates), "line-1\nline-2\né😀\n");
    assert.equal(last.logOffset, 17, "offsets count characters, not UTF-16 units");
  });

  it("resumes from an offset, as a viewer reconnecting to another server does", async () => {
    const id = await insertJob();
    await worker.start(id);
    await worker.log(id, "first\nsecond\n");
    const firstServer = new AbortController();
    const first = collect(
      streamJobUpdates(services, membership, id, { ...NOTIFY_ONLY, signal: firstServer.signal }),
    );
    await first.next(1);
    const seen = first.updates[0]!.logOffset;
    assert.equal(seen, 13);
    // The first server goes away; output keeps arriving meanwhile.
    firstServer.abort();
    await first.done;
    await worker.log(id, "third\n");
    const second = collect(streamJobUpdates(services, membership, id, { ...NOTIFY_ONLY, logOffset: seen }));
    await second.next(1);
    assert.equal(second.updates[0]!.newLogs, "third\n");
    await worker.log(id, "fourth\n");
    await worker.complete(id, 4);
    await second.done;
    assert.equal(logsOf(second.updates), "third\nfourth\n");
    assert.equal(second.updates.at(-1)!.completed, true);
    assert.deepEqual(await getJobUpdate(services, membership, id, 13), {
      running: false,
      completed: true,
      newLogs: "third\nfourth\n",
      logOffset: 26,
    });
  });

  it("ends at once for a finished job, sending a long log in pieces", async () => {
    const id = await insertJob();
    const big = "x".repeat(MAX_UPDATE_LOG_CHARS * 2 + 10);
    await worker.start(id);
    await worker.log(id, big);
    await worker.complete(id, null);
    const updates: JobUpdate[] = [];
    for await (const update of streamJobUpdates(services, membership, id, NOTIFY_ONLY)) updates.push(update);
    assert.deepEqual(
      updates.map((update) => [update.newLogs.length, update.completed]),
      [
        [MAX_UPDATE_LOG_CHARS, false],
        [MAX_UPDATE_LOG_CHARS, false],
        [10, true],
      ],
    );
    assert.equal(updates.at(-1)!.logOffset, big.length);
    const past = await getJobUpdate(services, membership, id, big.length + 100);
    assert.equal(past.newLogs, "");
    assert.equal(past.logOffset, big.length, "an offset past the end resumes from the end");
  });

  it("sees a start nobody announced through the safety-net re-read", async () => {
    const id = await insertJob();
    const { updates, next } = collect(streamJobUpdates(services, membership, id, { queuedPollMs: 50 }));
    await next(1);
    await worker.start(id);
    await next(2, 2000);
    assert.equal(updates[1]!.running, true);
    await worker.complete(id, null);
    await next(3);
  });

  it("stops when the viewer goes away", async () => {
    const id = await insertJob("running");
    const controller = new AbortController();
    const { done, next } = collect(
      streamJobUpdates(services, membership, id, { ...NOTIFY_ONLY, signal: controller.signal }),
    );
    await next(1);
    const started = Date.now();
    controller.abort();
    await done;
    assert.ok(Date.now() - started < 1000, "the stream ended promptly");
  });

  it("refuses another workspace's job and bad offsets before streaming anything", async () => {
    const id = await insertJob();
    const isNotFound = (error: unknown) => error instanceof AppError && error.code === "NOT_FOUND";
    await assert.rejects(streamJobUpdates(services, stranger, id).next(), isNotFound);
    await assert.rejects(getJobUpdate(services, stranger, id), isNotFound);
    await assert.rejects(streamJobUpdates(services, membership, "nope").next(), isNotFound);
    await assert.rejects(
      streamJobUpdates(services, membership, id, { logOffset: -1 }).next(),
      (error: unknown) => error instanceof AppError && error.field === "log_offset",
    );
  });
});
