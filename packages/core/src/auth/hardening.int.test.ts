// Issue 19 (hardening): reserved workspaces, and least privilege for code that others run. A
// job's WM_TOKEN acts with the intersection of the rights of the user it runs as and of the user
// who deployed the code it runs; it never creates workspaces, manages members or mints tokens.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { claimJobs } from "../jobs/claim.ts";
import { runScriptByPath } from "../jobs/run.ts";
import { addMember, updateMember } from "../people/members.ts";
import { createFolder } from "../people/folders.ts";
import { createToken } from "../people/tokens.ts";
import { listAccounts } from "../people/users.ts";
import { resolveJobArgs } from "../resources/job-args.ts";
import { createSchedule } from "../schedules/schedules.ts";
import { runDueSchedules } from "../schedules/tick.ts";
import { deployScript, latestScript } from "../scripts.ts";
import { createKeyring, type SecretsContext } from "../secrets/index.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { createUser, principalOf } from "../users.ts";
import { getVariableValue, createVariable, listVariables } from "../variables/variables.ts";
import {
  ADMINS_WORKSPACE,
  createWorkspace,
  listWorkspaces,
  membershipFromBearer,
  requireMembership,
  type Membership,
} from "../workspaces.ts";
import { principalFromBearer } from "./tokens.ts";

const KEY = "test-instance-key-0123456789abcdefghijklmnop";
const ADMIN_SECRET = "the-admins-own-secret-value";

let services: TestServices;
let ctx: SecretsContext;

/** Claims the queued job `id` (the only one on `tag`) as a worker would, with its WM_TOKEN. */
async function claimToken(id: string, tag = "bash"): Promise<string> {
  const claimed = await claimJobs(services.pool, services.boss, tag, ["hardening-worker"]);
  const job = claimed.find((c) => c.id === id);
  assert.ok(job, `job ${id} was claimed`);
  assert.ok(job.callbackToken, "the job got a WM_TOKEN");
  return job.callbackToken;
}

async function member(email: string, workspaceId: string, role: "admin" | "developer" | "operator") {
  const user = await createUser(services, { email, password: "password123" });
  await services.db.workspaceMember.create({ data: { workspaceId, userId: user.id, role } });
  return requireMembership(services, principalOf(user), workspaceId);
}

describe("reserved workspaces", () => {
  before(async () => {
    services = await createTestServices();
  });
  after(() => services?.close());

  it("refuses to create `admins` and the other reserved ids, naming `id`, even for a superadmin", async () => {
    const root = await createUser(services, {
      email: "root@example.com",
      password: "password123",
      superAdmin: true,
    });
    const user = await createUser(services, { email: "someone@example.com", password: "password123" });
    for (const principal of [principalOf(root), principalOf(user)]) {
      for (const id of [ADMINS_WORKSPACE, "system", "global"]) {
        await rejectsWith(
          createWorkspace(services, principal, { id, name: id }),
          "INVALID_INPUT",
          "id",
          /reserved/,
        );
      }
    }
    assert.equal(await services.db.workspace.count({ where: { id: ADMINS_WORKSPACE } }), 0);
  });

  it("keeps an existing `admins` workspace to superadmins, whatever its member rows say", async () => {
    // As a worker records it (or as an older version let anyone create it, with its creator admin).
    await services.pool.query(
      `INSERT INTO workspace (id, name) VALUES ($1, 'Admins') ON CONFLICT (id) DO NOTHING`,
      [ADMINS_WORKSPACE],
    );
    const intruder = await createUser(services, { email: "intruder@example.com", password: "password123" });
    await services.db.workspaceMember.create({
      data: { workspaceId: ADMINS_WORKSPACE, userId: intruder.id, role: "admin" },
    });
    await rejectsWith(requireMembership(services, principalOf(intruder), ADMINS_WORKSPACE), "NOT_FOUND");
    assert.ok(
      !(await listWorkspaces(services, principalOf(intruder))).some((w) => w.id === ADMINS_WORKSPACE),
    );
    const root = await services.db.user.findUniqueOrThrow({ where: { email: "root@example.com" } });
    const membership = await requireMembership(services, principalOf(root), ADMINS_WORKSPACE);
    assert.equal(membership.role, "admin");
  });
});

