import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Principal } from "../auth/principal.ts";
import { deleteExpiredAudit, listAudit } from "../audit/index.ts";
import { workspaceGovernance, instanceGovernance } from "../governance/index.ts";
import { getJob, listJobs } from "../jobs/queries.ts";
import { runScriptByPath } from "../jobs/run.ts";
import { deployScript, getScriptByPath, listScripts } from "../scripts.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { createUser, principalOf } from "../users.ts";
import { createWorkspace, requireMembership, type Membership } from "../workspaces.ts";
import { createFolder, deleteFolder, listFolders, setFolderPermission } from "./folders.ts";
import { addGroupMember, createGroup, deleteGroup } from "./groups.ts";
import { addMember, listMembers, removeMember, updateMember } from "./members.ts";
import { deleteStaleRateLimits, signIn, SIGN_IN_LIMITS } from "./sign-in.ts";
import { createToken, deleteExpiredTokens, deleteToken, listTokens } from "./tokens.ts";
import { principalFromBearer } from "../auth/tokens.ts";

let services: TestServices;
let admin: Membership;
const people: Record<string, { principal: Principal; membership: Membership }> = {};

async function join(username: string, role: "developer" | "operator" | "admin") {
  const user = await createUser(services, {
    email: `${username}@corp.test`,
    password: "password123",
    username,
  });
  await addMember(services, admin, { email: user.email, role });
  const principal = principalOf(user);
  people[username] = { principal, membership: await requireMembership(services, principal, "acme") };
  return people[username]!;
}

