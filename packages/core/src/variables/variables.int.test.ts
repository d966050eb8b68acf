import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createDb, createPool } from "@millrace/db";
import { createKeyring, SecretKeyError, type SecretsContext } from "../secrets/index.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { createUser, principalOf } from "../users.ts";
import { requireMembership, type Membership } from "../workspaces.ts";
import {
  createVariable,
  deleteVariable,
  getVariable,
  getVariableValue,
  listVariables,
  updateVariable,
  variableExists,
} from "./variables.ts";

const KEY = "test-instance-key-0123456789abcdefghijklmnop";
const SECRET = "s3cr3t-pa55w0rd-value";

let services: TestServices;
let ctx: SecretsContext;
let admin: Membership;
let operator: Membership;

async function tableText(table: string): Promise<string> {
  const { rows } = await services.pool.query<{ t: string }>(
    `SELECT coalesce(string_agg(x::text, E'\\n'), '') AS t FROM ${table} x`,
  );
  return rows[0]!.t;
}

describe("variables and secrets", () => {
  before(async () => {
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    ({ membership: admin } = await createTestMember(services, "acme"));
    const user = await createUser(services, { email: "op@example.com", password: "password123" });
    await services.db.workspaceMember.create({
      data: { workspaceId: "acme", userId: user.id, role: "operator" },
    });
    operator = await requireMembership(services, principalOf(user), "acme");
  });
  after(() => services?.close());

  it("stores a secret encrypted: not in the table, the key table or the audit log", async () => {
    const me = admin.principal.username;
    await createVariable(ctx, admin, { path: `u/${me}/db_password`, value: SECRET, isSecret: true });
    const { rows } = await services.pool.query<{ value: string; is_secret: boolean }>(
      "SELECT value, is_secret FROM variable WHERE path = $1",
      [`u/${me}/db_password`],
    );
    assert.equal(rows[0]?.is_secret, true);
    assert.match(rows[0]!.value, /^enc:v2:/);
    for (const table of ["variable", "workspace_key", "audit_log"]) {
      assert.ok(!(await tableText(table)).includes(SECRET), `${table} holds the plain secret`);
    }
    assert.match(await tableText("workspace_key"), /wk:v1:/);
  });

  it("never returns a secret in a list, and audits each decryption", async () => {
    const me = admin.principal.username;
    await createVariable(ctx, admin, { path: `u/${me}/greeting`, value: "hello", description: "plain" });
    const list = await listVariables(ctx, admin);
    const secret = list.find((v) => v.path === `u/${me}/db_password`);
    assert.equal(secret?.isSecret, true);
    assert.equal(secret?.value, null);
    assert.equal(list.find((v) => v.path === `u/${me}/greeting`)?.value, "hello");
    assert.ok(!JSON.stringify(list).includes(SECRET));

    const before = await services.pool.query(
      "SELECT 1 FROM audit_log WHERE operation = 'variables.decrypt_secret'",
    );
    assert.equal((await getVariable(ctx, admin, `u/${me}/db_password`)).value, SECRET);
    assert.equal(await getVariableValue(ctx, admin, `u/${me}/db_password`), SECRET);
    const hidden = await getVariable(ctx, admin, `u/${me}/db_password`, { decryptSecret: false });
    assert.equal(hidden.value, null);
    const exported = await getVariable(ctx, admin, `u/${me}/db_password`, {
      decryptSecret: false,
      includeEncrypted: true,
    });
    assert.match(exported.value ?? "", /^enc:v2:/);
    const audits = await services.pool.query<{ actor: string; resource: string; parameters: unknown }>(
      "SELECT actor, resource, parameters FROM audit_log WHERE operation = 'variables.decrypt_secret'",
    );
    assert.equal(audits.rowCount! - before.rowCount!, 2, "two decryptions, two audit rows");
    assert.equal(audits.rows.at(-1)?.resource, `u/${me}/db_password`);
    assert.equal(audits.rows.at(-1)?.actor, me);
  });

  it("decrypts after a restart with the same key; a wrong or missing key fails clearly", async () => {
    const me = admin.principal.username;
    const pool = createPool(services.database.url, { max: 2 });
    try {
      const restarted = { db: createDb(pool), pool, secrets: createKeyring(KEY) };
      assert.equal(await getVariableValue(restarted, admin, `u/${me}/db_password`), SECRET);

      const wrong = {
        db: restarted.db,
        pool,
        secrets: createKeyring("another-key-that-is-long-enough-000000"),
      };
      await assert.rejects(getVariableValue(wrong, admin, `u/${me}/db_password`), (error: Error) => {
        assert.ok(error instanceof SecretKeyError);
        assert.match(error.message, /MILLRACE_SECRET_KEY/);
        assert.ok(!error.message.includes(SECRET));
        return true;
      });
      const missing = { db: restarted.db, pool, secrets: createKeyring(undefined) };
      await assert.rejects(
        getVariableValue(missing, admin, `u/${me}/db_password`),
        /MILLRACE_SECRET_KEY is not set/,
      );
      await assert.rejects(
        createVariable(missing, admin, { path: `u/${me}/nokey`, value: "x", isSecret: true }),
        SecretKeyError,
      );
      assert.equal(await variableExists(ctx, admin, `u/${me}/nokey`), false);
      // Plain variables do not need the key.
      assert.equal(await getVariableValue(missing, admin, `u/${me}/greeting`), "hello");
    } finally {
      await pool.end();
    }
  });

  it("refuses bad paths and values with the field named, storing nothing", async () => {
    const me = admin.principal.username;
    const count = async () => (await services.pool.query("SELECT 1 FROM variable")).rowCount;
    const before = await count();
    await rejectsWith(
      createVariable(ctx, admin, { path: `u/${me}/../x`, value: "v" }),
      "INVALID_INPUT",
      "path",
    );
    await rejectsWith(
      createVariable(ctx, admin, { path: `u/${me}/with space`, value: "v" }),
      "INVALID_INPUT",
      "path",
    );
    await rejectsWith(
      createVariable(ctx, admin, { path: `u/${me}/n`, value: 42 as unknown as string }),
      "INVALID_INPUT",
      "value",
    );
    await rejectsWith(
      createVariable(ctx, admin, { path: `u/${me}/greeting`, value: "again" }),
      "CONFLICT",
      "path",
    );
    await rejectsWith(getVariable(ctx, admin, `u/${me}/../greeting`), "INVALID_INPUT", "path");
    assert.equal(await count(), before);
    assert.equal(await getVariableValue(ctx, admin, `u/${me}/greeting`), "hello");
  });

  it("imports an encrypted value only into the workspace it was encrypted for", async () => {
    const me = admin.principal.username;
    const { value: ciphertext } = await getVariable(ctx, admin, `u/${me}/db_password`, {
      decryptSecret: false,
      includeEncrypted: true,
    });
    await createVariable(
      ctx,
      admin,
      { path: `u/${me}/copy`, value: ciphertext!, isSecret: true },
      { alreadyEncrypted: true },
    );
    assert.equal(await getVariableValue(ctx, admin, `u/${me}/copy`), SECRET);
    const { membership: other } = await createTestMember(services, "other");
    await rejectsWith(
      createVariable(
        ctx,
        other,
        { path: `u/${other.principal.username}/copy`, value: ciphertext!, isSecret: true },
        { alreadyEncrypted: true },
      ),
      "INVALID_INPUT",
      "value",
    );
  });

  it("refuses a foreign ciphertext saying how to export it, stores its own ciphertext once, and skips no-op updates", async () => {
    const me = admin.principal.username;
    // A Windmill instance's ciphertext (base64), sent as already encrypted: refused, value unquoted.
    const foreign = Buffer.alloc(48, 9).toString("base64");
    const error = await createVariable(
      ctx,
      admin,
      { path: `u/${me}/foreign`, value: foreign, isSecret: true },
      { alreadyEncrypted: true },
    ).then(
      () => assert.fail("stored a foreign ciphertext"),
      (e: Error) => e,
    );
    assert.match(error.message, /^value: .*wmill sync pull --plain-secrets/);
    assert.ok(!error.message.includes(foreign));
    assert.equal(await variableExists(ctx, admin, `u/${me}/foreign`), false);
    // This workspace's own ciphertext sent as plain text (a Millrace export pushed with
    // --plain-secrets) is stored as is, never encrypted twice.
    const { value: ciphertext } = await getVariable(ctx, admin, `u/${me}/db_password`, {
      decryptSecret: false,
      includeEncrypted: true,
    });
    await createVariable(ctx, admin, { path: `u/${me}/again`, value: ciphertext!, isSecret: true });
    assert.equal(await getVariableValue(ctx, admin, `u/${me}/again`), SECRET);
    // An update that changes nothing (the plain value, or the stored ciphertext) writes nothing.
    const row = async () =>
      (
        await services.pool.query<{ value: string; updated_at: Date }>(
          "SELECT value, updated_at FROM variable WHERE path = $1",
          [`u/${me}/again`],
        )
      ).rows[0]!;
    const audits = async () => Number((await tableText("audit_log")).split("\n").length);
    const before = await row();
    const auditBefore = await audits();
    await updateVariable(ctx, admin, `u/${me}/again`, { value: SECRET, description: "" });
    await updateVariable(ctx, admin, `u/${me}/again`, { value: ciphertext! }, { alreadyEncrypted: true });
    assert.deepEqual(await row(), before);
    assert.equal(await audits(), auditBefore);
    await updateVariable(ctx, admin, `u/${me}/again`, { value: "rotated" });
    assert.equal(await getVariableValue(ctx, admin, `u/${me}/again`), "rotated");
  });

  it("updates, renames, converts between secret and plain, and deletes", async () => {
    const me = admin.principal.username;
    await createVariable(ctx, admin, { path: `u/${me}/token`, value: "t1" });
    await updateVariable(ctx, admin, `u/${me}/token`, { isSecret: true });
    const stored = await services.pool.query<{ value: string }>(
      "SELECT value FROM variable WHERE path = $1",
      [`u/${me}/token`],
    );
    assert.match(stored.rows[0]!.value, /^enc:v2:/);
    await updateVariable(ctx, admin, `u/${me}/token`, { value: "t2", path: `u/${me}/token2` });
    assert.equal(await variableExists(ctx, admin, `u/${me}/token`), false);
    assert.equal(await getVariableValue(ctx, admin, `u/${me}/token2`), "t2");
    const plain = await updateVariable(ctx, admin, `u/${me}/token2`, { isSecret: false });
    assert.equal(plain.value, "t2");
    await rejectsWith(
      updateVariable(ctx, admin, `u/${me}/token2`, { path: `u/${me}/greeting` }),
      "CONFLICT",
      "path",
    );
    await deleteVariable(ctx, admin, `u/${me}/token2`);
    await rejectsWith(getVariable(ctx, admin, `u/${me}/token2`), "NOT_FOUND");
    await rejectsWith(deleteVariable(ctx, admin, `u/${me}/token2`), "NOT_FOUND");
    const ops = await services.pool.query<{ operation: string }>(
      "SELECT operation FROM audit_log WHERE resource LIKE $1 ORDER BY id",
      [`u/${me}/token%`],
    );
    assert.deepEqual(
      ops.rows.map((r) => r.operation),
      [
        "variables.create",
        "variables.update",
        "variables.update",
        "variables.decrypt_secret", // getVariableValue
        "variables.decrypt_secret", // secret -> plain
        "variables.update",
        "variables.delete",
      ],
    );
  });

  it("lets operators read but not write, and lists only readable paths", async () => {
    const me = admin.principal.username;
    const op = operator.principal.username;
    await createVariable(ctx, admin, { path: `u/${op}/api_key`, value: "k", isSecret: true });
    const listed = await listVariables(ctx, operator);
    assert.deepEqual(
      listed.map((v) => v.path),
      [`u/${op}/api_key`],
      "another user's u/ items are not listed",
    );
    assert.equal(await getVariableValue(ctx, operator, `u/${op}/api_key`), "k");
    await rejectsWith(getVariable(ctx, operator, `u/${me}/greeting`), "NOT_FOUND");
    await rejectsWith(
      createVariable(ctx, operator, { path: `u/${operator.principal.username}/x`, value: "v" }),
      "FORBIDDEN",
    );
    await rejectsWith(updateVariable(ctx, operator, `u/${me}/greeting`, { value: "v" }), "FORBIDDEN");
    await rejectsWith(deleteVariable(ctx, operator, `u/${me}/greeting`), "FORBIDDEN");
  });
});
