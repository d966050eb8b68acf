// settings.yaml end to end: a workspace's color and object storage are committed by git sync and
// come back from the repository alone into an empty database; a bad settings.yaml refuses the
// whole restore, naming the file and field, with nothing written.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startTestGitRemote, type TestGitRemote } from "@millrace/sync/testing/git-remote";
import type { Principal } from "../auth/principal.ts";
import { editLargeFileStorage, readLargeFileStorage } from "../object-storage/settings.ts";
import { createResource } from "../resources/resources.ts";
import { createKeyring } from "../secrets/index.ts";
import type { SecretsContext } from "../secrets/context.ts";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import { changeWorkspaceColor } from "../windmill-settings.ts";
import type { Membership } from "../membership.ts";
import { runGitSync, setGitSyncSettings } from "./git-sync.ts";
import { restoreWorkspaceFiles, type RestoreContext } from "./restore.ts";

const KEY = "settings-restore-test-key-0123456789abcdef";
/** A valid `s3` resource value: the restore checks the resource, it never calls the store. */
const S3_VALUE = {
  bucket: "data",
  region: "us-east-1",
  endPoint: "s3.example.com",
  useSSL: true,
  pathStyle: true,
  accessKey: "AKIAEXAMPLE",
  secretKey: "not-a-real-secret",
};
const STORAGE = { type: "S3Storage", s3_resource_path: "$res:f/data/s3", public_resource: true };

async function superadmin(services: TestServices, workspace: string): Promise<Principal> {
  const { principal } = await createTestMember(services, workspace);
  await services.pool.query(`UPDATE "user" SET is_super_admin = true WHERE id = $1`, [principal.userId]);
  return { ...principal, isSuperAdmin: true };
}

async function remoteFiles(remote: TestGitRemote): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const file of await remote.listFiles()) files.set(file, (await remote.readFile(file)) ?? "");
  return files;
}

async function settingsOf(services: TestServices, ws: string) {
  const { rows } = await services.pool.query<{ name: string; color: string | null }>(
    "SELECT name, color FROM workspace WHERE id = $1",
    [ws],
  );
  return { ...rows[0], storage: await readLargeFileStorage(services, ws) };
}