describe("people, folders and path access", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership: admin } = await createTestMember(services, "acme"));
    await join("dev_a", "developer");
    await join("dev_b", "developer");
    await join("op", "operator");
    await createFolder(services, admin, { name: "ops" });
    await createFolder(services, admin, { name: "secret_stuff" });
    for (const path of ["f/ops/deploy", "f/secret_stuff/x"]) {
      await deployScript(services, admin, { path, language: "bash", content: "echo hi" });
    }
    await deployScript(services, people.dev_a!.membership, {
      path: "u/dev_a/mine",
      language: "bash",
      content: "echo a",
    });
  });
  after(() => services?.close());

  it("hides folders and other users' paths from members without a permission", async () => {
    const devB = people.dev_b!.membership;
    await rejectsWith(getScriptByPath(services, devB, "f/ops/deploy"), "NOT_FOUND");
    await rejectsWith(getScriptByPath(services, devB, "u/dev_a/mine"), "NOT_FOUND");
    await rejectsWith(runScriptByPath(services, devB, "u/dev_a/mine", {}), "NOT_FOUND");
    assert.deepEqual(
      (await listScripts(services, devB)).map((s) => s.path),
      [],
    );
    assert.deepEqual(
      (await listScripts(services, people.dev_a!.membership)).map((s) => s.path),
      ["u/dev_a/mine"],
    );
    assert.equal((await listScripts(services, admin)).length, 3);
    await rejectsWith(
      deployScript(services, devB, { path: "f/ops/new", language: "bash", content: "echo" }),
      "FORBIDDEN",
      undefined,
      /ask one of its owners/,
    );
    await rejectsWith(
      deployScript(services, devB, { path: "f/nowhere/new", language: "bash", content: "echo" }),
      "FORBIDDEN",
      undefined,
      /folder nowhere does not exist/,
    );
  });

  it("grants folder access to users and groups: viewers read and run, writers deploy", async () => {
    const devB = people.dev_b!.membership;
    const op = people.op!.membership;
    await createGroup(services, admin, { name: "oncall" });
    await addGroupMember(services, admin, "oncall", "op");
    await setFolderPermission(services, admin, "ops", "g/oncall", "viewer");
    await setFolderPermission(services, admin, "ops", "u/dev_b", "writer");
    assert.equal((await getScriptByPath(services, op, "f/ops/deploy")).path, "f/ops/deploy");
    const jobId = await runScriptByPath(services, op, "f/ops/deploy", {});
    await rejectsWith(
      deployScript(services, op, { path: "f/ops/other", language: "bash", content: "echo" }),
      "FORBIDDEN",
    );
    await deployScript(services, devB, { path: "f/ops/other", language: "bash", content: "echo" });
    assert.deepEqual(
      (await listScripts(services, devB)).map((s) => s.path),
      ["f/ops/deploy", "f/ops/other"],
    );
    assert.deepEqual(
      (await listFolders(services, op)).map((f) => f.name),
      ["ops"],
    );

    // Jobs follow the script's path: dev_a sees neither the folder nor op's job.
    const devA = people.dev_a!.membership;
    await rejectsWith(getJob(services, devA, jobId), "NOT_FOUND");
    assert.equal(
      (await listJobs(services, devA)).some((j) => j.id === jobId),
      false,
    );
    assert.equal((await getJob(services, devB, jobId)).id, jobId);

    // Deleting the group drops the grant it carried.
    await deleteGroup(services, admin, "oncall");
    await rejectsWith(getScriptByPath(services, op, "f/ops/deploy"), "NOT_FOUND");
    await setFolderPermission(services, admin, "ops", "g/all", "viewer");
    assert.equal((await getScriptByPath(services, devA, "f/ops/deploy")).path, "f/ops/deploy");
  });

  it("lets only admins and folder owners manage folders; a folder with items is not deleted", async () => {
    const devA = people.dev_a!.membership;
    await rejectsWith(setFolderPermission(services, devA, "ops", "u/dev_a", "owner"), "FORBIDDEN");
    await rejectsWith(createFolder(services, people.op!.membership, { name: "ops2" }), "FORBIDDEN");
    const own = await createFolder(services, devA, { name: "team_a" });
    assert.deepEqual(own.permissions, [
      { principal: "u/dev_a", level: "owner", status: "active", ownerExtra: null },
    ]);
    await rejectsWith(
      setFolderPermission(services, devA, "team_a", "u/nobody", "viewer"),
      "INVALID_INPUT",
      "principal",
    );
    await rejectsWith(deleteFolder(services, admin, "ops"), "CONFLICT");
    await deleteFolder(services, devA, "team_a");
  });

  it("manages members: roles, disable, remove, and never drops the last admin", async () => {
    await rejectsWith(
      addMember(services, people.dev_a!.membership, { email: "x@y.z", role: "admin" }),
      "FORBIDDEN",
    );
    await rejectsWith(
      addMember(services, admin, { email: "dev_a@corp.test", role: "admin" }),
      "CONFLICT",
      "email",
    );
    await rejectsWith(
      addMember(services, admin, { email: "ghost@corp.test", role: "admin" }),
      "NOT_FOUND",
      "email",
    );
    await updateMember(services, admin, "dev_b", { role: "operator" });
    const devB = await requireMembership(services, people.dev_b!.principal, "acme");
    assert.equal(devB.role, "operator");
    await updateMember(services, admin, "dev_b", { disabled: true });
    await rejectsWith(requireMembership(services, people.dev_b!.principal, "acme"), "NOT_FOUND");
    const members = await listMembers(services, admin);
    assert.equal(members.find((m) => m.username === "dev_b")?.disabled, true);
    const adminName = admin.principal.username;
    await rejectsWith(updateMember(services, admin, adminName, { role: "developer" }), "CONFLICT");
    await rejectsWith(removeMember(services, admin, adminName), "CONFLICT");
    await removeMember(services, admin, "dev_b");
    await rejectsWith(requireMembership(services, people.dev_b!.principal, "acme"), "NOT_FOUND");
  });

  it("rate limits sign-ins per account, refunds successes, and audits both outcomes", async () => {
    await createUser(services, { email: "target@corp.test", password: "password123" });
    for (let i = 0; i < 3; i++)
      await signIn(services, { email: "target@corp.test", password: "password123", ip: "10.0.0.1" });
    for (let i = 0; i < SIGN_IN_LIMITS.account.limit - 3; i++) {
      await rejectsWith(
        signIn(services, { email: "target@corp.test", password: "wrong-pass", ip: "10.0.0.2" }),
        "UNAUTHORIZED",
      );
    }
    // Three successes were refunded: seven failures so far, so three more guesses are allowed.
    for (let i = 0; i < 3; i++) {
      await rejectsWith(
        signIn(services, { email: "target@corp.test", password: "wrong-pass", ip: "10.0.0.2" }),
        "UNAUTHORIZED",
      );
    }
    await rejectsWith(
      signIn(services, { email: "Target@corp.test", password: "password123", ip: "10.0.0.3" }),
      "LIMIT_EXCEEDED",
    );
    const { rows } = await services.pool.query<{ operation: string; ip: string }>(
      `SELECT operation, ip FROM audit_log WHERE resource = 'target@corp.test' ORDER BY id`,
    );
    assert.equal(rows.filter((r) => r.operation === "users.login").length, 3);
    assert.equal(rows.filter((r) => r.operation === "users.login_failure").length, 11);
    assert.equal(rows.at(-1)?.ip, "10.0.0.3");
    // Old windows are forgotten by the retention task; current ones stay.
    await services.pool.query(
      `UPDATE rate_limit SET window_start = now() - interval '2 days' WHERE key LIKE '%10.0.0.1'`,
    );
    assert.equal(await deleteStaleRateLimits(services), 1);
    const { rows: left } = await services.pool.query(`SELECT key FROM rate_limit WHERE key LIKE '%target%'`);
    assert.equal(left.length, 1);
  });

  it("creates, lists and revokes scoped API tokens", async () => {
    const devA = people.dev_a!.principal;
    await rejectsWith(createToken(services, devA, { workspaceId: "elsewhere" }), "NOT_FOUND", "workspace_id");
    const token = await createToken(services, devA, { label: "ci", workspaceId: "acme" });
    const listed = await listTokens(services, devA);
    assert.deepEqual(
      listed.map((t) => [t.label, t.workspaceId]),
      [["ci", "acme"]],
    );
    const resolved = await principalFromBearer(services, token, undefined);
    assert.equal(resolved.workspaceScope, "acme");
    await deleteToken(services, devA, listed[0]!.tokenPrefix);
    await rejectsWith(principalFromBearer(services, token, undefined), "UNAUTHORIZED");
    await rejectsWith(deleteToken(services, people.op!.principal, listed[0]!.tokenPrefix), "NOT_FOUND");
    // Expired tokens are dropped by retention a day after they expire.
    const old = await createToken(services, devA, { label: "old" });
    await services.pool.query(
      `UPDATE api_token SET expires_at = now() - interval '2 days' WHERE token_prefix = $1`,
      [old.slice(0, 10)],
    );
    assert.equal(await deleteExpiredTokens(services), 1);
  });

  it("shows admins the whole audit log and everyone else their own rows", async () => {
    const all = await listAudit(services, admin, { perPage: 100 });
    assert.ok(all.some((r) => r.operation === "scripts.create" && r.username === "dev_a"));
    assert.ok(all.some((r) => r.operation === "jobs.run.script" && r.username === "op"));
    const mine = await listAudit(services, people.dev_a!.membership, { perPage: 100 });
    assert.ok(mine.length > 0);
    assert.ok(mine.every((r) => r.username === "dev_a"));
    const folders = await listAudit(services, admin, { operation: "folder.", perPage: 100 });
    assert.ok(folders.length >= 3 && folders.every((r) => r.operation.startsWith("folder.")));
    const created = await listAudit(services, admin, { actionKind: "Created", perPage: 100 });
    assert.ok(created.every((r) => r.actionKind === "Created"));
    await rejectsWith(listAudit(services, admin, { perPage: 1000 }), "INVALID_INPUT", "per_page");

    await services.pool.query(
      `UPDATE audit_log SET at = at - interval '400 days' WHERE operation = 'group.create'`,
    );
    assert.equal(await deleteExpiredAudit(services, { retentionDays: 365, batchSize: 1 }), 1);
    assert.equal((await listAudit(services, admin, { operation: "group.create" })).length, 0);
  });

  it("hands a new workspace to the account Windmill's `username` names", async () => {
    const root = principalOf(
      await createUser(services, { email: "root@corp.test", password: "password123", superAdmin: true }),
    );
    await createWorkspace(services, root, { id: "handed", name: "Handed", username: "dev_a@corp.test" });
    const handed = await listMembers(services, await requireMembership(services, root, "handed"));
    assert.deepEqual(
      handed.map((m) => [m.username, m.role]),
      [["dev_a", "admin"]],
    );
    // A creator who is no superadmin keeps their own access.
    await createWorkspace(services, people.op!.principal, {
      id: "shared2",
      name: "Shared",
      username: "dev_a",
    });
    const shared = await listMembers(
      services,
      await requireMembership(services, people.op!.principal, "shared2"),
    );
    assert.deepEqual(shared.map((m) => [m.username, m.role]).sort(), [
      ["dev_a", "admin"],
      ["op", "admin"],
    ]);
  });

  it("reports governance: counts, single admin, stale scripts and tags", async () => {
    await services.pool.query(
      `UPDATE script SET created_at = now() - interval '200 days' WHERE workspace_id = 'acme' AND path = 'f/secret_stuff/x'`,
    );
    const report = await workspaceGovernance(services, admin);
    const acme = report.workspaces[0]!;
    assert.equal(acme.id, "acme");
    assert.equal(acme.members, 3);
    assert.equal(acme.admins.length, 1);
    assert.deepEqual(acme.warnings, ["single_admin"]);
    assert.equal(acme.scripts, 4);
    assert.equal(acme.runsLast30Days, 1);
    assert.deepEqual(
      acme.staleScripts.map((s) => s.path),
      ["f/secret_stuff/x"],
    );
    assert.deepEqual(acme.tags, ["bash"]);
    await rejectsWith(workspaceGovernance(services, people.dev_a!.membership), "FORBIDDEN");
    await rejectsWith(instanceGovernance(services, admin.principal), "FORBIDDEN");
  });
});
