// Server-side git sync against a real git remote over smart HTTP with Basic auth.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startTestGitRemote, type TestGitRemote } from "@millrace/sync/testing/git-remote";
import { archiveFlow, createFlow, deleteFlow, updateFlow } from "../flows/store.ts";
import { archiveScriptByPath, deployScript, latestScript } from "../scripts.ts";
import { createVariable, updateVariable } from "../variables/variables.ts";
import { createKeyring } from "../secrets/index.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import type { Membership } from "../membership.ts";
import type { SecretsContext } from "../secrets/context.ts";
import { dueGitSyncs, getGitSyncStatus, requestGitSync, runGitSync, setGitSyncSettings } from "./git-sync.ts";

const KEY = "git-sync-test-instance-key-0123456789abcdef";

describe("git sync", () => {
  let services: TestServices;
  let ctx: SecretsContext & TestServices;
  let admin: Membership;
  let remote: TestGitRemote;
  let cacheDir: string;
  const sync = () => runGitSync(ctx, "acme", { cacheDir });

  async function deploy(pathName: string, content: string) {
    const latest = await latestScript(ctx, "acme", pathName);
    return deployScript(ctx, admin, { path: pathName, language: "bash", content, parentHash: latest?.hash });
  }

  before(async () => {
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    ({ membership: admin } = await createTestMember(services, "acme"));
    await services.pool.query(`UPDATE "user" SET name = 'Ada Admin' WHERE id = $1`, [admin.principal.userId]);
    remote = await startTestGitRemote({ username: "sync", password: "right-token" });
    cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-git-sync-test-"));
    await setGitSyncSettings(ctx, admin, {
      remote_url: remote.url,
      username: "sync",
      password: "right-token",
    });
  });
  after(async () => {
    await remote?.close();
    await services?.close();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  it("a first run commits the workspace; the password is never answered", async () => {
    const result = await sync();
    assert.equal(result.status, "success", result.error);
    assert.ok((await remote.listFiles()).includes(".millrace/workspace.yaml"));
    const status = await getGitSyncStatus(ctx, admin);
    assert.equal(status.settings?.has_secret, true);
    assert.doesNotMatch(JSON.stringify(status), /right-token/);
    assert.equal(status.last_commit, await remote.head());
  });

  it("a deploy becomes one commit authored by the deployer, a delete removes the files in its own commit", async () => {
    const before = (await remote.commits()).length;
    await deploy("u/" + admin.principal.username + "/hello", 'echo "hello"\n');
    assert.equal((await sync()).status, "success");
    const commits = await remote.commits();
    assert.equal(commits.length, before + 1);
    const base = `u/${admin.principal.username}/hello`;
    assert.equal(commits[0]!.authorEmail, admin.principal.email);
    assert.equal(commits[0]!.authorName, "Ada Admin");
    assert.equal(commits[0]!.message, `Create script ${base}`);
    assert.deepEqual(commits[0]!.files, [`${base}.script.yaml`, `${base}.sh`]);

    await archiveScriptByPath(ctx, admin, base);
    assert.equal((await sync()).status, "success");
    const after = await remote.commits();
    assert.equal(after.length, before + 2);
    assert.equal(after[0]!.message, `Delete script ${base}`);
    assert.deepEqual(
      after[0]!.changes.map((c) => c.status),
      ["D", "D"],
    );
    assert.equal(await remote.readFile(`${base}.sh`), null);
  });

  it("a rename is one commit that moves the file", async () => {
    const user = admin.principal.username;
    await createVariable(ctx, admin, { path: `u/${user}/old_name`, value: "v" });
    assert.equal((await sync()).status, "success");
    await updateVariable(ctx, admin, `u/${user}/old_name`, { path: `u/${user}/new_name` });
    assert.equal((await sync()).status, "success");
    const [commit] = await remote.commits();
    assert.equal(commit!.message, `Rename variable u/${user}/old_name to u/${user}/new_name`);
    assert.deepEqual(commit!.files, [`u/${user}/new_name.variable.yaml`, `u/${user}/old_name.variable.yaml`]);
    assert.equal(await remote.readFile(`u/${user}/old_name.variable.yaml`), null);
  });

  it("flows: create, update, archive, unarchive and delete are one commit each, as __flow/ folders with inline step files", async () => {
    const base = `u/${admin.principal.username}/pipeline`;
    const flow = (greeting: string) => ({
      summary: "Pipeline",
      value: {
        modules: [
          {
            id: "a",
            summary: "Greet",
            value: {
              type: "rawscript",
              language: "bash",
              content: `echo "${greeting}"\n`,
              input_transforms: {},
            },
          },
          {
            id: "b",
            value: {
              type: "forloopflow",
              iterator: { type: "javascript", expr: "[1, 2]" },
              skip_failures: false,
              modules: [
                {
                  id: "c",
                  value: {
                    type: "rawscript",
                    language: "python3",
                    content: "def main(x):\n    return x\n",
                    input_transforms: { x: { type: "javascript", expr: "flow_input.iter.value" } },
                  },
                },
              ],
            },
          },
        ],
      },
    });
    await createFlow(ctx, admin, { path: base, ...flow("hello") });
    assert.equal((await sync()).status, "success");
    let [commit] = await remote.commits();
    assert.equal(commit!.message, `Create flow ${base}`);
    assert.equal(commit!.authorEmail, admin.principal.email);
    assert.deepEqual(commit!.files, [
      `${base}__flow/c.py`,
      `${base}__flow/flow.yaml`,
      `${base}__flow/greet.sh`,
    ]);
    assert.match((await remote.readFile(`${base}__flow/flow.yaml`)) ?? "", /content: '!inline greet\.sh'/);
    assert.equal(await remote.readFile(`${base}__flow/greet.sh`), 'echo "hello"\n');

    await updateFlow(ctx, admin, base, { ...flow("bonjour") });
    assert.equal((await sync()).status, "success");
    [commit] = await remote.commits();
    assert.equal(commit!.message, `Update flow ${base}`);
    assert.deepEqual(commit!.files, [`${base}__flow/greet.sh`]);
    assert.equal(await remote.readFile(`${base}__flow/greet.sh`), 'echo "bonjour"\n');

    // A rename moves the folder in one commit.
    await updateFlow(ctx, admin, base, { ...flow("bonjour"), path: `${base}_v2` });
    assert.equal((await sync()).status, "success");
    [commit] = await remote.commits();
    assert.equal(commit!.message, `Rename flow ${base} to ${base}_v2`);
    assert.deepEqual(commit!.files, [
      `${base}__flow/c.py`,
      `${base}__flow/flow.yaml`,
      `${base}__flow/greet.sh`,
      `${base}_v2__flow/c.py`,
      `${base}_v2__flow/flow.yaml`,
      `${base}_v2__flow/greet.sh`,
    ]);
    await updateFlow(ctx, admin, `${base}_v2`, { ...flow("bonjour"), path: base });
    assert.equal((await sync()).status, "success");

    await archiveFlow(ctx, admin, base);
    assert.equal((await sync()).status, "success");
    [commit] = await remote.commits();
    assert.equal(commit!.message, `Delete flow ${base}`);
    assert.equal(await remote.readFile(`${base}__flow/flow.yaml`), null);

    await archiveFlow(ctx, admin, base, false);
    assert.equal((await sync()).status, "success");
    assert.equal((await remote.commits())[0]!.message, `Restore flow ${base}`);
    assert.ok(await remote.readFile(`${base}__flow/flow.yaml`));

    await deleteFlow(ctx, admin, base);
    assert.equal((await sync()).status, "success");
    [commit] = await remote.commits();
    assert.equal(commit!.message, `Delete flow ${base}`);
    assert.deepEqual(
      commit!.changes.map((c) => c.status),
      ["D", "D", "D"],
    );
    assert.ok(!(await remote.listFiles()).some((f) => f.startsWith(`${base}__flow/`)));
  });

  it("remote down: the deploy succeeds, the run fails visibly, and the commit arrives once it is back", async () => {
    await remote.stop();
    await deploy("u/" + admin.principal.username + "/down", "echo down\n");
    const failed = await sync();
    assert.equal(failed.status, "failure");
    let status = await getGitSyncStatus(ctx, admin);
    assert.ok(status.last_error, "last_error is set");
    assert.equal(status.failures, 1);
    assert.ok(status.next_attempt_at! > new Date(), "the next attempt waits (backoff)");
    assert.equal(status.runs[0]!.status, "failure");
    assert.equal(status.pending_changes, 1);
    const { rows } = await services.pool.query(
      "SELECT 1 FROM audit_log WHERE workspace_id = 'acme' AND operation = 'git_sync.failure'",
    );
    assert.equal(rows.length, 1);

    await remote.start();
    const recovered = await sync();
    assert.equal(recovered.status, "success", recovered.error);
    assert.equal((await remote.commits())[0]!.message, `Create script u/${admin.principal.username}/down`);
    status = await getGitSyncStatus(ctx, admin);
    assert.equal(status.last_error, null);
    assert.equal(status.failures, 0);
    assert.equal(status.pending_changes, 0);
  });

  it("wrong credentials: fails with a message that says what to check, then recovers", async () => {
    await setGitSyncSettings(ctx, admin, { remote_url: remote.url, username: "sync", password: "wrong" });
    await deploy("u/" + admin.principal.username + "/creds", "echo creds\n");
    const failed = await sync();
    assert.equal(failed.status, "failure");
    assert.match(failed.error!, /check the username and the token or password/);
    assert.doesNotMatch(failed.error!, /wrong/);
    await setGitSyncSettings(ctx, admin, {
      remote_url: remote.url,
      username: "sync",
      password: "right-token",
    });
    assert.equal((await sync()).status, "success");
    assert.ok(await remote.readFile(`u/${admin.principal.username}/creds.sh`));
  });

  it("the superadmin options: only a superadmin turns one on, and an admin's save keeps them", async () => {
    await rejectsWith(
      setGitSyncSettings(ctx, admin, { remote_url: remote.url, include_instance_config: true }),
      "FORBIDDEN",
      "include_instance_config",
    );
    const superadmin = { ...admin, principal: { ...admin.principal, isSuperAdmin: true } };
    await setGitSyncSettings(ctx, superadmin, { remote_url: remote.url, include_instance_config: true });
    const saved = await setGitSyncSettings(ctx, admin, { remote_url: remote.url, branch: "main" });
    assert.equal(saved.settings?.include_instance_config, true);
    assert.equal(saved.settings?.has_secret, true, "a save without a password keeps the stored one");
    const off = await setGitSyncSettings(ctx, admin, {
      remote_url: remote.url,
      include_instance_config: false,
    });
    assert.equal(off.settings?.include_instance_config, false);
    const synced = await sync();
    assert.equal(synced.status, "success", synced.error);
  });

  it("the loop finds the workspaces with work: a change waiting, and never a deleted workspace", async () => {
    await deploy(`u/${admin.principal.username}/due`, "echo due\n");
    assert.ok((await dueGitSyncs(services.pool, 300_000)).includes("acme"));
    await services.pool.query("UPDATE workspace SET deleted = true WHERE id = 'acme'");
    assert.ok(!(await dueGitSyncs(services.pool, 300_000)).includes("acme"));
    await services.pool.query("UPDATE workspace SET deleted = false WHERE id = 'acme'");
    assert.equal((await sync()).status, "success");
  });

  it("someone else pushed: other files are rebased on, the same file is a conflict and nothing is overwritten", async () => {
    await remote.commitAsOther({ files: { "README.md": "# ops\n" }, message: "Add a README" });
    await deploy("u/" + admin.principal.username + "/rebased", "echo rebased\n");
    const rebased = await sync();
    assert.equal(rebased.status, "success", rebased.error);
    assert.equal(await remote.readFile("README.md"), "# ops\n");
    assert.ok(await remote.readFile(`u/${admin.principal.username}/rebased.sh`));

    const file = `u/${admin.principal.username}/rebased.sh`;
    await remote.commitAsOther({ files: { [file]: "echo theirs\n" }, message: "Edit on the remote" });
    await deploy("u/" + admin.principal.username + "/rebased", "echo ours\n");
    const conflict = await sync();
    assert.equal(conflict.status, "failure");
    const status = await getGitSyncStatus(ctx, admin);
    assert.deepEqual(status.conflict_paths, [file]);
    assert.equal(await remote.readFile(file), "echo theirs\n");

    // "Sync now" is accepted and runs again (still conflicting until someone resolves it).
    await requestGitSync(ctx, admin);
    assert.equal((await sync()).status, "failure");
  });
});
