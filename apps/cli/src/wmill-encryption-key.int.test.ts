// The workspace encryption key with the real wmill (npm windmill-cli 1.819) against a live
// Millrace: `wmill sync pull --include-key` writes the workspace's key to `encryption_key.yaml` beside
// its secrets (ciphertexts), and `wmill sync push --include-key` of that repository into another
// workspace sets the key there first (re-encrypting that workspace's own secrets), so that the
// pushed ciphertexts are stored as they are and decrypt to the same values.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createApiToken,
  createFolder,
  createKeyring,
  createUser,
  createVariable,
  createWorkspace,
  principalOf,
  requireMembership,
} from "@millrace/core";
import { createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, type TestApi } from "@millrace/worker/testing";
import { runWmill } from "./testing.ts";

const KEY = "wmill-encryption-key-instance-key-0123456789";

describe("wmill sync pull --include-key, then push into another workspace", () => {
  let services: TestServices;
  let api: TestApi;
  let token: string;
  let home: string;
  let repo: string;

  async function wmill(args: string[], workspace: string) {
    const run = await runWmill(args, { cwd: repo, home, instance: { url: api.url, token, workspace } });
    assert.equal(run.code, 0, `wmill ${args.join(" ")} (${workspace}):\n${run.output}`);
    return run;
  }
  async function api200(method: string, url: string, body?: unknown): Promise<Response> {
    const res = await fetch(`${api.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    assert.equal(res.status, 200, `${method} ${url}: ${await res.clone().text()}`);
    return res;
  }
  const keyOf = async (ws: string) =>
    ((await (await api200("GET", `/api/w/${ws}/workspaces/encryption_key`)).json()) as { key: string }).key;
  /** The key as wmill wrote it: a YAML string, quoted or not. */
  const keyFile = () => {
    const raw = fs.readFileSync(path.join(repo, "encryption_key.yaml"), "utf8").trim();
    if (raw.startsWith('"')) return JSON.parse(raw) as string;
    return raw.startsWith("'") ? raw.slice(1, -1).replaceAll("''", "'") : raw;
  };
  const secretOf = async (ws: string, p: string) =>
    (await (await api200("GET", `/api/w/${ws}/variables/get_value/${p}`)).json()) as string;

  before(async () => {
    services = await createTestServices();
    const ctx = { ...services, secrets: createKeyring(KEY) };
    const lead = principalOf(
      await createUser(ctx, { email: "lead@example.com", password: "key-password-1" }),
    );
    for (const id of ["origin", "target"]) await createWorkspace(ctx, lead, { id, name: id });
    const origin = await requireMembership(ctx, lead, "origin");
    const target = await requireMembership(ctx, lead, "target");
    await createFolder(ctx, origin, { name: "shared" });
    await createVariable(ctx, origin, { path: "f/shared/db_password", value: "s3cr3t ✓", isSecret: true });
    // The target's own secret, outside what the repository holds: re-encrypted, never lost.
    await createVariable(ctx, target, { path: "u/lead/own", value: "target's own", isSecret: true });
    token = await createApiToken(services, lead, { label: "encryption key" });
    api = await startTestApi(services.database.url, KEY);
    home = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-key-"));
    repo = path.join(home, "repo");
    fs.mkdirSync(repo);
    fs.writeFileSync(
      path.join(repo, "wmill.yaml"),
      "defaultTs: bun\nincludes:\n  - f/**\nexcludes: []\nnonDottedPaths: true\nsyncBehavior: v1\n",
    );
  });
  after(async () => {
    await api?.close();
    await services?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it("moves the key with the secrets, and the secrets decrypt in the other workspace", async () => {
    const originKey = await keyOf("origin");
    const targetKey = await keyOf("target");
    assert.notEqual(originKey, targetKey);

    const pulled = await wmill(
      ["sync", "pull", "--yes", "--include-key", "--skip-branch-validation"],
      "origin",
    );
    assert.match(pulled.output, /encryption_key/);
    assert.equal(keyFile(), originKey);
    const variableFile = fs.readFileSync(path.join(repo, "f/shared/db_password.variable.yaml"), "utf8");
    assert.match(variableFile, /enc:v2:/);
    assert.ok(!variableFile.includes("s3cr3t"));

    const pushed = await wmill(
      ["sync", "push", "--yes", "--include-key", "--skip-branch-validation"],
      "target",
    );
    assert.match(pushed.output, /encryption_key/);
    assert.equal(await keyOf("target"), originKey, "the target workspace has the origin's key");
    assert.equal(await secretOf("target", "f/shared/db_password"), "s3cr3t ✓");
    assert.equal(await secretOf("target", "u/lead/own"), "target's own");
    // Stored as it came: the very ciphertext of the origin workspace.
    const { rows } = await services.pool.query<{ workspace_id: string; value: string }>(
      "SELECT workspace_id, value FROM variable WHERE path = 'f/shared/db_password' ORDER BY workspace_id",
    );
    assert.deepEqual(
      rows.map((r) => r.workspace_id),
      ["origin", "target"],
    );
    assert.equal(rows[1]!.value, rows[0]!.value);

    // A second push has nothing to do, the key included.
    const again = await wmill(
      ["sync", "push", "--yes", "--include-key", "--skip-branch-validation"],
      "target",
    );
    assert.doesNotMatch(again.output, /^[+~-] /m, again.output);

    // A new key in the repository (wmill's own re-encryption prompt answered yes): set, and the
    // workspace's secrets follow it; the next pull brings them back under it.
    const rotated = "rotated-key-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ";
    fs.writeFileSync(path.join(repo, "encryption_key.yaml"), `${rotated}\n`);
    await wmill(["sync", "push", "--yes", "--include-key", "--skip-branch-validation"], "target");
    assert.equal(await keyOf("target"), rotated);
    assert.equal(await secretOf("target", "f/shared/db_password"), "s3cr3t ✓");
    assert.equal(await secretOf("target", "u/lead/own"), "target's own");
    await wmill(["sync", "pull", "--yes", "--include-key", "--skip-branch-validation"], "target");
    assert.equal(keyFile(), rotated);
    const repulled = fs.readFileSync(path.join(repo, "f/shared/db_password.variable.yaml"), "utf8");
    assert.notEqual(repulled, variableFile, "the secret comes back under the new key");
  });

  it("refuses a malformed key naming new_key, and the key to a non-admin", async () => {
    const bad = await fetch(`${api.url}/api/w/target/workspaces/encryption_key`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ new_key: "too short" }),
    });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /new_key/);
    assert.equal(bad.headers.get("x-error-field"), "new_key");
    const ctx = { ...services, secrets: createKeyring(KEY) };
    const dev = await createUser(ctx, { email: "dev@example.com", password: "key-password-2" });
    await services.db.workspaceMember.create({
      data: { workspaceId: "target", userId: dev.id, role: "developer" },
    });
    const devToken = await createApiToken(services, principalOf(dev), { label: "dev" });
    for (const method of ["GET", "POST"]) {
      const res = await fetch(`${api.url}/api/w/target/workspaces/encryption_key`, {
        method,
        headers: { authorization: `Bearer ${devToken}`, "content-type": "application/json" },
        body: method === "POST" ? JSON.stringify({ new_key: "d".repeat(40) }) : undefined,
      });
      assert.equal(res.status, 403, method);
    }
  });
});