describe("settings.yaml through git sync and restore", () => {
  let source: TestServices;
  let ctx: SecretsContext & TestServices;
  let admin: Membership;
  let remote: TestGitRemote;
  let cacheDir: string;
  let files: Map<string, string>;

  before(async () => {
    source = await createTestServices();
    ctx = { ...source, secrets: createKeyring(KEY) };
    ({ membership: admin } = await createTestMember(source, "acme"));
    await createResource(ctx, admin, { path: "f/data/s3", resourceType: "s3", value: S3_VALUE });
    await createResource(ctx, admin, {
      path: "f/data/pg",
      resourceType: "postgresql",
      value: { host: "db", port: 5432, user: "u", password: "p", dbname: "d" },
    });
    await changeWorkspaceColor(ctx, admin, "#336699");
    await editLargeFileStorage(ctx, admin, STORAGE);
    remote = await startTestGitRemote({ username: "sync", password: "token" });
    cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-settings-sync-"));
    await setGitSyncSettings(ctx, admin, { remote_url: remote.url, username: "sync", password: "token" });
  });
  after(async () => {
    await remote?.close();
    await source?.close();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  it("git sync commits settings.yaml; a color change is its own commit touching only that file", async () => {
    assert.equal((await runGitSync(ctx, "acme", { cacheDir })).status, "success");
    const settings = await remote.readFile("settings.yaml");
    assert.match(settings ?? "", /^name: /);
    assert.match(settings ?? "", /\ncolor: '#336699'\n/);
    assert.match(settings ?? "", /\nlarge_file_storage:\n {2}type: S3Storage\n {2}public_resource: true\n/);
    assert.match(settings ?? "", /\n {2}s3_resource_path: \$res:f\/data\/s3\n/);
    assert.match(settings ?? "", /\noperator_settings:\n {2}assets: true\n/);
    assert.doesNotMatch(settings ?? "", /configuredBy/);

    await changeWorkspaceColor(ctx, admin, "#445566");
    assert.equal((await runGitSync(ctx, "acme", { cacheDir })).status, "success");
    const [commit] = await remote.commits();
    assert.equal(commit!.message, "Change the color of workspace acme");
    assert.deepEqual(commit!.files, ["settings.yaml"]);
    assert.match((await remote.readFile("settings.yaml")) ?? "", /\ncolor: '#445566'\n/);
    // Nothing changed: a reconcile writes no new commit.
    const count = (await remote.commits()).length;
    assert.equal((await runGitSync(ctx, "acme", { cacheDir, trigger: "manual" })).status, "success");
    assert.equal((await remote.commits()).length, count);
    files = await remoteFiles(remote);
  });

  it("restores the color and the object storage into an empty database, configured by the restorer", async () => {
    const target = await createTestServices();
    try {
      const restorer = await superadmin(target, "home");
      const report = await restoreWorkspaceFiles(
        { ...target, secrets: createKeyring(KEY) } as RestoreContext,
        restorer,
        files,
        { scope: "instance" },
      );
      assert.deepEqual(report.errors, []);
      assert.equal(report.applied, true);
      assert.equal(report.counts.settings, 1);
      const restored = await settingsOf(target, "acme");
      assert.equal(restored.color, "#445566");
      assert.deepEqual(restored.storage, { setting: STORAGE, configuredBy: restorer.username });
      const original = await settingsOf(source, "acme");
      assert.equal(restored.name, original.name);
    } finally {
      await target.close();
    }
  });

  it("a bad settings.yaml fails the restore naming the file and field, and writes nothing", async () => {
    const target = await createTestServices();
    try {
      const restorer = await superadmin(target, "home");
      const rctx = { ...target, secrets: createKeyring(KEY) } as RestoreContext;
      const cases: [string, string, string][] = [
        ["color: blue", "color", "#rrggbb"],
        [
          "large_file_storage:\n  s3_resource_path: f/data/pg",
          "large_file_storage.s3_resource_path",
          "not an s3",
        ],
        [
          "large_file_storage:\n  s3_resource_path: f/data/none",
          "large_file_storage.s3_resource_path",
          "no resource",
        ],
        ["large_file_storage:\n  type: AzureBlobStorage", "large_file_storage.type", "S3Storage"],
        ["operator_settings:\n  manage_schedules: true", "operator_settings.manage_schedules", "fixed"],
        ["colour: '#112233'", "colour", "unknown setting"],
      ];
      for (const [yaml, field, pattern] of cases) {
        const bad = new Map(files);
        bad.set("settings.yaml", `name: Acme\n${yaml}\n`);
        const report = await restoreWorkspaceFiles(rctx, restorer, bad, { scope: "instance" });
        assert.equal(report.applied, false, yaml);
        assert.deepEqual(
          report.errors.map((e) => `${e.file}#${e.field ?? ""}`),
          [`settings.yaml#${field}`],
          yaml,
        );
        assert.match(report.errors[0]!.message, new RegExp(pattern), yaml);
        const { rows } = await target.pool.query("SELECT 1 FROM workspace WHERE id = 'acme'");
        assert.equal(rows.length, 0, "nothing written");
        const resources = await target.pool.query("SELECT 1 FROM resource WHERE workspace_id = 'acme'");
        assert.equal(resources.rows.length, 0, "nothing written");
      }
    } finally {
      await target.close();
    }
  });

  it("a workspace admin's push: a bad settings.yaml changes nothing; none leaves the settings as they are; a good one applies", async () => {
    const pctx = ctx as RestoreContext;
    const push = (repo: Map<string, string>) =>
      restoreWorkspaceFiles(pctx, admin.principal, repo, {
        scope: "workspace",
        workspaceId: "acme",
        membership: admin,
        yes: true,
      });
    const wmillOnly = new Map([...files].filter(([file]) => !file.startsWith(".millrace/")));
    const bad = new Map(wmillOnly);
    bad.set(
      "settings.yaml",
      "name: Acme\ncolor: '#000000'\nlarge_file_storage:\n  s3_resource_path: f/data/pg\n",
    );
    const refused = await push(bad);
    assert.equal(refused.applied, false);
    assert.equal((await settingsOf(source, "acme")).color, "#445566");

    const without = new Map(wmillOnly);
    without.delete("settings.yaml");
    const kept = await push(without);
    assert.equal(kept.applied, true, JSON.stringify(kept.errors));
    assert.deepEqual(kept.diff, { added: [], changed: [], deleted: [] });
    const after = await settingsOf(source, "acme");
    assert.equal(after.color, "#445566");
    assert.deepEqual(after.storage?.setting, STORAGE);

    const cleared = new Map(wmillOnly);
    cleared.set("settings.yaml", "name: Acme\ncolor: '#010203'\n");
    const applied = await push(cleared);
    assert.equal(applied.applied, true, JSON.stringify(applied.errors));
    const now = await settingsOf(source, "acme");
    assert.equal(now.color, "#010203");
    assert.equal(now.storage, null, "a settings.yaml without large_file_storage has none");
  });
});
