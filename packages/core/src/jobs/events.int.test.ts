import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createClient } from "@millrace/db";
import { createTestServices, type TestServices } from "../testing.ts";
import { enqueueCopies, enqueueJobs, noopJob, queuedChannel } from "./enqueue.ts";
import { JOB_DONE_CHANNEL, JOB_LOG_CHANNEL, JobEvents, type NotifiedOutcome } from "./events.ts";

let services: TestServices;

before(async () => {
  services = await createTestServices();
});
after(async () => {
  await services?.close();
});

const notify = (channel: string, payload: string) =>
  services.pool.query("SELECT pg_notify($1, $2)", [channel, payload]);

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("job events", () => {
  it("listen on a channel only while someone in the process waits on it, and a while after", async () => {
    const events = new JobEvents(services.database.url, { unlistenAfterMs: 100 });
    try {
      await events.start();
      // Nobody waits: PostgreSQL has no reason to wake this connection at any job's end.
      assert.deepEqual(await events.channelsListened(), []);
      const id = crypto.randomUUID();
      const heard: (NotifiedOutcome | null)[] = [];
      const unsubscribe = events.on(JOB_DONE_CHANNEL, id, (_, outcome) => heard.push(outcome));
      await events.listening(JOB_DONE_CHANNEL);
      assert.deepEqual(await events.channelsListened(), [JOB_DONE_CHANNEL]);
      // Sent right after `listening` resolved: the waiter hears it, outcome included.
      await notify(JOB_DONE_CHANNEL, `${id} ["success", {"n": 1}]`);
      await until(async () => heard.length === 1, "the notification");
      assert.deepEqual(heard, [{ status: "success", result: { n: 1 } }]);
      // Another job's waiter comes and goes while the first still waits: the channel stays.
      events.on(JOB_DONE_CHANNEL, crypto.randomUUID(), () => {})();
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(await events.channelsListened(), [JOB_DONE_CHANNEL]);
      unsubscribe();
      await until(async () => (await events.channelsListened()).length === 0, "the UNLISTEN");
      // A waiter that comes back listens again.
      const again: string[] = [];
      const stop = events.on(JOB_LOG_CHANNEL, id, (jobId) => again.push(jobId));
      await events.listening(JOB_LOG_CHANNEL);
      await notify(JOB_LOG_CHANNEL, id);
      await until(async () => again.length === 1, "the second notification");
      stop();
    } finally {
      await events.close();
    }
  });

  it("a waiter that comes back before the delay keeps the channel, with no second LISTEN", async () => {
    const events = new JobEvents(services.database.url, { unlistenAfterMs: 200 });
    try {
      const id = crypto.randomUUID();
      events.on(JOB_DONE_CHANNEL, id, () => {})();
      await events.listening(JOB_DONE_CHANNEL);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const heard: string[] = [];
      const stop = events.on(JOB_DONE_CHANNEL, id, (jobId) => heard.push(jobId));
      await events.listening(JOB_DONE_CHANNEL);
      // Past the first waiter's delay: its pending UNLISTEN was called off by the second.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(await events.channelsListened(), [JOB_DONE_CHANNEL]);
      await notify(JOB_DONE_CHANNEL, id);
      await until(async () => heard.length === 1, "the notification");
      stop();
    } finally {
      await events.close();
    }
  });
});

describe("queued jobs", () => {
  it("are announced on their tag's own channel, the same whichever way they were queued", async () => {
    const served = `events-served-${Date.now()}`;
    const other = `events-other-${Date.now()}`;
    const listener = createClient(services.database.url);
    const heard: { channel: string; payload: string | undefined }[] = [];
    listener.on("notification", (message) =>
      heard.push({ channel: message.channel, payload: message.payload }),
    );
    await listener.connect();
    try {
      await listener.query(`LISTEN ${queuedChannel(served)}`);
      const creator = "events-test";
      await enqueueJobs(services.pool, services.boss, [noopJob("events-ws", other, {}, creator)]);
      await enqueueJobs(services.pool, services.boss, [noopJob("events-ws", served, {}, creator)]);
      await enqueueCopies(services.pool, services.boss, noopJob("events-ws", served, {}, creator), 3);
      await until(async () => heard.length >= 2, "two announcements");
      await new Promise((resolve) => setTimeout(resolve, 200));
      // One per statement and tag, none for the tag this listener does not serve.
      assert.deepEqual(heard, [
        { channel: queuedChannel(served), payload: served },
        { channel: queuedChannel(served), payload: served },
      ]);
      assert.notEqual(queuedChannel(served), queuedChannel(other));
      assert.ok(queuedChannel("x".repeat(500)).length <= 63, "a channel name fits an identifier");
    } finally {
      await listener.end();
    }
  });
});
