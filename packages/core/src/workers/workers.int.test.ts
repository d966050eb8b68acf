import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { DEFAULT_TAGS } from "@millrace/runtime";
import type { Principal } from "../auth/principal.ts";
import { SUPERADMIN_SECRET_PRINCIPAL } from "../auth/tokens.ts";
import { setGlobalSetting } from "../instance-admin.ts";
import { createTestMember, createTestServices, type TestServices, rejectsWith } from "../testing.ts";
import { getCustomTagsSetting, listCustomTags } from "./available-tags.ts";
import { assertTagAllowed } from "./custom-tags.ts";
import { listWorkers, queueCounts, queueStats } from "./workers-list.ts";

let services: TestServices;
let member: Principal;
const root = SUPERADMIN_SECRET_PRINCIPAL;

before(async () => {
  services = await createTestServices();
  ({ principal: member } = await createTestMember(services, "ws1"));
  for (const id of ["ws2", "ws3"]) await createTestMember(services, id);
});
after(() => services?.close());

describe("custom tags restricted to workspaces", () => {
  it("allows a tag only where the setting says, in the three syntaxes", async () => {
    await setGlobalSetting(services, root, "custom_tags", ["gpu(ws1+ws2)", "cpu(^ws3)", "shared"]);
    const allowed = (ws: string, tag: string) => assertTagAllowed(services.pool, ws, tag, "tag");
    await allowed("ws1", "gpu");
    await allowed("ws2", "gpu");
    await rejectsWith(
      allowed("ws3", "gpu"),
      "INVALID_INPUT",
      "tag",
      /^tag: tag "gpu" is not available in workspace ws3$/,
    );
    await allowed("ws1", "cpu");
    await rejectsWith(
      allowed("ws3", "cpu"),
      "INVALID_INPUT",
      "tag",
      /tag "cpu" is not available in workspace ws3/,
    );
    for (const ws of ["ws1", "ws2", "ws3"]) {
      await allowed(ws, "shared");
      await allowed(ws, "bash");
      await allowed(ws, "undeclared");
    }
    await rejectsWith(
      assertTagAllowed(services.pool, "ws3", "gpu", "flow.modules[0].tag"),
      "INVALID_INPUT",
      "flow.modules[0].tag",
    );
  });

  it("sees this process's changes at once and another server's within a second or two", async () => {
    await setGlobalSetting(services, root, "custom_tags", ["gpu(ws1)"]);
    await rejectsWith(assertTagAllowed(services.pool, "ws2", "gpu", "tag"), "INVALID_INPUT");
    // Another server writes the setting: the cached value may be served for at most a second.
    await services.pool.query(
      `UPDATE instance_setting SET value = '["gpu(ws1+ws2)"]' WHERE key = 'custom_tags'`,
    );
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await assertTagAllowed(services.pool, "ws2", "gpu", "tag");
  });

  it("fails closed when the stored setting was broken by hand", async () => {
    await services.pool.query(`UPDATE instance_setting SET value = '["gpu("]' WHERE key = 'custom_tags'`);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await assert.rejects(assertTagAllowed(services.pool, "ws1", "gpu", "tag"), /custom_tags is invalid/);
    await setGlobalSetting(services, root, "custom_tags", ["gpu(ws1+ws2)", "cpu(^ws3)", "shared"]);
    await assertTagAllowed(services.pool, "ws1", "gpu", "tag");
  });

  it("lists the tags a workspace may use to its members", async () => {
    assert.deepEqual(await listCustomTags(services, member, { workspace: "ws1" }), [
      ...DEFAULT_TAGS,
      "gpu",
      "cpu",
      "shared",
    ]);
    assert.deepEqual(await listCustomTags(services, root, { workspace: "ws3" }), [...DEFAULT_TAGS, "shared"]);
    assert.deepEqual(await listCustomTags(services, member), [...DEFAULT_TAGS, "gpu", "cpu", "shared"]);
    await rejectsWith(listCustomTags(services, member, { workspace: "ws3" }), "NOT_FOUND");
    await rejectsWith(listCustomTags(services, member, { showRestrictions: true }), "FORBIDDEN");
    assert.deepEqual(await listCustomTags(services, root, { showRestrictions: true }), [
      ...DEFAULT_TAGS,
      "gpu(ws1+ws2)",
      "cpu(^ws3)",
      "shared",
    ]);
    assert.deepEqual(await getCustomTagsSetting(services, root), ["gpu(ws1+ws2)", "cpu(^ws3)", "shared"]);
    await rejectsWith(getCustomTagsSetting(services, member), "FORBIDDEN");
  });
});

