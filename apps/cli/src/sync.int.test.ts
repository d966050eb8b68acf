// `millrace sync pull|push` with the real CLI (a child process) against the REST router: a pull
// into an empty folder, an edit pushed back (a confirmation first: exit 6 without --yes), a
// second push with nothing to do, and a broken repository refused whole (exit 5, every file named).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createApiToken,
  createFlow,
  createKeyring,
  createVariable,
  deployScript,
  latestScript,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, type TestApi } from "@millrace/worker/testing";
import { runCli } from "./testing.ts";

const KEY = "sync-cli-instance-key-0123456789abcdefghij";

describe("millrace sync pull and push", () => {
  let services: TestServices;
  let membership: Membership;
  let api: TestApi;
  let dir: string;
  let args: string[];

  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "synccli"));
    const ctx = { ...services, secrets: createKeyring(KEY) };
    await deployScript(ctx, membership, {
      path: "u/" + membership.principal.username + "/hi",
      language: "bash",
      content: "echo hi\n",
    });
    await createVariable(ctx, membership, {
      path: "u/" + membership.principal.username + "/key",
      value: "k3y",
      isSecret: true,
    });
    await createFlow(ctx, membership, {
      path: "u/" + membership.principal.username + "/twice",
      value: {
        modules: [
          {
            id: "a",
            summary: "Say",
            value: { type: "rawscript", language: "bash", content: "echo once\n", input_transforms: {} },
          },
        ],
      },
    });
    const token = await createApiToken(services, membership.principal, { label: "sync cli" });
    api = await startTestApi(services.database.url, KEY);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-sync-cli-"));
    args = ["--url", api.url, "--token", token, "-w", "synccli"];
  });
  after(async () => {
    await api?.close();
    await services?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("pulls into an empty folder, in wmill's layout, secrets encrypted", async () => {
    const run = await runCli([...args, "sync", "pull", dir]);
    assert.equal(run.code, 0, run.stderr);
    const base = path.join(dir, "u", membership.principal.username);
    assert.equal(fs.readFileSync(path.join(base, "hi.sh"), "utf8"), "echo hi\n");
    assert.match(fs.readFileSync(path.join(base, "key.variable.yaml"), "utf8"), /enc:v2:/);
    assert.ok(fs.existsSync(path.join(dir, "wmill.yaml")));
    assert.equal(fs.readFileSync(path.join(base, "twice__flow", "say.sh"), "utf8"), "echo once\n");
    assert.match(fs.readFileSync(path.join(base, "twice__flow", "flow.yaml"), "utf8"), /'!inline say\.sh'/);
    const again = await runCli([...args, "sync", "pull", dir]);
    assert.match(again.stdout, /0 changes/);
  });

  it("pushes an edit after a confirmation, and a second push changes nothing", async () => {
    const user = membership.principal.username;
    fs.writeFileSync(path.join(dir, "u", user, "hi.sh"), "echo edited\n");
    fs.writeFileSync(path.join(dir, "u", user, "twice__flow", "say.sh"), "echo twice\n");
    const unconfirmed = await runCli([...args, "sync", "push", dir]);
    assert.equal(unconfirmed.code, 6, unconfirmed.stderr);
    assert.match(unconfirmed.stderr, new RegExp(`~ u/${user}/hi.sh`));
    assert.match(unconfirmed.stderr, /--yes/);
    const pushed = await runCli([...args, "--json", "sync", "push", dir, "--yes"]);
    assert.equal(pushed.code, 0, pushed.stderr);
    const counts = (JSON.parse(pushed.stdout) as { counts: Record<string, number> }).counts;
    assert.equal(counts.script_versions_created, 1);
    assert.equal(counts.flow_versions_created, 1);
    const flow = await services.pool.query<{ value: { modules: { value: { content: string } }[] } }>(
      "SELECT value FROM flow WHERE workspace_id = 'synccli'",
    );
    assert.equal(flow.rows[0]!.value.modules[0]!.value.content, "echo twice\n");
    assert.equal((await latestScript(services, "synccli", `u/${user}/hi`))?.content, "echo edited\n");

    const versions = await services.pool.query(
      "SELECT count(*)::int AS n FROM script WHERE workspace_id = 'synccli'",
    );
    const second = await runCli([...args, "--json", "sync", "push", dir]);
    assert.equal(second.code, 0, second.stderr);
    const after = await services.pool.query(
      "SELECT count(*)::int AS n FROM script WHERE workspace_id = 'synccli'",
    );
    assert.equal(after.rows[0].n, versions.rows[0].n);
  });

  it("refuses a broken repository whole, naming every file, and applies nothing", async () => {
    const user = membership.principal.username;
    fs.writeFileSync(path.join(dir, "u", user, "broken.variable.yaml"), "value: [oops\n");
    fs.writeFileSync(path.join(dir, "u", user, "thing.widget.yaml"), "a: 1\n");
    fs.writeFileSync(path.join(dir, "u", user, "hi.sh"), "echo not applied\n");
    const run = await runCli([...args, "sync", "push", dir, "--yes"]);
    assert.equal(run.code, 5, run.stderr);
    assert.match(run.stderr, /broken\.variable\.yaml/);
    assert.match(run.stderr, /thing\.widget\.yaml/);
    assert.match(run.stderr, /fix the files/);
    assert.equal((await latestScript(services, "synccli", `u/${user}/hi`))?.content, "echo edited\n");
  });
});
