import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import type { Principal } from "../auth/principal.ts";
import { SUPERADMIN_SECRET_PRINCIPAL } from "../auth/tokens.ts";
import { getGlobalSetting, setGlobalSetting } from "../instance-admin.ts";
import { createTestMember, createTestServices, type TestServices, rejectsWith } from "../testing.ts";
import {
  deleteWorkerGroupConfig,
  getWorkerGroupConfig,
  listWorkerGroupConfigs,
  loadWorkerGroupConfig,
  updateWorkerGroupConfig,
  WORKER_CONFIG_CHANNEL,
} from "./group-config.ts";

let services: TestServices;
let member: Principal;
let listener: pg.Client;
const notices: string[] = [];
const root = SUPERADMIN_SECRET_PRINCIPAL;

/** Notifications are asynchronous: give one a moment to arrive (or, for `none`, not to). */
async function nextNotices(count: number): Promise<string[]> {
  const deadline = Date.now() + 2000;
  while (notices.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
  return notices.splice(0);
}

before(async () => {
  services = await createTestServices();
  ({ principal: member } = await createTestMember(services, "acme"));
  listener = new pg.Client({ connectionString: services.database.url });
  await listener.connect();
  listener.on("notification", (message) => {
    if (message.channel === WORKER_CONFIG_CHANNEL) notices.push(message.payload ?? "");
  });
  await listener.query(`LISTEN ${WORKER_CONFIG_CHANNEL}`);
});
after(async () => {
  await listener?.end();
  await services?.close();
});

describe("worker group configs", () => {
  it("creates, reads, replaces and deletes a config, notifying workers each time", async () => {
    assert.equal(await loadWorkerGroupConfig(services.pool, "gpu"), null);
    assert.equal(await getWorkerGroupConfig(services, root, "gpu"), null);

    const config = { worker_tags: ["gpu", "python3"], init_bash: "nvidia-smi", network: false };
    assert.deepEqual(await updateWorkerGroupConfig(services, root, "gpu", config), config);
    assert.deepEqual(await nextNotices(1), ["gpu"]);
    assert.deepEqual(await loadWorkerGroupConfig(services.pool, "gpu"), config);
    assert.deepEqual(await getWorkerGroupConfig(services, root, "gpu"), config);

    await updateWorkerGroupConfig(services, root, "gpu", { worker_tags: ["gpu"] });
    await updateWorkerGroupConfig(services, root, "native", { dedicated_worker: "acme:f/ops/hot" });
    assert.deepEqual(await nextNotices(2), ["gpu", "native"]);
    const listed = await listWorkerGroupConfigs(services, root);
    assert.deepEqual(
      listed.map((row) => [row.name, row.config]),
      [
        ["gpu", { worker_tags: ["gpu"] }],
        ["native", { dedicated_worker: "acme:f/ops/hot" }],
      ],
    );
    assert.ok(listed[0]!.updatedAt instanceof Date);
    assert.ok(Math.abs(listed[0]!.updatedAt.getTime() - Date.now()) < 60_000, "updated_at is in UTC");

    await deleteWorkerGroupConfig(services, root, "gpu");
    assert.deepEqual(await nextNotices(1), ["gpu"]);
    assert.equal(await loadWorkerGroupConfig(services.pool, "gpu"), null);
    await rejectsWith(deleteWorkerGroupConfig(services, root, "gpu"), "NOT_FOUND", undefined, /gpu/);

    const audit = await services.pool.query<{ operation: string; resource: string; actor: string }>(
      "SELECT operation, resource, actor FROM audit_log WHERE operation LIKE 'worker_config.%' ORDER BY id",
    );
    assert.deepEqual(
      audit.rows.map((row) => `${row.actor} ${row.operation} ${row.resource}`),
      [
        "superadmin_secret worker_config.update worker__gpu",
        "superadmin_secret worker_config.update worker__gpu",
        "superadmin_secret worker_config.update worker__native",
        "superadmin_secret worker_config.delete worker__gpu",
      ],
    );
  });

  it("refuses an invalid config naming the field, storing and notifying nothing", async () => {
    await updateWorkerGroupConfig(services, root, "cpu", { worker_tags: ["cpu"] });
    await nextNotices(1);
    await rejectsWith(
      updateWorkerGroupConfig(services, root, "cpu", { worker_tags: ["cpu", "ok", "bad tag"] }),
      "INVALID_INPUT",
      "worker_tags[2]",
      /^worker_tags\[2\]: "bad tag"/,
    );
    await rejectsWith(
      updateWorkerGroupConfig(services, root, "cpu", { network: "off" }),
      "INVALID_INPUT",
      "network",
    );
    await rejectsWith(
      updateWorkerGroupConfig(services, root, "bad name", { worker_tags: ["cpu"] }),
      "INVALID_INPUT",
      "name",
    );
    assert.deepEqual(await loadWorkerGroupConfig(services.pool, "cpu"), { worker_tags: ["cpu"] });
    assert.deepEqual(await nextNotices(0), []);
  });

  it("fails loudly on a config broken by hand, for the worker to report", async () => {
    await services.pool.query(
      `INSERT INTO worker_group_config (name, config) VALUES ('broken', '{"worker_tags": "gpu"}')`,
    );
    await assert.rejects(
      loadWorkerGroupConfig(services.pool, "broken"),
      /worker group "broken".*worker_tags/,
    );
  });

  it("is for superadmins only", async () => {
    const before = await services.pool.query("SELECT count(*)::int AS n FROM worker_group_config");
    await rejectsWith(listWorkerGroupConfigs(services, member), "FORBIDDEN", undefined, /superadmin/);
    await rejectsWith(getWorkerGroupConfig(services, member, "cpu"), "FORBIDDEN");
    await rejectsWith(updateWorkerGroupConfig(services, member, "x", { worker_tags: ["x"] }), "FORBIDDEN");
    await rejectsWith(deleteWorkerGroupConfig(services, member, "cpu"), "FORBIDDEN");
    const after = await services.pool.query("SELECT count(*)::int AS n FROM worker_group_config");
    assert.deepEqual(after.rows, before.rows);
  });
});

describe("instance settings", () => {
  it("validates known keys, storing nothing on error", async () => {
    await setGlobalSetting(services, root, "custom_tags", ["gpu(ws1+ws2)", "cpu"]);
    await rejectsWith(
      setGlobalSetting(services, root, "custom_tags", ["fine", "gpu(ws1+)"]),
      "INVALID_INPUT",
      "value[1]",
      /empty workspace id/,
    );
    await rejectsWith(setGlobalSetting(services, root, "custom_tags", "gpu"), "INVALID_INPUT", "value");
    assert.deepEqual(await getGlobalSetting(services, root, "custom_tags"), ["gpu(ws1+ws2)", "cpu"]);

    await rejectsWith(
      setGlobalSetting(services, root, "retention_period_secs", -5),
      "INVALID_INPUT",
      "value",
    );
    await rejectsWith(
      setGlobalSetting(services, root, "retention_period_secs", 1.5),
      "INVALID_INPUT",
      "value",
    );
    await rejectsWith(
      setGlobalSetting(services, root, "retention_period_secs", "60"),
      "INVALID_INPUT",
      "value",
    );
    assert.equal(await getGlobalSetting(services, root, "retention_period_secs"), null);
    await setGlobalSetting(services, root, "retention_period_secs", 86400);
    assert.equal(await getGlobalSetting(services, root, "retention_period_secs"), 86400);
  });

  it("stores other keys as given, removes on null, and keeps secrets off the API", async () => {
    await setGlobalSetting(services, root, "instance_banner", { text: "maintenance at 6" });
    assert.deepEqual(await getGlobalSetting(services, root, "instance_banner"), { text: "maintenance at 6" });
    await setGlobalSetting(services, root, "instance_banner", null);
    assert.equal(await getGlobalSetting(services, root, "instance_banner"), null);
    await rejectsWith(setGlobalSetting(services, root, "Bad Key", 1), "INVALID_INPUT", "key");
    await services.pool.query(
      `INSERT INTO instance_setting (key, value) VALUES ('session_secret', '"s3cret"')`,
    );
    await rejectsWith(getGlobalSetting(services, root, "session_secret"), "FORBIDDEN");
    await rejectsWith(setGlobalSetting(services, root, "session_secret", "x"), "FORBIDDEN");
    await rejectsWith(setGlobalSetting(services, root, "session_secret", null), "FORBIDDEN");
    const { rows } = await services.pool.query(
      "SELECT value FROM instance_setting WHERE key = 'session_secret'",
    );
    assert.deepEqual(rows, [{ value: "s3cret" }]);
  });

  it("is for superadmins only", async () => {
    await rejectsWith(getGlobalSetting(services, member, "custom_tags"), "FORBIDDEN");
    await rejectsWith(setGlobalSetting(services, member, "custom_tags", ["mine"]), "FORBIDDEN");
    assert.deepEqual(await getGlobalSetting(services, root, "custom_tags"), ["gpu(ws1+ws2)", "cpu"]);
  });
});