describe("a job never runs with more rights than the author of its code", () => {
  let admin: Membership;
  let dev: Membership;
  let secretPath: string;

  before(async () => {
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    ({ membership: admin } = await createTestMember(services, "corp"));
    dev = await member("dev@example.com", "corp", "developer");
    const me = admin.principal.username;
    // The admin's own secret, which the developer may not read.
    secretPath = `u/${me}/vault`;
    await createVariable(ctx, admin, { path: secretPath, value: ADMIN_SECRET, isSecret: true });
    // A folder the developer writes in, holding a value both may read.
    await createFolder(services, admin, {
      name: "ops",
      extraPerms: { [`u/${dev.principal.username}`]: true },
    });
    await createVariable(ctx, admin, { path: "f/ops/region", value: "eu-west" });
    await deployScript(services, admin, { path: "f/ops/report", language: "bash", content: "echo report" });
    await deployScript(services, admin, { path: `u/${me}/own`, language: "bash", content: "echo mine" });
  });
  after(() => services?.close());

  it("the story of the issue: a developer's redeploy of a script an admin's schedule runs gets the developer's rights only", async () => {
    const me = admin.principal.username;
    await createSchedule(services, admin, {
      path: "f/ops/nightly",
      schedule: "0 0 3 * * *",
      scriptPath: "f/ops/report",
    });
    // The developer redeploys the script the admin's schedule runs, with code of his own.
    const current = await latestScript(services, "corp", "f/ops/report");
    await deployScript(services, dev, {
      path: "f/ops/report",
      language: "bash",
      content: 'curl -H "Authorization: Bearer $WM_TOKEN" …',
      parentHash: current!.hash,
    });
    // The next tick.
    await services.pool.query(
      "UPDATE schedule SET next_run_at = now() AT TIME ZONE 'UTC' - interval '1 second' WHERE path = 'f/ops/nightly'",
    );
    const [outcome] = await runDueSchedules(services);
    assert.ok(outcome?.jobId, outcome?.error ?? "the tick started a job");
    const job = await services.db.job.findUniqueOrThrow({ where: { id: outcome.jobId } });
    assert.equal(job.permissionedAs, `u/${me}`);
    assert.deepEqual(job.boundedBy, [dev.principal.username]);
    const token = await claimToken(outcome.jobId);

    const asJob = await membershipFromBearer(ctx, token, undefined, "corp");
    assert.equal(asJob.principal.username, me, "the job still runs as the schedule's owner");
    assert.equal(asJob.role, "developer", "with the lower role of the two");
    // The admin's secret is out of reach: the developer may not read it.
    await rejectsWith(getVariableValue(ctx, asJob, secretPath), "NOT_FOUND");
    assert.ok(!(await listVariables(ctx, asJob)).some((v) => v.path === secretPath));
    // What both may read still works.
    assert.equal(await getVariableValue(ctx, asJob, "f/ops/region"), "eu-west");
    // No promotion, whatever the token's user may do.
    await rejectsWith(updateMember(services, asJob, dev.principal.username, { role: "admin" }), "FORBIDDEN");
    // Nor laundering the code into the admin's name.
    await rejectsWith(
      deployScript(services, asJob, { path: "f/ops/other", language: "bash", content: "echo x" }),
      "FORBIDDEN",
    );
    await rejectsWith(
      createSchedule(services, asJob, {
        path: "f/ops/again",
        schedule: "0 0 4 * * *",
        scriptPath: "f/ops/report",
      }),
      "FORBIDDEN",
    );
  });

  it("passes the bound on to the jobs a bounded job starts: running the admin's own script gains nothing", async () => {
    // A job of the developer's code, run by the admin (by hand, a webhook or a schedule).
    const first = await runScriptByPath(services, admin, "f/ops/report", {});
    const asJob = await membershipFromBearer(ctx, await claimToken(first), undefined, "corp");
    // It starts a script the admin wrote and that both may run…
    await deployScript(services, admin, { path: "f/ops/admin_tool", language: "bash", content: "echo t" });
    const child = await runScriptByPath(services, asJob, "f/ops/admin_tool", {});
    const childJob = await services.db.job.findUniqueOrThrow({ where: { id: child } });
    assert.deepEqual(childJob.boundedBy, [dev.principal.username]);
    // …whose token is still bounded by the developer.
    const asChild = await membershipFromBearer(ctx, await claimToken(child), undefined, "corp");
    assert.equal(asChild.role, "developer");
    await rejectsWith(getVariableValue(ctx, asChild, secretPath), "NOT_FOUND");
  });

  it("resolves a job's $var: arguments within the rights of its code's author too", async () => {
    const id = await runScriptByPath(services, admin, "f/ops/report", {});
    await rejectsWith(
      resolveJobArgs(ctx, "corp", `u/${admin.principal.username}`, { pw: `$var:${secretPath}` }, { id }),
      "NOT_FOUND",
      "args.pw",
    );
    // The admin's own code, run by the admin, reads it.
    const own = await runScriptByPath(services, admin, `u/${admin.principal.username}/own`, {});
    const args = await resolveJobArgs(
      ctx,
      "corp",
      `u/${admin.principal.username}`,
      { pw: `$var:${secretPath}` },
      { id: own },
    );
    assert.equal(args.pw, ADMIN_SECRET);
    // Both jobs are drained so that later claims find only their own.
    await claimJobs(services.pool, services.boss, "bash", ["drain1", "drain2"]);
  });

  it("keeps the full rights of the author's own code, run by its author", async () => {
    const id = await runScriptByPath(services, admin, `u/${admin.principal.username}/own`, {});
    const asJob = await membershipFromBearer(ctx, await claimToken(id), undefined, "corp");
    assert.equal(asJob.role, "admin");
    assert.equal(asJob.bounds, undefined);
    assert.equal(await getVariableValue(ctx, asJob, secretPath), ADMIN_SECRET);
  });

  it("limits a WM_TOKEN to its workspace: no workspaces, members, roles, tokens or instance rights", async () => {
    const root = await createUser(services, {
      email: "root2@example.com",
      password: "password123",
      superAdmin: true,
    });
    const rootMembership = await requireMembership(services, principalOf(root), "corp");
    await deployScript(services, rootMembership, {
      path: `u/${root.username}/mine`,
      language: "bash",
      content: "echo root",
    });
    const id = await runScriptByPath(services, rootMembership, `u/${root.username}/mine`, {});
    const token = await claimToken(id);
    const principal = await principalFromBearer(ctx, token, undefined);
    assert.equal(principal.isSuperAdmin, false, "a superadmin's job token is no superadmin");
    await rejectsWith(createWorkspace(services, principal, { id: "jobs-own", name: "x" }), "FORBIDDEN");
    await rejectsWith(createToken(services, principal, { label: "escape" }), "FORBIDDEN");
    await rejectsWith(listAccounts(services, principal), "FORBIDDEN");
    const asJob = await membershipFromBearer(ctx, token, undefined, "corp");
    assert.equal(asJob.role, "admin", "admin of its own workspace, as its superadmin user");
    const outsider = await createUser(services, { email: "outsider@example.com", password: "password123" });
    await rejectsWith(addMember(services, asJob, { email: outsider.email, role: "admin" }), "FORBIDDEN");
    await rejectsWith(updateMember(services, asJob, dev.principal.username, { role: "admin" }), "FORBIDDEN");
    await rejectsWith(
      createFolder(services, asJob, { name: "grab", extraPerms: { [`u/${outsider.username}`]: true } }),
      "FORBIDDEN",
    );
    await createTestMember(services, "elsewhere");
    await rejectsWith(membershipFromBearer(ctx, token, undefined, "elsewhere"), "NOT_FOUND");
    assert.deepEqual(
      (await listWorkspaces(services, principal)).map((w) => w.id),
      ["corp"],
    );
  });
});
