// Windmill's workspace encryption key: read by admins only, set with every secret re-encrypted in
// one transaction, and picked up by the other processes (a second keyring on its own pool, and a
// separate node process) that hold the old key in their caches.
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createDb, createPool, type Pool } from "@millrace/db";
import { setGitSyncSettings } from "../sync/git-sync.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { createUser, principalOf } from "../users.ts";
import { createVariable, getVariable, getVariableValue, updateVariable } from "../variables/variables.ts";
import { requireMembership, type Membership } from "../workspaces.ts";
import { seal } from "./cipher.ts";
import type { SecretsContext } from "./context.ts";
import { ciphertextKeyId, createKeyring } from "./keyring.ts";
import { getWorkspaceEncryptionKey, setWorkspaceEncryptionKey } from "./workspace-key.ts";

const KEY = "test-instance-key-0123456789abcdefghijklmnop";
const here = path.dirname(fileURLToPath(import.meta.url));

let services: TestServices;
let ctx: SecretsContext;
let admin: Membership;
let developer: Membership;
let operator: Membership;

async function member(ws: string, role: "developer" | "operator", n: string): Promise<Membership> {
  const user = await createUser(services, { email: `${n}@example.com`, password: "password123" });
  await services.db.workspaceMember.create({ data: { workspaceId: ws, userId: user.id, role } });
  return requireMembership(services, principalOf(user), ws);
}

async function storedSecrets(ws: string): Promise<Map<string, string>> {
  const { rows } = await services.pool.query<{ path: string; value: string }>(
    "SELECT path, value FROM variable WHERE workspace_id = $1 AND is_secret ORDER BY path",
    [ws],
  );
  return new Map(rows.map((r) => [r.path, r.value]));
}

async function wrappedKey(ws: string): Promise<string> {
  const { rows } = await services.pool.query<{ wrapped_key: string }>(
    "SELECT wrapped_key FROM workspace_key WHERE workspace_id = $1",
    [ws],
  );
  return rows[0]!.wrapped_key;
}

/** A separate node process with its own pool and keyring, answering one command per line. */
class KeyringProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: AsyncIterator<string>;

  constructor(databaseUrl: string) {
    this.child = spawn(process.execPath, [path.join(here, "keyring-process.testing.ts"), databaseUrl, KEY]);
    this.child.stderr.on("data", (chunk: Buffer) => process.stderr.write(chunk));
    this.lines = readline.createInterface({ input: this.child.stdout })[Symbol.asyncIterator]();
  }

  async call(command: "decrypt" | "encrypt", ws: string, value: string): Promise<string> {
    this.child.stdin.write(JSON.stringify({ command, ws, value }) + "\n");
    const { value: line, done } = await this.lines.next();
    if (done) throw new Error("the keyring process ended");
    const answer = JSON.parse(line) as { ok?: string; error?: string };
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer.ok!;
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    await new Promise((resolve) => this.child.once("exit", resolve));
  }
}