async function insertJob(tag: string, status: string, extra: { waitedSecs?: number; inSecs?: number } = {}) {
  const id = randomUUID();
  await services.pool.query(
    `INSERT INTO job (id, workspace_id, language, tag, status, created_by, permissioned_as, created_at, scheduled_for)
     VALUES ($1, 'ws2', 'bash', $2, $3::job_status, 'u', 'u/u',
             (now() AT TIME ZONE 'UTC') - make_interval(secs => $4),
             (now() AT TIME ZONE 'UTC') + make_interval(secs => $5))`,
    [id, tag, status, extra.waitedSecs ?? 0, extra.inSecs ?? -(extra.waitedSecs ?? 0)],
  );
  return id;
}

describe("workers list and queue", () => {
  let runningJob: string;

  before(async () => {
    runningJob = await insertJob("gpu", "running");
    const ping = `INSERT INTO worker_ping (name, worker_group, tags, host, current_job_id, jobs_executed, memory_bytes,
                    occupancy_15s, occupancy_5m, occupancy_30m, version, started_at, last_ping_at)
                  VALUES ($1, $2, $3, 'host-a', $4, $5, 52428800, 0.5, 0.25, 0.125, '0.1.0',
                    (now() AT TIME ZONE 'UTC') - interval '1 hour',
                    (now() AT TIME ZONE 'UTC') - make_interval(secs => $6))`;
    await services.pool.query(ping, ["wk-gpu-1", "gpu", ["gpu"], runningJob, 7, 3]);
    await services.pool.query(ping, ["wk-default-1", "default", [...DEFAULT_TAGS], null, 2, 30]);
    await services.pool.query(ping, ["wk-dead-1", "default", [...DEFAULT_TAGS], null, 9, 600]);
  });

  it("lists workers that pinged within ping_since, in Windmill's WorkerPing shape", async () => {
    const workers = await listWorkers(services, root);
    assert.deepEqual(
      workers.map((w) => w.worker),
      ["wk-default-1", "wk-gpu-1"],
    );
    const gpu = workers[1]!;
    assert.equal(gpu.worker_group, "gpu");
    assert.deepEqual(gpu.custom_tags, ["gpu"]);
    assert.equal(gpu.worker_instance, "host-a");
    assert.ok(gpu.last_ping >= 3 && gpu.last_ping < 10, `last_ping ${gpu.last_ping}`);
    assert.ok(Math.abs(Date.parse(gpu.started_at) - (Date.now() - 3600_000)) < 60_000, gpu.started_at);
    assert.equal(gpu.jobs_executed, 7);
    assert.equal(gpu.memory_usage, 52428800);
    assert.equal(gpu.occupancy_rate_15s, 0.5);
    assert.equal(gpu.occupancy_rate_5m, 0.25);
    assert.equal(gpu.occupancy_rate_30m, 0.125);
    assert.equal(gpu.wm_version, "0.1.0");
    assert.equal(gpu.current_job_id, runningJob);
    assert.equal(gpu.last_job_id, runningJob);
    assert.equal(gpu.last_job_workspace_id, "ws2");

    assert.deepEqual(
      (await listWorkers(services, root, { pingSinceSecs: 10 })).map((w) => w.worker),
      ["wk-gpu-1"],
    );
    assert.equal((await listWorkers(services, root, { pingSinceSecs: 3600 })).length, 3);
    assert.deepEqual(
      (await listWorkers(services, root, { pingSinceSecs: 3600, page: 2, perPage: 2 })).map((w) => w.worker),
      ["wk-gpu-1"],
    );
    await rejectsWith(listWorkers(services, root, { pingSinceSecs: 0 }), "INVALID_INPUT", "ping_since");
  });

  it("never shows another tenant's job to a non-superadmin", async () => {
    const gpu = (await listWorkers(services, member)).find((w) => w.worker === "wk-gpu-1")!;
    assert.equal(gpu.jobs_executed, 7);
    assert.equal(gpu.current_job_id, undefined);
    assert.equal(gpu.last_job_id, undefined);
    assert.equal(gpu.last_job_workspace_id, undefined);
    assert.ok(!JSON.stringify(gpu).includes(runningJob));
  });

  it("counts queued jobs per tag and reports the oldest wait", async () => {
    await insertJob("gpu", "queued", { waitedSecs: 120 });
    await insertJob("gpu", "queued", { waitedSecs: 5 });
    await insertJob("gpu", "queued", { inSecs: 3600 });
    await insertJob("bash", "queued", { waitedSecs: 1 });
    await insertJob("bash", "success", { waitedSecs: 500 });
    await insertJob("nobody-serves", "queued", { waitedSecs: 30 });

    assert.deepEqual(await queueCounts(services, member), { bash: 1, gpu: 3, "nobody-serves": 1 });
    const stats = await queueStats(services, member);
    assert.deepEqual(
      stats.map(({ oldest_queued_at: _at, oldest_wait_secs: _wait, ...rest }) => rest),
      [
        { tag: "bash", queued: 1, scheduled: 0, running: 0, workers: 1 },
        { tag: "gpu", queued: 3, scheduled: 1, running: 1, workers: 1 },
        { tag: "nobody-serves", queued: 1, scheduled: 0, running: 0, workers: 0 },
      ],
    );
    const gpu = stats.find((s) => s.tag === "gpu")!;
    assert.ok(gpu.oldest_wait_secs! >= 120 && gpu.oldest_wait_secs! < 130, `wait ${gpu.oldest_wait_secs}`);
    assert.ok(Math.abs(Date.parse(gpu.oldest_queued_at!) - (Date.now() - 120_000)) < 10_000);
  });

  it("above 100,000 queued and running jobs, counts come from the leader's latest sample while it is recent", async () => {
    const live = await queueCounts(services, member);
    const sample = async (agoSecs: number, queued: number) => {
      await services.pool.query(
        `INSERT INTO queue_sample (at, tag, queued, scheduled, running, oldest_wait_secs, workers)
         VALUES (now() - make_interval(secs => $1), 'huge', $2, 5, 7, 42.5, 2)`,
        [agoSecs, queued],
      );
    };
    // A small sample: still counted live.
    await sample(30, 1000);
    assert.deepEqual(await queueCounts(services, member), live);
    // A large one, 20 s old: read from it.
    await sample(20, 150_000);
    assert.deepEqual(await queueCounts(services, member), { huge: 150_005 });
    const [huge] = await queueStats(services, member);
    assert.deepEqual(
      { ...huge, oldest_queued_at: undefined },
      {
        tag: "huge",
        queued: 150_005,
        scheduled: 5,
        running: 7,
        oldest_queued_at: undefined,
        oldest_wait_secs: 42,
        workers: 2,
      },
    );
    assert.ok(Math.abs(Date.parse(huge!.oldest_queued_at!) - (Date.now() - 62_500)) < 5_000);
    // The sampler stopped: after two minutes the counts are live again.
    await services.pool.query("UPDATE queue_sample SET at = at - interval '5 minutes' WHERE tag = 'huge'");
    assert.deepEqual(await queueCounts(services, member), live);
  });
});
