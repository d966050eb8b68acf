// `wmill sync push` of a repository shaped like windmill-labs/windmill-sync-example (the fixture in
// fixtures/windmill-sync-example-like, written for Millrace), twice, with the real wmill 1.819
// against a live Millrace with a real worker: the first push imports everything but the app, the
// second reports 0 changes and makes no new script or flow version. Once as the fixture is
// (`defaultTs: bun`), once as a team with `defaultTs: deno` holds it.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  addMember,
  createApiToken,
  createKeyring,
  createUser,
  createWorkspace,
  folderLevel,
  listFolders,
  principalOf,
  requireMembership,
} from "@millrace/core";
import { createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import { changeLines, copyRepository, FIXTURE_DIR } from "./sync-example.ts";
import { runWmill } from "./testing.ts";

const KEY = "wmill-sync-example-instance-key-0123456789ab";

describe("wmill sync push of a windmill-sync-example-like repository", () => {
  let services: TestServices;
  let api: TestApi;
  let worker: TestWorker;
  let home: string;
  let principal: ReturnType<typeof principalOf>;
  let token: string;

  before(async () => {
    services = await createTestServices();
    const ctx = { ...services, secrets: createKeyring(KEY) };
    // The importing team's admin is `importer`: the repository's `u/admin` is nobody here.
    const admin = await createUser(ctx, { email: "importer@example.com", password: "importer-password-1" });
    principal = principalOf(admin);
    token = await createApiToken(services, principal, { label: "sync example" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: api.url,
    });
    home = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-sync-example-"));
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  const ctx = () => ({ ...services, secrets: createKeyring(KEY) });

  async function push(repo: string, ws: string, extra: string[] = []) {
    const run = await runWmill(
      ["sync", "push", "--yes", "--skip-branch-validation", "--plain-secrets", "--skip-apps", ...extra],
      {
        cwd: repo,
        home,
        instance: { url: api.url, token, workspace: ws },
      },
    );
    return run;
  }
  async function versions(ws: string) {
    const { rows } = await services.pool.query<{ scripts: number; flows: number }>(
      `SELECT (SELECT count(*)::int FROM script WHERE workspace_id = $1) AS scripts,
              (SELECT count(*)::int FROM flow_version WHERE workspace_id = $1) AS flows`,
      [ws],
    );
    return rows[0]!;
  }

  /**
   * What a second push still changes, each with why; the test fails when this list is wrong either
   * way (something new differs, or one of these got fixed and must leave the list).
   */
  const STILL_DIFFERENT: Record<string, string> = {
    // wmill itself lists a script.yaml whose `lock:` is a list (older wmill wrote python locks so)
    // on every push, against Windmill as against Millrace: it joins the local list into one text,
    // while it always turns a server's non-empty lock into `!inline <path>.script.lock` (windmill-cli
    // 1.819's ZipFSElement), and lists the `.script.lock` it then has no file for as deleted. The
    // script itself is up to date: no version is made (asserted above). A script.yaml in the
    // current form (`lock: '!inline <path>.script.lock'` and the lock file) is not listed.
    "- script f/examples/shout.script.lock": "list-form lock",
    "- script f/examples/word_count.script.lock": "list-form lock",
    "~ script f/examples/shout.script.yaml": "list-form lock",
    "~ script f/examples/word_count.script.yaml": "list-form lock",
  };

  const variants = [
    { ws: "example", defaultTs: undefined },
    { ws: "exampledeno", defaultTs: "deno" as const },
  ];
  for (const variant of variants) {
    const name = `imports the repository (defaultTs: ${variant.defaultTs ?? "bun"}), its flow calling a hub script included, and a second push makes no new version and lists only the known differences`;
    it(name, async () => {
      const repo = path.join(home, variant.ws);
      copyRepository(FIXTURE_DIR, repo, { defaultTs: variant.defaultTs, without: [] });
      await createWorkspace(ctx(), principal, { id: variant.ws, name: variant.ws });

      const first = await push(repo, variant.ws);
      assert.equal(first.code, 0, `first push:\n${first.output}`);

      const { rows: scripts } = await services.pool.query<{ path: string; language: string }>(
        "SELECT DISTINCT path, language FROM script WHERE workspace_id = $1 ORDER BY path",
        [variant.ws],
      );
      assert.deepEqual(scripts, [
        { path: "f/a/greeter", language: "bun" },
        { path: "f/examples/plain_bun", language: "bun" },
        { path: "f/examples/shout", language: "deno" },
        { path: "f/examples/word_count", language: "python3" },
        { path: "f/foo/nested/deep", language: "bun" },
      ]);
      const { rows: flows } = await services.pool.query<{ path: string }>(
        "SELECT path FROM flow WHERE workspace_id = $1 ORDER BY path",
        [variant.ws],
      );
      assert.deepEqual(
        flows.map((f) => f.path),
        ["f/examples/empty_flow", "f/examples/hn_digest"],
      );
      const before = await versions(variant.ws);

      const second = await push(repo, variant.ws);
      assert.equal(second.code, 0, `second push:\n${second.output}`);
      // No new script or flow version, whatever wmill still lists.
      assert.deepEqual(await versions(variant.ws), before);
      // --plain-secrets: the tarball answered the secret in plain text (that is why it is not
      // listed), to this admin, and said so in the audit log.
      const { rows: reads } = await services.pool.query<{ actor: string }>(
        "SELECT actor FROM audit_log WHERE workspace_id = $1 AND operation = 'variables.decrypt_secret' AND resource = $2",
        [variant.ws, "f/examples/api_key"],
      );
      assert.ok(reads.length >= 1, "the plain-text export of the secret is audited");

      // The script pushed with Windmill's bun lock keeps it as the repository has it, and runs.
      const greeter = await services.pool.query<{ lock: string | null }>(
        "SELECT lock FROM script WHERE workspace_id = $1 AND path = 'f/a/greeter'",
        [variant.ws],
      );
      assert.equal(
        greeter.rows[0]!.lock,
        fs.readFileSync(path.join(repo, "f/a/greeter.script.lock"), "utf8"),
      );
      const run = await fetch(`${api.url}/api/w/${variant.ws}/jobs/run_wait_result/p/f/a/greeter`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "lock", times: 2 }),
      });
      assert.equal(run.status, 200);
      assert.equal(await run.json(), "hello lock hello lock");
      assert.deepEqual(
        changeLines(second.output),
        Object.keys(STILL_DIFFERENT),
        `the second push changes other items than the known ones:\n${second.output}`,
      );
    });
  }

  it("keeps grants to users this instance does not have as pending, and email keys as granting nothing", async () => {
    // The folders of the first import (workspace `example`), as the REST API answers wmill.
    const response = await fetch(`${api.url}/api/w/example/folders/get/a`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const folder = (await response.json()) as { owners: string[]; extra_perms: Record<string, boolean> };
    assert.deepEqual(folder.owners, ["u/admin", "someone@example.dev"]);
    assert.deepEqual(folder.extra_perms, { "u/admin": true, "someone@example.dev": true });

    // What the folder page reads (tRPC people.folders = core listFolders).
    const importer = await requireMembership(services, principal, "example");
    const shown = (await listFolders(services, importer)).map((f) => ({
      name: f.name,
      permissions: f.permissions.map((p) => `${p.principal} ${p.level} ${p.status}`),
    }));
    assert.deepEqual(shown, [
      { name: "a", permissions: ["u/admin owner pending", "someone@example.dev owner inert"] },
      { name: "app_custom", permissions: ["u/admin owner pending"] },
      { name: "examples", permissions: ["u/admin owner pending", "g/all viewer active"] },
      { name: "foo", permissions: ["u/admin owner pending", "u/ghost viewer pending"] },
    ]);

    // A developer named `someone` (the email key's local part) gets nothing from `someone@…`, nor
    // from u/admin's grant; `admin`, once a member, owns f/a, f/foo… as the repository said.
    const someone = await createUser(ctx(), { email: "someone@example.dev", password: "someone-password-1" });
    const admin = await createUser(ctx(), { email: "admin@elsewhere.dev", password: "admin-password-12" });
    assert.deepEqual([someone.username, admin.username], ["someone", "admin"]);
    // Not a member yet: no access at all, pending grant or not.
    await assert.rejects(requireMembership(services, principalOf(admin), "example"));
    await addMember(services, importer, { email: someone.email, role: "developer" });
    const asSomeone = await requireMembership(services, principalOf(someone), "example");
    assert.equal(await folderLevel(services, asSomeone, "a"), null);
    assert.equal(await folderLevel(services, asSomeone, "foo"), null);
    assert.equal(await folderLevel(services, asSomeone, "examples"), "viewer"); // g/all only
    await addMember(services, importer, { email: admin.email, role: "developer" });
    const asAdmin = await requireMembership(services, principalOf(admin), "example");
    assert.equal(await folderLevel(services, asAdmin, "a"), "owner");
    assert.equal(await folderLevel(services, asAdmin, "foo"), "owner");
    const after = (await listFolders(services, importer)).find((f) => f.name === "a")!;
    assert.deepEqual(
      after.permissions.map((p) => `${p.principal} ${p.status}`),
      ["u/admin active", "someone@example.dev inert"],
    );
  });
});
