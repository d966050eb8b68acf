import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { WORKSPACE_META_FILE } from "@millrace/sync";
import type { Principal } from "../auth/principal.ts";
import { createGroup, addGroupMember } from "../people/groups.ts";
import { createFolder } from "../people/folders.ts";
import { createResource } from "../resources/resources.ts";
import { createResourceType } from "../resources/resource-types.ts";
import { createFlow, updateFlow } from "../flows/store.ts";
import { createSchedule } from "../schedules/schedules.ts";
import { deployScript } from "../scripts.ts";
import { createKeyring } from "../secrets/index.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { createVariable } from "../variables/variables.ts";
import { invalidateCustomTagsCache } from "../workers/custom-tags.ts";
import { readRepositoryFiles } from "./repository.ts";
import { restoreWorkspaceFiles, type RestoreContext } from "./restore.ts";

const KEY = "restore-test-instance-key-0123456789abcdef";

async function superadmin(services: TestServices): Promise<Principal> {
  const { principal } = await createTestMember(services, "home");
  await services.pool.query(`UPDATE "user" SET is_super_admin = true WHERE id = $1`, [principal.userId]);
  return { ...principal, isSuperAdmin: true };
}

describe("restore from repository files", () => {
  let source: TestServices;
  let target: TestServices;
  let files: Map<string, string>;

  before(async () => {
    source = await createTestServices();
    const ctx: RestoreContext = { ...source, secrets: createKeyring(KEY) };
    const { membership } = await createTestMember(source, "acme");
    await createGroup(ctx, membership, { name: "oncall", summary: "On call" });
    await addGroupMember(ctx, membership, "oncall", membership.principal.username);
    await createFolder(ctx, membership, {
      name: "ops",
      summary: "Operations",
      extraPerms: { "g/oncall": false },
    });
    await deployScript(ctx, membership, {
      path: "f/ops/hello",
      language: "bash",
      content: 'name="$1"\necho "hello $name"\n',
      summary: "Says hello",
    });
    await deployScript(ctx, membership, {
      path: "f/ops/sum",
      language: "python3",
      content: "def main(a: int, b: int = 2):\n    return a + b\n",
    });
    await createResourceType(ctx, membership, {
      name: "c_api",
      schema: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
      description: "An API",
    });
    await createResource(ctx, membership, {
      path: "f/ops/api",
      resourceType: "c_api",
      value: { url: "https://x" },
    });
    await createVariable(ctx, membership, { path: "f/ops/plain", value: "visible" });
    await createVariable(ctx, membership, { path: "f/ops/token", value: "s3cr3t-value", isSecret: true });
    await createSchedule(ctx, membership, {
      path: "f/ops/nightly",
      schedule: "0 0 3 * * *",
      scriptPath: "f/ops/hello",
      args: { name: "night" },
      enabled: false,
    });
    const flow = (greeting: string) => ({
      path: "f/ops/greet_all",
      summary: "Greets everyone",
      schema: { type: "object", properties: { names: { type: "array" } }, required: ["names"] },
      value: {
        modules: [
          {
            id: "a",
            value: {
              type: "forloopflow",
              iterator: { type: "javascript", expr: "flow_input.names" },
              skip_failures: false,
              modules: [
                {
                  id: "b",
                  value: {
                    type: "script",
                    path: "f/ops/hello",
                    input_transforms: { name: { type: "javascript", expr: "flow_input.iter.value" } },
                  },
                },
              ],
            },
          },
          {
            id: "c",
            summary: "Count",
            value: {
              type: "rawscript",
              language: "python3",
              content: `def main(greetings):\n    return "${greeting}: " + str(len(greetings))\n`,
              input_transforms: { greetings: { type: "javascript", expr: "results.a" } },
            },
          },
        ],
      },
    });
    await createFlow(ctx, membership, flow("draft"));
    await updateFlow(ctx, membership, "f/ops/greet_all", flow("greeted"));
    files = await readRepositoryFiles(source.pool, "acme", { instanceConfig: true });
    target = await createTestServices();
  });
  after(async () => {
    await source?.close();
    await target?.close();
  });

  it("brings everything back into an empty instance: the export is byte for byte the same", async () => {
    const ctx: RestoreContext = { ...target, secrets: createKeyring(KEY) };
    const checked = await restoreWorkspaceFiles(ctx, await superadmin(target), files, {
      scope: "instance",
      dryRun: true,
    });
    assert.equal(checked.applied, false);
    assert.deepEqual(checked.diff.added, [...files.keys()].sort());
    const none = await target.pool.query("SELECT 1 FROM workspace WHERE id = 'acme'");
    assert.equal(none.rows.length, 0, "a dry run creates nothing");
    const report = await restoreWorkspaceFiles(ctx, await superadmin(target), files, { scope: "instance" });
    assert.deepEqual(report.errors, []);
    assert.equal(report.applied, true);
    assert.deepEqual(report.undecryptableSecrets, []);
    assert.equal(report.usersNeedingPasswordReset.length, 1);
    const restored = await readRepositoryFiles(target.pool, "acme", { instanceConfig: true });
    assert.deepEqual([...restored.keys()].sort(), [...files.keys()].sort());
    for (const [file, text] of files) assert.equal(restored.get(file), text, file);
    // The secret decrypts with the same instance key.
    const { rows } = await target.pool.query<{ value: string }>(
      "SELECT value FROM variable WHERE workspace_id = 'acme' AND path = 'f/ops/token'",
    );
    assert.equal(await ctx.secrets.decrypt(target.pool, "acme", rows[0]!.value), "s3cr3t-value");
    // The flow: its latest version (what git holds) is version 1 here, deployed by its author.
    assert.ok(files.has("f/ops/greet_all__flow/flow.yaml"));
    assert.match(files.get("f/ops/greet_all__flow/count.py") ?? "", /greeted/);
    assert.equal(report.counts.flows, 1);
    const flows = await target.pool.query<{ edited_by: string; version_id: string; value: unknown }>(
      "SELECT edited_by, version_id, value FROM flow WHERE workspace_id = 'acme' AND path = 'f/ops/greet_all'",
    );
    assert.equal(flows.rows.length, 1);
    assert.ok(!flows.rows[0]!.edited_by.includes("superadmin"), flows.rows[0]!.edited_by);
    const versions = await target.pool.query(
      "SELECT id FROM flow_version WHERE workspace_id = 'acme' AND path = 'f/ops/greet_all'",
    );
    assert.equal(versions.rows.length, 1);
    assert.equal(String(versions.rows[0].id), String(flows.rows[0]!.version_id));

    // Restoring the same repository again changes nothing and needs no confirmation.
    const again = await restoreWorkspaceFiles(ctx, await superadmin(target), files, { scope: "instance" });
    assert.deepEqual(again.diff, { added: [], changed: [], deleted: [] });
    assert.equal(again.counts.script_versions_created, 0);
    assert.equal(again.counts.flow_versions_created, 0);
  });

  it("asks for confirmation before changing a workspace that differs, and shows the diff", async () => {
    const ctx: RestoreContext = { ...target, secrets: createKeyring(KEY) };
    const edited = new Map(files);
    edited.set("f/ops/hello.sh", 'echo "changed"\n');
    edited.delete("f/ops/plain.variable.yaml");
    edited.set("f/ops/greet_all__flow/count.py", 'def main(greetings):\n    return "edited"\n');
    const principal = await superadmin(target);
    const asked = await restoreWorkspaceFiles(ctx, principal, edited, { scope: "instance" });
    assert.equal(asked.applied, false);
    assert.equal(asked.needsConfirmation, true);
    assert.deepEqual(asked.diff, {
      added: [],
      changed: ["f/ops/greet_all__flow/count.py", "f/ops/hello.sh"],
      deleted: ["f/ops/plain.variable.yaml"],
    });
    const applied = await restoreWorkspaceFiles(ctx, principal, edited, { scope: "instance", yes: true });
    assert.equal(applied.applied, true);
    assert.equal(applied.counts.script_versions_created, 1);
    // A changed flow gets a new version; the previous one stays in its history.
    assert.equal(applied.counts.flow_versions_created, 1);
    const history = await target.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM flow_version WHERE workspace_id = 'acme' AND path = 'f/ops/greet_all'",
    );
    assert.equal(history.rows[0]!.n, 2);
    const stored = await target.pool.query<{ value: { modules: { value: { content?: string } }[] } }>(
      "SELECT value FROM flow WHERE workspace_id = 'acme' AND path = 'f/ops/greet_all'",
    );
    assert.match(stored.rows[0]!.value.modules[1]!.value.content ?? "", /edited/);
    const { rows } = await target.pool.query(
      "SELECT 1 FROM variable WHERE workspace_id = 'acme' AND path = 'f/ops/plain'",
    );
    assert.equal(rows.length, 0);
  });

  it("checks the whole repository first, names every bad file and field, and applies nothing", async () => {
    const fresh = await createTestServices();
    try {
      const ctx: RestoreContext = { ...fresh, secrets: createKeyring(KEY) };
      const bad = new Map(files);
      bad.set("f/ops/broken.variable.yaml", "value: [unclosed\n");
      bad.set("f/ops/what.widget.yaml", "x: 1\n");
      bad.set("f/ops/bad path!.sh", "echo hi\n");
      bad.set("f/ops/bad path!.script.yaml", "summary: ''\nlanguage: bash\n");
      bad.set("f/ops/api.resource.yaml", "value:\n  nourl: 1\ndescription: ''\nresource_type: c_api\n");
      // A flow calling a script the repository lacks is no fault (it fails when run, as in
      // Windmill); a step kind no one runs is.
      bad.set(
        "f/ops/bad_flow__flow/flow.yaml",
        "summary: ''\nvalue:\n  modules:\n    - id: x\n      value:\n        type: teleport\n        input_transforms: {}\n",
      );
      const otherKey = createKeyring("another-instance-key-abcdefghijklmnopqrstuvwxyz");
      const foreign = await otherKey.encrypt(fresh.pool, "acme", "elsewhere");
      await fresh.pool.query("DELETE FROM workspace_key");
      otherKey.forget(fresh.pool, "acme");
      bad.set("f/ops/token.variable.yaml", `value: ${foreign}\nis_secret: true\ndescription: ''\n`);
      const report = await restoreWorkspaceFiles(ctx, await superadmin(fresh), bad, { scope: "instance" });
      assert.equal(report.applied, false);
      const named = report.errors.map((e) => `${e.file}${e.field ? `#${e.field}` : ""}`);
      for (const expected of [
        "f/ops/broken.variable.yaml",
        "f/ops/what.widget.yaml",
        "f/ops/api.resource.yaml#value",
        "f/ops/token.variable.yaml#value",
        "f/ops/bad_flow__flow/flow.yaml",
      ])
        assert.ok(
          named.some((n) => n.startsWith(expected)),
          `${expected} not in ${named.join(", ")}`,
        );
      assert.ok(
        named.some((n) => n.includes("bad path!")),
        named.join(", "),
      );
      const { rows } = await fresh.pool.query("SELECT count(*)::int AS n FROM workspace WHERE id = 'acme'");
      assert.equal(rows[0].n, 0);
    } finally {
      await fresh.close();
    }
  });

  it("a workspace admin's push applies wmill's kinds only, with the workspace's tags and members", async () => {
    const ctx: RestoreContext = { ...target, secrets: createKeyring(KEY) };
    const { membership } = await createTestMember(target, "pushed");
    await target.pool.query(
      `INSERT INTO instance_setting (key, value, updated_at) VALUES ('custom_tags', '["secret-gpu(acme)"]', now())
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    );
    invalidateCustomTagsCache(target.pool);
    const files = new Map([
      ["f/ops/run.sh", "echo run\n"],
      [
        "f/ops/run.script.yaml",
        "summary: ''\ndescription: ''\nlock: ''\nkind: script\nschema: {}\ntag: secret-gpu\n",
      ],
      ["groups/team.group.yaml", "summary: null\nadmins: []\nmembers:\n  - u/stranger\n"],
      [WORKSPACE_META_FILE, "format: 1\nid: acme\nname: Not mine\n"],
    ]);
    const refused = await restoreWorkspaceFiles(ctx, membership.principal, files, {
      scope: "workspace",
      workspaceId: "pushed",
      membership,
    });
    assert.equal(refused.applied, false);
    const named = refused.errors.map((e) => `${e.file}#${e.field ?? ""}`);
    assert.ok(named.includes("f/ops/run.script.yaml#tag"), named.join(", "));
    assert.ok(named.includes("groups/team.group.yaml#members"), named.join(", "));
    // The .millrace file of a push is ignored: it never reaches another workspace.
    assert.equal(refused.workspaceId, "pushed");
    await rejectsWith(
      restoreWorkspaceFiles(ctx, membership.principal, files, {
        scope: "workspace",
        workspaceId: "acme",
        membership,
      }),
      "FORBIDDEN",
    );
  });

  it("imports a Windmill export: plain secrets only when said so, then encrypted on arrival", async () => {
    const ctx: RestoreContext = { ...target, secrets: createKeyring(KEY) };
    const { membership } = await createTestMember(target, "imported");
    const windmill = new Map([
      [
        "f/app/api_key.variable.yaml",
        "value: c2VjcmV0IGZyb20gd2luZG1pbGw=\nis_secret: true\ndescription: ''\n",
      ],
    ]);
    const push = (plainSecrets: boolean) =>
      restoreWorkspaceFiles(ctx, membership.principal, windmill, {
        scope: "workspace",
        workspaceId: "imported",
        membership,
        plainSecrets,
      });
    const refused = await push(false);
    assert.equal(refused.applied, false);
    assert.equal(refused.errors[0]?.field, "value");
    assert.match(refused.errors[0]!.message, /--plain-secrets/);
    const imported = await push(true);
    assert.equal(imported.applied, true, JSON.stringify(imported.errors));
    const { rows } = await target.pool.query<{ value: string }>(
      "SELECT value FROM variable WHERE workspace_id = 'imported' AND path = 'f/app/api_key'",
    );
    assert.match(rows[0]!.value, /^enc:v2:/);
    assert.equal(
      await ctx.secrets.decrypt(target.pool, "imported", rows[0]!.value),
      "c2VjcmV0IGZyb20gd2luZG1pbGw=",
    );
  });

  it("without the instance key, completes and lists the secrets it could not decrypt", async () => {
    const fresh = await createTestServices();
    try {
      const ctx: RestoreContext = {
        ...fresh,
        secrets: createKeyring("a-different-instance-key-0123456789abcdefgh"),
      };
      const report = await restoreWorkspaceFiles(ctx, await superadmin(fresh), files, { scope: "instance" });
      assert.deepEqual(report.errors, []);
      assert.equal(report.applied, true);
      assert.deepEqual(report.undecryptableSecrets, ["f/ops/token"]);
      const { rows } = await fresh.pool.query<{ value: string }>(
        "SELECT value FROM variable WHERE workspace_id = 'acme' AND path = 'f/ops/token'",
      );
      assert.equal(rows[0]!.value, "");
      assert.ok(files.get(WORKSPACE_META_FILE)?.includes("wrapped_key: wk:v1:"));
    } finally {
      await fresh.close();
    }
  });
});
