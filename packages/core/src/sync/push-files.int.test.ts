// Issue 34 item 5, the sync push (`millrace sync push`, POST /sync/push): a file whose name has
// backslashes was reported as added and applied while nothing was stored; `.millrace/` files,
// which a push leaves to restore, were reported as added on an unchanged push; a 67 MB script came
// in through a restore while a deploy allows 512 KiB.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createKeyring } from "../secrets/index.ts";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import { createVariable } from "../variables/variables.ts";
import type { Membership } from "../membership.ts";
import { readRepositoryFiles } from "./repository.ts";
import { restoreWorkspaceFiles, type RestoreContext } from "./restore.ts";

const KEY = "push-files-test-instance-key-0123456789abcdef";

let services: TestServices;
let ctx: RestoreContext;
let membership: Membership;

function push(files: Map<string, string>, yes = true) {
  return restoreWorkspaceFiles(ctx, membership.principal, files, {
    scope: "workspace",
    workspaceId: membership.workspace.id,
    membership,
    yes,
  });
}

describe("sync push reports what it applies", () => {
  before(async () => {
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    ({ membership } = await createTestMember(services, "pushws"));
    await createVariable(ctx, membership, { path: "f/app/url", value: "https://example.com" });
  });
  after(async () => {
    await services?.close();
  });

  it("an unchanged push, .millrace/ files included, changes nothing and reports nothing", async () => {
    const files = await readRepositoryFiles(services.pool, membership.workspace.id);
    assert.ok(files.has(".millrace/workspace.yaml"), [...files.keys()].join(", "));
    const report = await push(files, false);
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.diff, { added: [], changed: [], deleted: [] });
    assert.ok(
      report.skipped.some((s) => s.file === ".millrace/workspace.yaml"),
      JSON.stringify(report.skipped),
    );
  });

  it("refuses a file named with backslashes, naming it, and stores nothing", async () => {
    const files = await readRepositoryFiles(services.pool, membership.workspace.id);
    const name = "f\\app\\y.variable.yaml";
    files.set(name, "value: sneaky\nis_secret: false\ndescription: ''\n");
    const report = await push(files);
    assert.equal(report.applied, false);
    assert.ok(
      report.errors.some((e) => e.file === name && /backslash/.test(e.message)),
      JSON.stringify(report.errors),
    );
    const { rows } = await services.pool.query("SELECT path FROM variable WHERE workspace_id = $1", [
      membership.workspace.id,
    ]);
    assert.deepEqual(rows, [{ path: "f/app/url" }]);
  });

  it("holds a push and a restore to the limits a deploy has (script, flow, variable), naming the file", async () => {
    const files = await readRepositoryFiles(services.pool, membership.workspace.id);
    files.set("f/app/huge.script.yaml", "summary: ''\ndescription: ''\nlock: ''\nkind: script\nschema: {}\n");
    files.set("f/app/huge.sh", `echo ${"x".repeat(600 * 1024)}\n`);
    files.set(
      "f/app/long.variable.yaml",
      `value: ${"y".repeat(1024 * 1024 + 1)}\nis_secret: false\ndescription: ''\n`,
    );
    files.set(
      "f/app/wide__flow/flow.yaml",
      `summary: ''\nvalue:\n  modules:\n    - id: a\n      value:\n        type: identity\n      summary: ${"z".repeat(2 * 1024 * 1024)}\n`,
    );
    const expected = [
      { file: "f/app/huge.script.yaml", field: "content" },
      { file: "f/app/long.variable.yaml", field: "value" },
      { file: "f/app/wide__flow/flow.yaml", field: "value" },
    ];
    const pushed = await push(files);
    assert.equal(pushed.applied, false);
    assert.deepEqual(
      pushed.errors.map(({ file, field }) => ({ file, field })).sort((a, b) => (a.file < b.file ? -1 : 1)),
      expected,
    );
    await services.pool.query(`UPDATE "user" SET is_super_admin = true WHERE id = $1`, [
      membership.principal.userId,
    ]);
    files.delete(".millrace/workspace.yaml");
    const restored = await restoreWorkspaceFiles(
      ctx,
      { ...membership.principal, isSuperAdmin: true },
      files,
      { scope: "instance", workspaceId: "restored-big" },
    );
    assert.equal(restored.applied, false);
    assert.deepEqual(
      restored.errors.map(({ file, field }) => ({ file, field })).sort((a, b) => (a.file < b.file ? -1 : 1)),
      expected,
    );
  });
});
