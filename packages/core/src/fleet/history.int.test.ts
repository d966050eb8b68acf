import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Principal } from "../auth/principal.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { fleetHistory, HISTORY_POINTS } from "./history.ts";
import { loadProfile } from "./load-profile.ts";
import { sampleFleet } from "./sample.ts";

let services: TestServices;
let member: Principal;

/** A job that completed `minutesAgo` minutes ago after waiting `waitSecs` and running `runSecs`. */
async function completedJob(
  tag: string,
  status: string,
  minutesAgo: number,
  runSecs: number,
  waitSecs = 0,
  kind = "script",
) {
  await services.pool.query(
    `WITH t AS (SELECT (now() AT TIME ZONE 'UTC') - make_interval(mins => $4::int) AS done)
     INSERT INTO job (id, workspace_id, kind, script_path, language, tag, status, created_by, permissioned_as,
                      created_at, scheduled_for, started_at, completed_at)
     SELECT gen_random_uuid(), 'fleet', $1, 'f/x/y', 'bash', $2, $3::job_status, 'alice', 'u/alice',
            done - make_interval(secs => $5::float8 + $6::float8), done - make_interval(secs => $5::float8 + $6::float8),
            done - make_interval(secs => $5::float8), done FROM t`,
    [kind, tag, status, minutesAgo, runSecs, waitSecs],
  );
}

before(async () => {
  services = await createTestServices();
  ({ principal: member } = await createTestMember(services, "fleet"));
});
after(() => services?.close());

describe("fleetHistory", () => {
  it("buckets samples per group and tag and counts completions per minute", async () => {
    // Three samples 2 s apart in one 15 s step, then one 10 minutes ago; a sample past the hour.
    for (const [secsAgo, queued, occupancy] of [
      [2, 3, 0.5],
      [4, 7, 0.7],
      [6, 5, 0.6],
      [600, 1, 0.2],
      [3700, 99, 1],
    ] as const) {
      await services.pool.query(
        `INSERT INTO queue_sample (at, tag, queued, scheduled, running, oldest_wait_secs, workers)
         VALUES (now() - make_interval(secs => $1), 'bash', $2, 0, 1, $2 * 2, 1)`,
        [secsAgo, queued],
      );
      await services.pool.query(
        `INSERT INTO worker_group_sample (at, worker_group, alive, busy, occupancy_15s, occupancy_5m, occupancy_30m)
         VALUES (now() - make_interval(secs => $1), 'default', 2, 1, $2, $2, $2)`,
        [secsAgo, occupancy],
      );
    }
    // A tag a worker serves but no job used all along: no flat line at zero.
    await services.pool.query(
      `INSERT INTO queue_sample (at, tag, queued, scheduled, running, oldest_wait_secs, workers)
       VALUES (now() - interval '3 seconds', 'deno', 0, 0, 0, 0, 2)`,
    );
    await completedJob("bash", "success", 0, 1);
    await completedJob("bash", "failure", 0, 1);
    await completedJob("bash", "success", 3, 1);
    await completedJob("bash", "success", 0, 1, 0, "flow");
    await completedJob("bash", "success", 90, 1);

    const history = await fleetHistory(services, member, 60);
    assert.equal(history.stepSecs, 15);
    assert.equal(history.groups.length, 1);
    const group = history.groups[0]!;
    assert.equal(group.workerGroup, "default");
    assert.ok(group.points.length >= 2 && group.points.length <= 3, `${group.points.length} steps`);
    assert.ok(group.points.every((p) => p.alive === 2 && p.busy === 1));
    assert.deepEqual(
      history.tags.map((t) => t.tag),
      ["bash"],
    );
    const tag = history.tags.find((t) => t.tag === "bash")!;
    // The hour-old sample is gone; the three recent ones fall in one or two steps, max kept.
    assert.equal(Math.max(...tag.points.map((p) => p.queued)), 7);
    assert.equal(tag.points[0]!.queued, 1);
    assert.equal(Math.max(...tag.points.map((p) => p.oldestWaitSecs)), 14);
    assert.ok(tag.points.length <= HISTORY_POINTS);

    assert.equal(history.throughput.length, 60);
    // Summed over the last two minutes, in case the minute turned between insert and query.
    const recent = history.throughput.slice(-2);
    assert.deepEqual(
      [recent.reduce((n, p) => n + p.completed, 0), recent.reduce((n, p) => n + p.failed, 0)],
      [2, 1],
      "the flow run is not a worker's job",
    );
    assert.equal(
      history.throughput.reduce((n, p) => n + p.completed, 0),
      3,
    );

    const short = await fleetHistory(services, member, 5);
    assert.equal(short.stepSecs, 1.25);
    assert.equal(short.throughput.length, 5);
    assert.equal(short.tags[0]!.points.length, 3);
  });

  it("refuses a window it does not offer", async () => {
    await rejectsWith(fleetHistory(services, member, 61), "INVALID_INPUT", "minutes");
  });
});

describe("loadProfile", () => {
  it("gives each tag's rate, busiest minute, mean duration and wait over the last day", async () => {
    const profile = await loadProfile(services, member);
    assert.equal(profile.hours, 24);
    const all = profile.tags[0]!;
    assert.equal(all.tag, null);
    const bash = profile.tags.find((t) => t.tag === "bash")!;
    await completedJob("gpu", "success", 30, 4, 2);
    await completedJob("gpu", "success", 30, 2, 0);
    const after = await loadProfile(services, member);
    const gpu = after.tags.find((t) => t.tag === "gpu")!;
    assert.equal(gpu.jobs, 2);
    assert.ok(Math.abs(gpu.meanDurationSecs - 3) < 1e-6, `${gpu.meanDurationSecs}`);
    assert.ok(Math.abs(gpu.meanWaitSecs - 1) < 1e-6, `${gpu.meanWaitSecs}`);
    assert.equal(gpu.arrivalRatePerSec, 2 / 86400);
    assert.equal(gpu.peakRatePerSec, 2 / 60);
    assert.equal(bash.jobs, 4, "the flow run is left out");
    assert.equal(after.tags[0]!.jobs, all.jobs + 2);
  });
});

describe("sampleFleet", () => {
  it("two samples taken in the same millisecond both succeed, and the first is kept", async () => {
    await services.pool.query(
      `INSERT INTO worker_ping (name, worker_group, tags, host, last_ping_at)
       VALUES ('wk-same-ms', 'same-ms-group', '{same-ms-tag}', 'h', now() AT TIME ZONE 'UTC')`,
    );
    await services.pool.query(
      `INSERT INTO job (id, workspace_id, kind, language, tag, created_by, permissioned_as, created_at, scheduled_for)
       VALUES (gen_random_uuid(), 'fleet', 'script', 'bash', 'same-ms-tag', 'alice', 'u/alice',
               now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC')`,
    );
    const at = new Date(Date.now() - 1234);
    const [first, second] = await Promise.all([
      sampleFleet(services.pool, at),
      sampleFleet(services.pool, at),
    ]);
    assert.ok(first.groups.some((g) => g.workerGroup === "same-ms-group"));
    assert.ok(second.queues.some((q) => q.tag === "same-ms-tag"));
    const { rows } = await services.pool.query<{ groups: number; queues: number }>(
      `SELECT (SELECT count(*)::int FROM worker_group_sample WHERE at = $1 AND worker_group = 'same-ms-group') AS groups,
              (SELECT count(*)::int FROM queue_sample WHERE at = $1 AND tag = 'same-ms-tag') AS queues`,
      [at],
    );
    assert.deepEqual(rows[0], { groups: 1, queues: 1 });
  });
});
