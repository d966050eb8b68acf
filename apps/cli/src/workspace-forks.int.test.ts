// What `wmill workspace fork` / `wmill workspace merge` / `wmill workspace delete-fork` call, through
// windmill-client's WorkspaceService (the generated services wmill bundles) against a live
// Millrace: a fork copies the parent's content (schedules disabled, secrets re-encrypted), a change
// in the fork shows in the comparison, and deleting the fork leaves no row carrying its id while
// the other workspaces keep every row.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createApiToken,
  createFolder,
  createGroup,
  createKeyring,
  createSchedule,
  createUser,
  createVariable,
  createWorkspace,
  deployScript,
  principalOf,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, type TestApi } from "@millrace/worker/testing";
import * as wmillClient from "windmill-client";
import { runWmill } from "./testing.ts";

const KEY = "workspace-forks-instance-key-0123456789ab";
const PARENT = "forkparent";
const OTHER = "bystander";
const FORK = "wm-fork-try";

describe("Windmill's workspace forks and workspace delete", () => {
  let services: TestServices;
  let api: TestApi;
  let admin: Membership;
  let developerToken: string;
  let token: string;
  const keyring = createKeyring(KEY);

  /** Rows per table carrying `workspace_id = id` (every table that has the column). */
  async function rowsOf(id: string): Promise<Record<string, number>> {
    const { rows: tables } = await services.pool.query<{ table_name: string }>(
      `SELECT c.table_name FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
        WHERE c.table_schema = current_schema() AND c.column_name = 'workspace_id' AND t.table_type = 'BASE TABLE'`,
    );
    const counts: Record<string, number> = {};
    for (const { table_name } of tables) {
      const { rows } = await services.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${table_name}" WHERE workspace_id = $1`,
        [id],
      );
      if (rows[0]!.n > 0) counts[table_name] = rows[0]!.n;
    }
    return counts;
  }

  before(async () => {
    services = await createTestServices();
    const ctx = { ...services, secrets: keyring };
    ({ membership: admin } = await createTestMember(services, PARENT));
    const principal = admin.principal;
    await createWorkspace(services, principal, { id: OTHER, name: "Bystander" });
    const other = { ...admin, workspace: { ...admin.workspace, id: OTHER } };
    for (const m of [admin, other]) {
      await createFolder(ctx, m, { name: "ops" });
      await deployScript(ctx, m, { path: "f/ops/greet", language: "bash", content: 'echo "hello $1"\n' });
      await createVariable(ctx, m, { path: "f/ops/token", value: "s3cr3t-value", isSecret: true });
    }
    await createVariable(ctx, admin, { path: "f/ops/plain", value: "one" });
    await createGroup(services, admin, { name: "oncall", summary: "on call" });
    await createSchedule(services, admin, {
      path: "f/ops/nightly",
      schedule: "0 0 3 * * *",
      scriptPath: "f/ops/greet",
      args: { x: "night" },
    });
    // A developer of the parent, who may not fork it.
    const dev = await createUser(services, { email: "dev@example.com", password: "password123" });
    await services.db.workspaceMember.create({
      data: { workspaceId: PARENT, userId: dev.id, role: "developer" },
    });
    developerToken = await createApiToken(services, principalOf(dev), { label: "dev" });
    token = await createApiToken(services, principal, { label: "forks" });
    api = await startTestApi(services.database.url, KEY);
    delete process.env.WM_JOB_ID;
    wmillClient.setClient(token, api.url);
  });
  after(async () => {
    await api?.close();
    await services?.close();
  });

  it("forks, compares, resets and deletes the fork with nothing left behind", async () => {
    const { WorkspaceService, ScriptService, VariableService, JobService, FlowService, ResourceService } =
      wmillClient;
    // More of the parent's content, through Windmill's own calls: a resource type, a resource, a flow.
    await ResourceService.createResourceType({
      workspace: PARENT,
      requestBody: {
        name: "acme",
        schema: { type: "object", properties: { host: { type: "string" } }, required: ["host"] },
        description: "Acme API",
      },
    });
    await ResourceService.createResource({
      workspace: PARENT,
      requestBody: { path: "f/ops/acme", resource_type: "acme", value: { host: "a.example" } },
    });
    await FlowService.createFlow({
      workspace: PARENT,
      requestBody: {
        path: "f/ops/pipeline",
        summary: "pipeline",
        value: {
          modules: [{ id: "a", value: { type: "script", path: "f/ops/greet", input_transforms: {} } }],
        },
      },
    });
    const otherBefore = await rowsOf(OTHER);

    // A developer cannot fork (the fork copies every item and secret of the parent).
    const refused = await fetch(`${api.url}/api/w/${PARENT}/workspaces/create_fork`, {
      method: "POST",
      headers: { authorization: `Bearer ${developerToken}`, "content-type": "application/json" },
      body: JSON.stringify({ id: "wm-fork-dev", name: "dev fork" }),
    });
    assert.equal(refused.status, 403, await refused.text());

    // wmill calls the branch endpoint first, then create_fork, with the same body.
    const body = { id: FORK, name: "My fork" };
    assert.deepEqual(
      await WorkspaceService.createWorkspaceForkGitBranch({ workspace: PARENT, requestBody: body }),
      [],
    );
    assert.equal(
      await WorkspaceService.createWorkspaceFork({ workspace: PARENT, requestBody: body }),
      `Created forked workspace ${FORK}`,
    );
    const { rows: forkRow } = await services.pool.query(
      "SELECT parent_workspace_id FROM workspace WHERE id = $1",
      [FORK],
    );
    assert.equal(forkRow[0]?.parent_workspace_id, PARENT);
    // `wmill workspace merge` finds the parent in the caller's workspace list.
    const listed = await WorkspaceService.listUserWorkspaces();
    assert.equal(listed.workspaces.find((w) => w.id === FORK)?.parent_workspace_id, PARENT);
    assert.equal(listed.workspaces.find((w) => w.id === PARENT)?.parent_workspace_id, null);
    const { rows: roles } = await services.pool.query(
      "SELECT role FROM workspace_member WHERE workspace_id = $1",
      [FORK],
    );
    assert.deepEqual(
      roles.map((r) => r.role),
      ["admin"],
    );

    // The content came along: script, folder, group, schedule (disabled), secret (re-encrypted).
    const script = await ScriptService.getScriptByPath({ workspace: FORK, path: "f/ops/greet" });
    assert.equal(script.content, 'echo "hello $1"\n');
    assert.equal(
      await VariableService.getVariableValue({ workspace: FORK, path: "f/ops/token" }),
      "s3cr3t-value",
    );
    const { rows: schedules } = await services.pool.query(
      "SELECT workspace_id, enabled FROM schedule WHERE path = 'f/ops/nightly' ORDER BY workspace_id",
    );
    assert.deepEqual(
      schedules.map((s) => [s.workspace_id, s.enabled]),
      [
        [PARENT, true],
        [FORK, false],
      ],
    );
    assert.equal(
      (await FlowService.getFlowByPath({ workspace: FORK, path: "f/ops/pipeline" })).summary,
      "pipeline",
    );
    assert.deepEqual((await ResourceService.getResource({ workspace: FORK, path: "f/ops/acme" })).value, {
      host: "a.example",
    });
    const { rows: groups } = await services.pool.query(`SELECT name FROM "group" WHERE workspace_id = $1`, [
      FORK,
    ]);
    assert.ok(groups.some((g) => g.name === "oncall"));

    // Nothing differs yet.
    const fresh = await WorkspaceService.compareWorkspaces({ workspace: PARENT, targetWorkspaceId: FORK });
    assert.equal(fresh.skipped_comparison, false);
    assert.equal(fresh.summary.total_diffs, 0, JSON.stringify(fresh.diffs));

    // A script changed in the fork is ahead; a variable changed in the parent is behind.
    await ScriptService.createScript({
      workspace: FORK,
      requestBody: {
        path: "f/ops/greet",
        summary: "",
        description: "",
        content: 'echo "hi from the fork $1"\n',
        language: "bash",
        parent_hash: script.hash,
      },
    });
    await VariableService.updateVariable({
      workspace: PARENT,
      path: "f/ops/plain",
      alreadyEncrypted: false,
      requestBody: { value: "two" },
    });
    const changed = await WorkspaceService.compareWorkspaces({ workspace: PARENT, targetWorkspaceId: FORK });
    const byKey = Object.fromEntries(changed.diffs.map((d) => [`${d.kind}:${d.path}`, d]));
    assert.deepEqual(Object.keys(byKey).sort(), ["script:f/ops/greet", "variable:f/ops/plain"]);
    assert.equal(byKey["script:f/ops/greet"]!.ahead, 1);
    assert.equal(byKey["script:f/ops/greet"]!.behind, 0);
    assert.equal(byKey["variable:f/ops/plain"]!.ahead, 0);
    assert.equal(byKey["variable:f/ops/plain"]!.behind, 1);
    assert.equal(changed.summary.scripts_changed, 1);
    assert.equal(changed.summary.variables_changed, 1);
    assert.equal(changed.summary.conflicts, 0);

    // The other direction is no lineage pair.
    await assert.rejects(
      WorkspaceService.compareWorkspaces({ workspace: FORK, targetWorkspaceId: PARENT }),
      (error: { status?: number }) => error.status === 400,
    );

    // After a merge, wmill resets the tally: what differs now counts from here.
    await WorkspaceService.resetDiffTally({ workspace: PARENT, forkWorkspaceId: FORK });
    const reset = await WorkspaceService.compareWorkspaces({ workspace: PARENT, targetWorkspaceId: FORK });
    assert.ok(reset.diffs.every((d) => d.ahead === 0 && d.behind === 0));

    // A job in the fork (queued: no worker here) is part of what the delete removes.
    await JobService.runScriptByPath({ workspace: FORK, path: "f/ops/greet", requestBody: {} });
    const forkRows = await rowsOf(FORK);
    for (const table of [
      "script",
      "flow",
      "resource",
      "resource_type",
      "folder",
      "variable",
      "schedule",
      "group",
      "workspace_member",
      "job",
    ])
      assert.ok(forkRows[table]! > 0, `the fork has ${table} rows: ${JSON.stringify(forkRows)}`);
    const parentBefore = await rowsOf(PARENT);

    // Not a fork: its admin (no superadmin) may not delete it.
    await assert.rejects(
      WorkspaceService.deleteWorkspace({ workspace: OTHER }),
      (error: { status?: number }) => error.status === 403,
    );
    await assert.rejects(
      WorkspaceService.deleteWorkspace({ workspace: PARENT, onlyDeleteForks: true }),
      (error: { status?: number }) => error.status === 403 || error.status === 400,
    );

    // wmill workspace delete-fork: the fork's admin deletes it.
    assert.equal(await WorkspaceService.deleteWorkspace({ workspace: FORK }), `Deleted workspace ${FORK}`);
    assert.deepEqual(await rowsOf(FORK), {});
    const { rowCount } = await services.pool.query("SELECT 1 FROM workspace WHERE id = $1", [FORK]);
    assert.equal(rowCount, 0);
    // The others keep every row (the parent gains only the audit rows of the delete).
    assert.deepEqual(await rowsOf(OTHER), otherBefore);
    const parentAfter = await rowsOf(PARENT);
    assert.equal(parentAfter.audit_log, (parentBefore.audit_log ?? 0) + 1);
    assert.deepEqual({ ...parentAfter, audit_log: 0 }, { ...parentBefore, audit_log: 0 });
    const { rows: audit } = await services.pool.query(
      "SELECT operation FROM audit_log WHERE workspace_id = $1 AND resource = $2 ORDER BY id",
      [PARENT, FORK],
    );
    assert.deepEqual(
      audit.map((a) => a.operation),
      ["workspaces.fork", "workspaces.reset_diff_tally", "workspaces.delete"],
    );
    await assert.rejects(
      WorkspaceService.deleteWorkspace({ workspace: FORK }),
      (error: { status?: number }) => error.status === 404,
    );
  });

  it("the real wmill: workspace fork, merge (fork → parent) and delete-fork", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-fork-"));
    const repo = path.join(home, "repo");
    fs.mkdirSync(repo);
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      WMILL_CONFIG_DIR: path.join(home, ".config"),
      NO_COLOR: "1",
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    };
    const git = (...args: string[]) => {
      const run = spawnSync("git", args, { cwd: repo, env, encoding: "utf8" });
      assert.equal(run.status, 0, `git ${args.join(" ")}: ${run.stderr}`);
    };
    const wmill = (args: string[]) =>
      runWmill(args, {
        cwd: repo,
        home,
        env: {
          GIT_AUTHOR_NAME: "t",
          GIT_AUTHOR_EMAIL: "t@example.com",
          GIT_COMMITTER_NAME: "t",
          GIT_COMMITTER_EMAIL: "t@example.com",
        },
      });
    const ok = async (args: string[]) => {
      const run = await wmill(args);
      assert.equal(run.code, 0, `wmill ${args.join(" ")}:\n${run.output}`);
      return run.output;
    };
    try {
      git("init", "-q", "-b", "main");
      fs.writeFileSync(
        path.join(repo, "wmill.yaml"),
        `defaultTs: bun\nworkspaces:\n  main:\n    baseUrl: ${api.url}/\n    workspaceId: ${PARENT}\n`,
      );
      git("add", "wmill.yaml");
      git("commit", "-q", "-m", "init");
      await ok(["workspace", "add", "parent", PARENT, `${api.url}/`, "--token", token]);

      const forked = await ok(["workspace", "fork", "CLI fork", "cli", "--yes"]);
      assert.match(forked, /Created forked workspace wm-fork-cli/);
      const { rows } = await services.pool.query("SELECT parent_workspace_id FROM workspace WHERE id = $1", [
        "wm-fork-cli",
      ]);
      assert.equal(rows[0]?.parent_workspace_id, PARENT);

      // A change in the fork, merged into the parent by wmill.
      const { ScriptService } = wmillClient;
      const current = await ScriptService.getScriptByPath({ workspace: "wm-fork-cli", path: "f/ops/greet" });
      await ScriptService.createScript({
        workspace: "wm-fork-cli",
        requestBody: {
          path: "f/ops/greet",
          summary: "",
          description: "",
          content: 'echo "merged from the fork $1"\n',
          language: "bash",
          parent_hash: current.hash,
        },
      });
      git("checkout", "-q", "-b", "wm-fork/main/cli");
      const merged = await ok(["workspace", "merge", "--yes", "--direction", "to-parent"]);
      assert.match(merged, /script:f\/ops\/greet/);
      const parentScript = await ScriptService.getScriptByPath({ workspace: PARENT, path: "f/ops/greet" });
      assert.equal(parentScript.content, 'echo "merged from the fork $1"\n');
      // The merge reset the tally and the two agree again.
      assert.match(await ok(["workspace", "merge", "--yes"]), /Everything is up to date/);

      await ok(["workspace", "delete-fork", "cli", "--yes"]);
      assert.deepEqual(await rowsOf("wm-fork-cli"), {});
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it("a superadmin deletes any workspace but admins; the others keep their rows", async () => {
    const boss = await createUser(services, {
      email: "boss@example.com",
      password: "password123",
      superAdmin: true,
    });
    const bossToken = await createApiToken(services, principalOf(boss), { label: "boss" });
    const del = (id: string, query = "") =>
      fetch(`${api.url}/api/workspaces/delete/${id}${query}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${bossToken}` },
      });
    const parentBefore = await rowsOf(PARENT);
    assert.ok(Object.keys(await rowsOf(OTHER)).length > 0);
    // only_delete_forks refuses a workspace that is no fork, even to a superadmin.
    const refused = await del(OTHER, "?only_delete_forks=true");
    assert.equal(refused.status, 400, await refused.text());
    const admins = await del("admins");
    assert.equal(admins.status, 403, await admins.text());
    const deleted = await del(OTHER);
    assert.deepEqual([deleted.status, await deleted.text()], [200, `Deleted workspace ${OTHER}`]);
    assert.deepEqual(await rowsOf(OTHER), {});
    assert.deepEqual(await rowsOf(PARENT), parentBefore);
    // The delete is audited at the instance level (no workspace left to hold it).
    const { rows } = await services.pool.query(
      "SELECT workspace_id FROM audit_log WHERE operation = 'workspaces.delete' AND resource = $1",
      [OTHER],
    );
    assert.deepEqual(rows, [{ workspace_id: null }]);
    assert.equal((await del(OTHER)).status, 404);
  });

  it("a flow and a schedule whose script was archived are left out of the fork, which is still made", async () => {
    const { ScriptService, ScheduleService, WorkspaceService } = wmillClient;
    await ScriptService.createScript({
      workspace: PARENT,
      requestBody: {
        path: "f/ops/gone",
        summary: "",
        description: "",
        content: "echo gone\n",
        language: "bash",
      },
    });
    await ScheduleService.createSchedule({
      workspace: PARENT,
      requestBody: {
        path: "f/ops/dangling",
        schedule: "0 0 4 * * *",
        timezone: "UTC",
        script_path: "f/ops/gone",
        is_flow: false,
        args: {},
      },
    });
    await wmillClient.FlowService.createFlow({
      workspace: PARENT,
      requestBody: {
        path: "f/ops/uses_gone",
        summary: "",
        value: {
          modules: [{ id: "a", value: { type: "script", path: "f/ops/gone", input_transforms: {} } }],
        },
      },
    });
    await ScriptService.archiveScriptByPath({ workspace: PARENT, path: "f/ops/gone" });
    const id = "wm-fork-dangling";
    assert.equal(
      await WorkspaceService.createWorkspaceFork({
        workspace: PARENT,
        requestBody: { id, name: "dangling" },
      }),
      `Created forked workspace ${id}`,
    );
    const { rows } = await services.pool.query(
      "SELECT path FROM schedule WHERE workspace_id = $1 ORDER BY path",
      [id],
    );
    assert.deepEqual(
      rows.map((r) => r.path),
      ["f/ops/nightly"],
    );
    const { rows: audit } = await services.pool.query(
      "SELECT parameters->'left_out' AS left_out FROM audit_log WHERE operation = 'workspaces.fork' AND resource = $1",
      [id],
    );
    assert.deepEqual(audit, [{ left_out: ["flow:f/ops/uses_gone", "schedule:f/ops/dangling"] }]);
    const { rows: flows } = await services.pool.query("SELECT path FROM flow WHERE workspace_id = $1", [id]);
    assert.deepEqual(
      flows.map((f) => f.path),
      ["f/ops/pipeline"],
    );
    assert.equal(await WorkspaceService.deleteWorkspace({ workspace: id }), `Deleted workspace ${id}`);
    assert.deepEqual(await rowsOf(id), {});
  });
});