describe("the workspace encryption key (getWorkspaceEncryptionKey / setWorkspaceEncryptionKey)", () => {
  before(async () => {
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    ({ membership: admin } = await createTestMember(services, "alpha"));
    developer = await member("alpha", "developer", "dev");
    operator = await member("alpha", "operator", "op");
    const me = admin.principal.username;
    for (const [name, value] of [
      ["db_password", "s3cr3t-one"],
      ["api_token", "tok-two ✓"],
      ["empty", ""],
    ]) {
      await createVariable(ctx, admin, { path: `u/${me}/${name}`, value: value!, isSecret: true });
    }
    await createVariable(ctx, admin, { path: `u/${me}/plain`, value: "not a secret" });
  });
  after(() => services?.close());

  it("answers the key to admins only, audited without the key", async () => {
    const { key } = await getWorkspaceEncryptionKey(ctx, admin, { ip: "10.0.0.9" });
    assert.match(key, /^[A-Za-z0-9_-]{43}$/, "a Millrace key: 32 random bytes, base64url");
    assert.equal((await getWorkspaceEncryptionKey(ctx, admin)).key, key, "stable");
    await rejectsWith(getWorkspaceEncryptionKey(ctx, developer), "FORBIDDEN");
    await rejectsWith(getWorkspaceEncryptionKey(ctx, operator), "FORBIDDEN");
    await rejectsWith(setWorkspaceEncryptionKey(ctx, developer, { newKey: "d".repeat(40) }), "FORBIDDEN");
    await rejectsWith(setWorkspaceEncryptionKey(ctx, operator, { newKey: "o".repeat(40) }), "FORBIDDEN");
    const { rows } = await services.pool.query<{ actor: string; ip: string; text: string }>(
      `SELECT actor, ip, row_to_json(a)::text AS text FROM audit_log a
        WHERE operation = 'workspaces.get_encryption_key' ORDER BY id`,
    );
    assert.equal(rows.length, 2);
    assert.equal(rows[0]!.actor, admin.principal.username);
    assert.equal(rows[0]!.ip, "10.0.0.9");
    for (const row of rows) assert.ok(!row.text.includes(key), "the audit log never holds the key");
    // The key is the one the stored secrets name.
    const ids = new Set([...(await storedSecrets("alpha")).values()].map(ciphertextKeyId));
    assert.equal(ids.size, 1);
  });

  it("refuses a malformed key naming new_key, changing nothing", async () => {
    const before = await storedSecrets("alpha");
    const wrapped = await wrappedKey("alpha");
    for (const bad of [
      "short",
      "x".repeat(31),
      `${"k".repeat(40)} with space`,
      "é".repeat(40),
      "k".repeat(1025),
    ]) {
      await rejectsWith(setWorkspaceEncryptionKey(ctx, admin, { newKey: bad }), "INVALID_INPUT", "new_key");
    }
    await rejectsWith(
      setWorkspaceEncryptionKey(ctx, admin, { newKey: 42 as unknown as string }),
      "INVALID_INPUT",
      "new_key",
    );
    assert.deepEqual(await storedSecrets("alpha"), before);
    assert.equal(await wrappedKey("alpha"), wrapped);
  });

  it("re-encrypts every secret with a new key; processes holding the old key read and write right", async () => {
    const me = admin.principal.username;
    await setGitSyncSettings(ctx, admin, {
      remote_url: "http://127.0.0.1:9/never.git",
      password: "git-pa55",
      enabled: false,
    });
    const before = await storedSecrets("alpha");
    const oldId = ciphertextKeyId(before.get(`u/${me}/db_password`)!);
    const oldGitSecret = (
      await services.pool.query<{ secret: string }>(
        "SELECT secret FROM git_sync_config WHERE workspace_id = 'alpha'",
      )
    ).rows[0]!.secret;

    // Another server (own pool, own keyring) and a separate process cache the old key.
    const pool2: Pool = createPool(services.database.url, { max: 2 });
    const other: SecretsContext = { db: createDb(pool2), pool: pool2, secrets: createKeyring(KEY) };
    const child = new KeyringProcess(services.database.url);
    try {
      assert.equal(await getVariableValue(other, admin, `u/${me}/db_password`), "s3cr3t-one");
      assert.equal(await child.call("decrypt", "alpha", before.get(`u/${me}/api_token`)!), "tok-two ✓");

      const newKey = "Windmill-style-key-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm";
      const result = await setWorkspaceEncryptionKey(ctx, admin, { newKey, skipReencrypt: true });
      assert.deepEqual(result, { reencrypted: 4, kept: 0 }, "three secrets and the git sync password");
      assert.equal((await getWorkspaceEncryptionKey(ctx, admin)).key, newKey);

      const after = await storedSecrets("alpha");
      const newId = ciphertextKeyId(after.get(`u/${me}/db_password`)!);
      assert.notEqual(newId, oldId);
      for (const [p, value] of after) {
        assert.equal(ciphertextKeyId(value), newId, `${p} is under the new key`);
        assert.notEqual(value, before.get(p), `${p}'s old ciphertext is gone`);
      }
      const gitSecret = (
        await services.pool.query<{ secret: string; requested: boolean }>(
          "SELECT secret, sync_requested_at IS NOT NULL AS requested FROM git_sync_config WHERE workspace_id = 'alpha'",
        )
      ).rows[0]!;
      assert.notEqual(gitSecret.secret, oldGitSecret);
      assert.equal(ciphertextKeyId(gitSecret.secret), newId);
      assert.equal(await ctx.secrets.decrypt(ctx.pool, "alpha", gitSecret.secret), "git-pa55");
      const everything = await services.pool.query<{ t: string }>(
        "SELECT string_agg(x::text, ' ') AS t FROM (SELECT value FROM variable UNION ALL SELECT secret FROM git_sync_config UNION ALL SELECT wrapped_key FROM workspace_key UNION ALL SELECT coalesce(parameters::text, '') FROM audit_log) x",
      );
      for (const old of [...before.values(), oldGitSecret])
        assert.ok(!everything.rows[0]!.t.includes(old.slice(30)), "no old ciphertext left");
      assert.ok(!everything.rows[0]!.t.includes(newKey), "the key itself is only stored wrapped");

      // Every reader gets the same values: this process, the other server and the other process.
      for (const reader of [ctx, other]) {
        assert.equal(await getVariableValue(reader, admin, `u/${me}/db_password`), "s3cr3t-one");
        assert.equal(await getVariableValue(reader, admin, `u/${me}/api_token`), "tok-two ✓");
        assert.equal(await getVariableValue(reader, admin, `u/${me}/empty`), "");
      }
      assert.equal(await child.call("decrypt", "alpha", after.get(`u/${me}/api_token`)!), "tok-two ✓");
      // What they write is under the new key, though their caches held the old one.
      const fromChild = await child.call("encrypt", "alpha", "written-by-a-stale-process");
      assert.equal(ciphertextKeyId(fromChild), newId);
      assert.equal(await ctx.secrets.decrypt(ctx.pool, "alpha", fromChild), "written-by-a-stale-process");
      await updateVariable(other, admin, `u/${me}/api_token`, { value: "tok-three" });
      const updated = (await storedSecrets("alpha")).get(`u/${me}/api_token`)!;
      assert.equal(ciphertextKeyId(updated), newId);
      assert.equal(await getVariableValue(ctx, admin, `u/${me}/api_token`), "tok-three");
      // An old ciphertext sent back as already encrypted is not this workspace's any more.
      await rejectsWith(
        updateVariable(
          other,
          admin,
          `u/${me}/api_token`,
          { value: before.get(`u/${me}/db_password`)! },
          {
            alreadyEncrypted: true,
          },
        ),
        "INVALID_INPUT",
        "value",
      );

      const audit = await services.pool.query<{ parameters: Record<string, unknown> }>(
        "SELECT parameters FROM audit_log WHERE operation = 'workspaces.set_encryption_key'",
      );
      assert.deepEqual(audit.rows[0]!.parameters, {
        changed: true,
        reencrypted: 4,
        kept: 0,
        skip_reencrypt: true,
      });
    } finally {
      await child.close();
      await pool2.end();
    }
  });

  it("a secret stored while the key changes waits for it and ends up under the new key", async () => {
    const me = admin.principal.username;
    const client = await services.pool.connect();
    try {
      await client.query("BEGIN");
      const value = await ctx.secrets.encrypt(ctx.pool, "alpha", "in-flight", client);
      await client.query(
        `INSERT INTO variable (workspace_id, path, value, is_secret, description, created_by, created_at, updated_at)
         VALUES ('alpha', $1, $2, true, '', $3, now(), now())`,
        [`u/${me}/in_flight`, value, me],
      );
      let done = false;
      const change = setWorkspaceEncryptionKey(ctx, admin, { newKey: "k".repeat(48) }).finally(() => {
        done = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(done, false, "the key change waits for the transaction storing a secret");
      await client.query("COMMIT");
      await change;
    } finally {
      client.release();
    }
    const stored = (await storedSecrets("alpha")).get(`u/${me}/in_flight`)!;
    assert.equal(ciphertextKeyId(stored), (await ctx.secrets.currentKey(ctx.pool, "alpha")).id);
    assert.equal(await getVariableValue(ctx, admin, `u/${me}/in_flight`), "in-flight");
  });

  it("a re-encryption that fails leaves every secret and the key as they were", async () => {
    const me = admin.principal.username;
    // A damaged value, last in path order: the values before it are rewritten, then rolled back.
    const current = await ctx.secrets.currentKey(ctx.pool, "alpha");
    await services.pool.query(
      `INSERT INTO variable (workspace_id, path, value, is_secret, description, created_by, created_at, updated_at)
       VALUES ('alpha', $1, $2, true, '', $3, now(), now())`,
      [`u/${me}/zz_damaged`, `enc:v2:${"A".repeat(16)}:${"B".repeat(60)}`, me],
    );
    const before = await storedSecrets("alpha");
    const wrapped = await wrappedKey("alpha");
    await rejectsWith(
      setWorkspaceEncryptionKey(ctx, admin, { newKey: "n".repeat(40) }),
      "CONFLICT",
      undefined,
      /variable u\/.*\/zz_damaged does not decrypt/,
    );
    assert.deepEqual(await storedSecrets("alpha"), before, "nothing half-written");
    assert.equal(await wrappedKey("alpha"), wrapped);
    assert.equal((await ctx.secrets.currentKey(ctx.pool, "alpha")).id, current.id);
    assert.equal(await getVariableValue(ctx, admin, `u/${me}/db_password`), "s3cr3t-one");
    await services.pool.query("DELETE FROM variable WHERE path = $1", [`u/${me}/zz_damaged`]);
  });

  it("the key read from one workspace, set on another, opens the first one's exported secrets", async () => {
    const { membership: beta } = await createTestMember(services, "beta");
    const mine = beta.principal.username;
    await createVariable(ctx, beta, { path: `u/${mine}/own`, value: "beta's own", isSecret: true });
    const me = admin.principal.username;
    const exported = await getVariable(ctx, admin, `u/${me}/db_password`, {
      decryptSecret: false,
      includeEncrypted: true,
    });
    // Before: alpha's ciphertext is foreign to beta.
    await rejectsWith(
      createVariable(
        ctx,
        beta,
        { path: `u/${mine}/imported`, value: exported.value!, isSecret: true },
        {
          alreadyEncrypted: true,
        },
      ),
      "INVALID_INPUT",
      "value",
    );
    const { key } = await getWorkspaceEncryptionKey(ctx, admin);
    const result = await setWorkspaceEncryptionKey(ctx, beta, { newKey: key });
    assert.deepEqual(result, { reencrypted: 1, kept: 0 });
    await createVariable(
      ctx,
      beta,
      { path: `u/${mine}/imported`, value: exported.value!, isSecret: true },
      {
        alreadyEncrypted: true,
      },
    );
    assert.equal(
      (await storedSecrets("beta")).get(`u/${mine}/imported`),
      exported.value,
      "stored as it came",
    );
    assert.equal(await getVariableValue(ctx, beta, `u/${mine}/imported`), "s3cr3t-one");
    assert.equal(await getVariableValue(ctx, beta, `u/${mine}/own`), "beta's own");
    // Setting the key it already has changes nothing.
    assert.deepEqual(await setWorkspaceEncryptionKey(ctx, beta, { newKey: key, skipReencrypt: true }), {
      reencrypted: 0,
      kept: 2,
    });
  });

  it("secrets written before keys could move (enc:v1:) still open, and leave re-encrypted when the key is read", async () => {
    const { membership: gamma } = await createTestMember(services, "gamma");
    const mine = gamma.principal.username;
    const key = await ctx.secrets.currentKey(ctx.pool, "gamma");
    // The format every secret had before: bound to the workspace's id, naming no key.
    const legacy = seal(key.key, Buffer.from("legacy value", "utf8"), "gamma", "enc:v1:");
    await services.pool.query(
      `INSERT INTO variable (workspace_id, path, value, is_secret, description, created_by, created_at, updated_at)
       VALUES ('gamma', $1, $2, true, '', $3, now(), now())`,
      [`u/${mine}/old`, legacy, mine],
    );
    const fresh = { ...services, secrets: createKeyring(KEY) };
    assert.equal(await getVariableValue(fresh, gamma, `u/${mine}/old`), "legacy value");
    assert.equal((await getWorkspaceEncryptionKey(ctx, gamma)).key, key.text, "same key");
    const upgraded = (await storedSecrets("gamma")).get(`u/${mine}/old`)!;
    assert.equal(ciphertextKeyId(upgraded), key.id);
    assert.equal(await getVariableValue(fresh, gamma, `u/${mine}/old`), "legacy value");
  });
});
