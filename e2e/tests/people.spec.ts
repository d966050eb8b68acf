import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import * as wmill from "windmill-client";
import { E2E_ADMIN, E2E_SUPERADMIN_SECRET } from "../instance.ts";
import { addMember, createAccount, deployScript } from "../fixtures/people.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

async function signInBrowser(page: Page, email: string, password: string) {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/workspaces/);
}

async function get(request: APIRequestContext, url: string, headers: Record<string, string>) {
  const response = await request.get(url, { headers });
  return {
    status: response.status(),
    body: response.status() === 200 ? await response.json() : await response.text(),
  };
}

test.describe("people, roles, folders, tokens and audit over REST", () => {
  test("workspace members with Windmill's user shape; roles; disabling a member", async ({ request }) => {
    const ws = uniqueWorkspace("people");
    await createWorkspace(request, ws);
    const admin = await createAccount(request, "ppl-admin");
    const dev = await createAccount(request, "ppl-dev");
    const op = await createAccount(request, "ppl-op");
    await addMember(request, ws, admin.email, "admin");
    await addMember(request, ws, dev.email, "developer");
    await addMember(request, ws, op.email, "operator");

    const users = (await get(request, `/api/w/${ws}/users/list`, op.headers)).body;
    const byName = Object.fromEntries(users.map((u: { username: string }) => [u.username, u]));
    expect(byName[admin.username]).toMatchObject({
      email: admin.email,
      is_admin: true,
      operator: false,
      role: "Admin",
    });
    expect(byName[op.username]).toMatchObject({
      is_admin: false,
      operator: true,
      disabled: false,
      role: "Operator",
    });
    expect(byName[dev.username]).toMatchObject({ groups: [], folders: [], role: "Developer" });
    expect(typeof byName[dev.username].created_at).toBe("string");

    // Only admins manage members; an unknown account is refused naming the field.
    const denied = await request.post(`/api/w/${ws}/users/add`, {
      headers: dev.headers,
      data: { email: op.email, is_admin: true, operator: false },
    });
    expect(denied.status()).toBe(403);
    const unknown = await request.post(`/api/w/${ws}/workspaces/add_user`, {
      headers: admin.headers,
      data: { email: "nobody@example.com", is_admin: false, operator: false },
    });
    expect(unknown.status()).toBe(404);
    expect(await unknown.text()).toMatch(/^email: /);

    expect(
      (
        await request.post(`/api/w/${ws}/users/update/${op.username}`, {
          headers: admin.headers,
          data: { operator: false },
        })
      ).status(),
    ).toBe(200);
    expect((await get(request, `/api/w/${ws}/users/whoami`, op.headers)).body).toMatchObject({
      operator: false,
      is_admin: false,
    });

    expect(
      (
        await request.post(`/api/w/${ws}/users/update/${op.username}`, {
          headers: admin.headers,
          data: { disabled: true },
        })
      ).status(),
    ).toBe(200);
    expect((await get(request, `/api/w/${ws}/scripts/list`, op.headers)).status).toBe(404);
    expect(
      (await request.delete(`/api/w/${ws}/users/delete/${op.username}`, { headers: admin.headers })).status(),
    ).toBe(200);
    expect((await get(request, `/api/w/${ws}/users/list`, admin.headers)).body).toHaveLength(2);

    // Disabling the account instance-wide stops its tokens at once.
    expect(
      (
        await request.post(`/api/users/update/${dev.email}`, {
          headers: superadmin,
          data: { disabled: true },
        })
      ).status(),
    ).toBe(200);
    expect((await get(request, `/api/w/${ws}/users/whoami`, dev.headers)).status).toBe(401);
    expect(
      (
        await request.post("/api/users/create", {
          headers: admin.headers,
          data: { email: "x@example.com", password: "password-123", super_admin: false },
        })
      ).status(),
    ).toBe(403);
  });

  test("folders and groups decide who sees f/ paths; u/ paths are private", async ({ request }) => {
    const ws = uniqueWorkspace("folders");
    await createWorkspace(request, ws);
    const dev = await createAccount(request, "fld-dev");
    const other = await createAccount(request, "fld-other");
    await addMember(request, ws, dev.email, "developer");
    await addMember(request, ws, other.email, "developer");

    const folder = await request.post(`/api/w/${ws}/folders/create`, {
      headers: dev.headers,
      data: { name: "etl", summary: "loads" },
    });
    expect(folder.status()).toBe(201);
    await deployScript(request, ws, "f/etl/load", dev.headers);
    await deployScript(request, ws, `u/${dev.username}/scratch`, dev.headers);
    expect((await get(request, `/api/w/${ws}/folders/get/etl`, dev.headers)).body).toMatchObject({
      name: "etl",
      owners: [`u/${dev.username}`],
      extra_perms: { [`u/${dev.username}`]: true },
    });

    // `other` sees neither the folder's script nor dev's own one, and cannot write into the folder.
    expect((await get(request, `/api/w/${ws}/scripts/get/p/f/etl/load`, other.headers)).status).toBe(404);
    expect(
      (await get(request, `/api/w/${ws}/scripts/get/p/u/${dev.username}/scratch`, other.headers)).status,
    ).toBe(404);
    expect((await get(request, `/api/w/${ws}/scripts/list`, other.headers)).body).toEqual([]);
    expect((await get(request, `/api/w/${ws}/folders/get/etl`, other.headers)).status).toBe(404);
    const write = await request.post(`/api/w/${ws}/scripts/create`, {
      headers: other.headers,
      data: { path: "f/etl/mine", language: "bash", content: "echo" },
    });
    expect(write.status()).toBe(403);

    // Shared through a group as a viewer: reads and runs, still no writes.
    expect(
      (
        await request.post(`/api/w/${ws}/groups/create`, { headers: superadmin, data: { name: "analysts" } })
      ).status(),
    ).toBe(201);
    expect(
      (
        await request.post(`/api/w/${ws}/groups/adduser/analysts`, {
          headers: superadmin,
          data: { username: other.username },
        })
      ).status(),
    ).toBe(200);
    expect((await get(request, `/api/w/${ws}/groups/get/analysts`, other.headers)).body).toMatchObject({
      name: "analysts",
      members: [other.username],
    });
    expect(
      (
        await request.post(`/api/w/${ws}/folders/update/etl`, {
          headers: dev.headers,
          data: { extra_perms: { "g/analysts": false } },
        })
      ).status(),
    ).toBe(200);
    expect((await get(request, `/api/w/${ws}/scripts/get/p/f/etl/load`, other.headers)).status).toBe(200);
    expect(
      (await get(request, `/api/w/${ws}/scripts/list`, other.headers)).body.map(
        (s: { path: string }) => s.path,
      ),
    ).toEqual(["f/etl/load"]);
    expect(
      (
        await request.post(`/api/w/${ws}/scripts/create`, {
          headers: other.headers,
          data: { path: "f/etl/mine", language: "bash", content: "echo" },
        })
      ).status(),
    ).toBe(403);
    expect((await get(request, `/api/w/${ws}/users/whoami`, other.headers)).body).toMatchObject({
      groups: ["analysts"],
      folders_read: ["etl"],
      folders: [],
    });

    // Ownership: other cannot manage the folder until made an owner.
    expect(
      (
        await request.post(`/api/w/${ws}/folders/addowner/etl`, {
          headers: other.headers,
          data: { owner: `u/${other.username}` },
        })
      ).status(),
    ).toBe(403);
    expect(
      (
        await request.post(`/api/w/${ws}/folders/addowner/etl`, {
          headers: dev.headers,
          data: { owner: `u/${other.username}` },
        })
      ).status(),
    ).toBe(200);
    await deployScript(request, ws, "f/etl/mine", other.headers);
    expect(
      (await request.delete(`/api/w/${ws}/folders/delete/etl`, { headers: other.headers })).status(),
    ).toBe(409);
    expect(
      (
        await request.post(`/api/w/${ws}/groups/removeuser/analysts`, {
          headers: superadmin,
          data: { username: other.username },
        })
      ).status(),
    ).toBe(200);
    expect(
      (await request.delete(`/api/w/${ws}/groups/delete/analysts`, { headers: superadmin })).status(),
    ).toBe(200);
    expect((await get(request, `/api/w/${ws}/groups/list`, other.headers)).body).toEqual([]);
  });

  test("API tokens: created once, listed by prefix, scoped to a workspace, revoked", async ({ request }) => {
    const ws = uniqueWorkspace("tokens");
    const elsewhere = uniqueWorkspace("tokens-other");
    await createWorkspace(request, ws);
    await createWorkspace(request, elsewhere);
    const user = await createAccount(request, "tok");
    await addMember(request, ws, user.email, "developer");
    await addMember(request, elsewhere, user.email, "developer");

    const past = await request.post("/api/users/tokens/create", {
      headers: user.headers,
      data: { label: "old", expiration: "2001-01-01T00:00:00Z" },
    });
    expect(past.status()).toBe(400);
    expect(past.headers()["x-error-field"]).toBe("expiration");
    const created = await request.post("/api/users/tokens/create", {
      headers: user.headers,
      data: { label: "ci", workspace_id: ws, expiration: new Date(Date.now() + 3600_000).toISOString() },
    });
    expect(created.status()).toBe(201);
    const token = await created.text();
    const scoped = { Authorization: `Bearer ${token}` };
    expect((await get(request, `/api/w/${ws}/scripts/list`, scoped)).status).toBe(200);
    expect((await get(request, `/api/w/${elsewhere}/scripts/list`, scoped)).status).toBe(404);

    const tokens = (await get(request, "/api/users/tokens/list", user.headers)).body;
    const ci = tokens.find((t: { label?: string }) => t.label === "ci");
    expect(ci).toMatchObject({ token_prefix: token.slice(0, 10), workspace_id: ws });
    expect(typeof ci.expiration).toBe("string");
    expect(JSON.stringify(tokens)).not.toContain(token);
    expect(
      (
        await request.delete(`/api/users/tokens/delete/${ci.token_prefix}`, { headers: user.headers })
      ).status(),
    ).toBe(200);
    expect((await get(request, `/api/w/${ws}/scripts/list`, scoped)).status).toBe(401);
  });

  test("sign-in attempts are rate limited with Retry-After, and audited with the address", async ({
    request,
  }) => {
    const victim = await createAccount(request, "limited");
    const ip = { "x-forwarded-for": `203.0.113.${Math.floor(Math.random() * 200) + 1}` };
    for (let i = 0; i < 10; i++) {
      const wrong = await request.post("/api/auth/login", {
        headers: ip,
        data: { email: victim.email, password: "wrong-password" },
      });
      expect(wrong.status()).toBe(401);
    }
    const blocked = await request.post("/api/auth/login", {
      headers: ip,
      data: { email: victim.email, password: victim.password },
    });
    expect(blocked.status()).toBe(429);
    expect(Number(blocked.headers()["retry-after"])).toBeGreaterThan(0);

    const ws = uniqueWorkspace("audit");
    await createWorkspace(request, ws);
    const rows = (
      await get(
        request,
        `/api/w/${ws}/audit/list?all_workspaces=true&resource=${victim.email}&per_page=100`,
        superadmin,
      )
    ).body;
    const failures = rows.filter((r: { operation: string }) => r.operation === "users.login_failure");
    expect(failures).toHaveLength(11);
    expect(failures[0]).toMatchObject({ action_kind: "Execute", ip: ip["x-forwarded-for"] });
  });

  test("the audit log: admins see the workspace's rows, others only their own, with filters", async ({
    request,
  }) => {
    const ws = uniqueWorkspace("audit");
    await createWorkspace(request, ws);
    const admin = await createAccount(request, "aud-admin");
    const dev = await createAccount(request, "aud-dev");
    await addMember(request, ws, admin.email, "admin");
    await addMember(request, ws, dev.email, "developer");
    await deployScript(request, ws, `u/${dev.username}/job`, dev.headers);
    await deployScript(request, ws, `u/${admin.username}/job`, admin.headers);
    const run = await request.post(`/api/w/${ws}/jobs/run/p/u/${dev.username}/job`, {
      headers: dev.headers,
      data: {},
    });
    expect(run.status()).toBe(201);

    const all = (await get(request, `/api/w/${ws}/audit/list?per_page=100`, admin.headers)).body;
    const operations = all.map(
      (r: { operation: string; username: string }) => `${r.username}:${r.operation}`,
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        `${dev.username}:scripts.create`,
        `${admin.username}:scripts.create`,
        `${dev.username}:jobs.run.script`,
      ]),
    );
    expect(all[0]).toMatchObject({ workspace_id: ws });
    const mine = (await get(request, `/api/w/${ws}/audit/list?per_page=100`, dev.headers)).body;
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((r: { username: string }) => r.username === dev.username)).toBe(true);
    const runs = (await get(request, `/api/w/${ws}/audit/list?operation=jobs.run`, admin.headers)).body;
    expect(runs.map((r: { operation: string }) => r.operation)).toEqual(["jobs.run.script"]);
    const bad = await request.get(`/api/w/${ws}/audit/list?after=yesterday`, { headers: admin.headers });
    expect(bad.status()).toBe(400);
    expect(await bad.text()).toMatch(/^after: /);
  });
});

test("the people pages: members, folders, tokens, audit and governance in the browser", async ({
  page,
  request,
}) => {
  const ws = uniqueWorkspace("ui-people");
  const admin = await createAccount(request, "ui-admin");
  const dev = await createAccount(request, "ui-dev");
  const created = await request.post("/api/workspaces/create", {
    headers: superadmin,
    data: { id: ws, name: "People UI", username: admin.email },
  });
  expect(created.status()).toBe(201);
  await signInBrowser(page, admin.email, admin.password);

  await page.goto(`/w/${ws}/members`);
  await expect(page.getByRole("cell", { name: admin.email })).toBeVisible();
  await page.getByLabel("Email or username").fill("ghost@example.com");
  await page.getByRole("button", { name: "Add", exact: true }).click();
  await expect(page.locator(".field-error")).toContainText("email: no user ghost@example.com");
  await page.getByLabel("Email or username").fill(dev.email);
  await page.getByRole("button", { name: "Add", exact: true }).click();
  await expect(page.getByRole("cell", { name: dev.email })).toBeVisible();
  await page.getByLabel(`Role of ${dev.username}`).selectOption("operator");
  await expect
    .poll(
      async () => (await get(request, `/api/w/${ws}/users/get/${dev.username}`, superadmin)).body.operator,
    )
    .toBe(true);

  await page.getByRole("link", { name: "Folders & groups" }).click();
  await expect(page.getByText("No folders you can see yet.")).toBeVisible();
  await expect(page.getByText("No groups yet.")).toBeVisible();
  await page.getByLabel("New folder").fill("bad name");
  await page.getByRole("button", { name: "Create folder" }).click();
  await expect(page.locator(".field-error")).toContainText("name: use 1-50 letters");
  await page.getByLabel("New folder").fill("reports");
  await page.getByRole("button", { name: "Create folder" }).click();
  const folder = page.locator('[data-folder="reports"]');
  await expect(folder).toContainText(`u/${admin.username}`);
  await folder.getByLabel("Share with").fill(`u/${dev.username}`);
  await folder.getByRole("button", { name: "Share" }).click();
  await expect(folder).toContainText(`u/${dev.username}`);
  await page.getByLabel("New group").fill("oncall");
  await page.getByRole("button", { name: "Create group" }).click();
  await page.locator('[data-group="oncall"]').getByPlaceholder("username").fill(dev.username);
  await page.locator('[data-group="oncall"]').getByRole("button", { name: "Add" }).click();
  await expect(page.locator('[data-group="oncall"]')).toContainText(dev.username);

  await page.getByRole("link", { name: "Governance" }).click();
  await expect(page.locator(`[data-workspace="${ws}"]`)).toContainText("Single admin");

  await page.getByRole("link", { name: "Audit log" }).click();
  await expect(page.getByRole("cell", { name: "folder.create" })).toBeVisible();
  await page.getByLabel("After").fill("not a date");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page.locator(".field-error")).toContainText("after: not a valid date-time");

  await page.getByRole("link", { name: "API tokens" }).click();
  await expect(page).toHaveURL(/\/account\/tokens/);
  await page.getByLabel("Label", { exact: true }).fill("laptop");
  await page.getByRole("button", { name: "Create token" }).click();
  const token = await page.getByTestId("new-token").textContent();
  expect(token?.length).toBeGreaterThan(20);
  const row = page.locator(`[data-token="${token!.slice(0, 10)}"]`);
  await expect(row).toContainText("laptop");
  await row.getByRole("button", { name: "Revoke" }).click();
  await page.getByRole("alertdialog").getByRole("button", { name: "Revoke token" }).click();
  await expect(row).toHaveCount(0);
  expect((await get(request, `/api/w/${ws}/scripts/list`, { Authorization: `Bearer ${token}` })).status).toBe(
    401,
  );
});

test("superadmin pages: every workspace's governance, creating and disabling accounts", async ({
  page,
  request,
}) => {
  const ws = uniqueWorkspace("ui-admin");
  await createWorkspace(request, ws);
  await signInBrowser(page, E2E_ADMIN.email, E2E_ADMIN.password);
  await page.goto("/admin/governance");
  await expect(page.locator(`[data-workspace="${ws}"]`)).toContainText("No admin");

  await page.getByRole("link", { name: "Users" }).click();
  await page.getByLabel("Email").fill("not-an-email");
  await page.getByLabel("Password").fill("password-123");
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.locator(".field-error")).toContainText("email: not a valid email address");
  const email = `ui-created-${Date.now().toString(36)}@example.com`;
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Create user" }).click();
  const row = page.locator(`[data-email="${email}"]`);
  await expect(row).toContainText("active");
  await row.getByRole("button", { name: "Disable" }).click();
  await expect(row).toContainText("disabled");
  const login = await request.post("/api/auth/login", { data: { email, password: "password-123" } });
  expect(login.status()).toBe(401);
});

test("a member who is no superadmin sees why the instance pages refuse them", async ({ page, request }) => {
  const user = await createAccount(request, "ui-plain");
  await signInBrowser(page, user.email, user.password);
  await page.goto("/admin/governance");
  await expect(page.locator(".error")).toContainText("only a superadmin may read the governance report");
});

// Windmill's own TypeScript client (Apache-2.0): its services for users, groups, folders, tokens
// and the audit log must read Millrace's answers as they are.
test("windmill-client manages users, groups, folders, tokens and reads the audit log", async ({
  request,
  baseURL,
}) => {
  const workspace = uniqueWorkspace("wmill-people");
  await createWorkspace(request, workspace);
  const lead = await createAccount(request, "wmill-lead");
  wmill.setClient(E2E_SUPERADMIN_SECRET, baseURL);

  await wmill.WorkspaceService.addUser({
    workspace,
    requestBody: { email: lead.email, is_admin: true, operator: false },
  });
  const users = await wmill.UserService.listUsers({ workspace });
  expect(users.map((u) => [u.email, u.is_admin, u.operator])).toEqual([[lead.email, true, false]]);
  await wmill.UserService.updateUser({
    workspace,
    username: lead.username,
    requestBody: { operator: false },
  });

  await wmill.GroupService.createGroup({ workspace, requestBody: { name: "ops", summary: "on call" } });
  await wmill.GroupService.addUserToGroup({
    workspace,
    name: "ops",
    requestBody: { username: lead.username },
  });
  expect(await wmill.GroupService.getGroup({ workspace, name: "ops" })).toMatchObject({
    name: "ops",
    summary: "on call",
    members: [lead.username],
  });
  expect(await wmill.GroupService.listGroupNames({ workspace })).toEqual(["ops"]);

  await wmill.FolderService.createFolder({
    workspace,
    requestBody: {
      name: "billing",
      summary: "invoices",
      owners: [`u/${lead.username}`],
      extra_perms: { "g/ops": false },
    },
  });
  const folder = await wmill.FolderService.getFolder({ workspace, name: "billing" });
  expect(folder).toMatchObject({ owners: [`u/${lead.username}`], extra_perms: { "g/ops": false } });
  expect(await wmill.FolderService.existsFolder({ workspace, name: "billing" })).toBe(true);
  await wmill.FolderService.removeOwnerToFolder({
    workspace,
    name: "billing",
    requestBody: { owner: `u/${lead.username}` },
  });
  expect((await wmill.FolderService.getFolder({ workspace, name: "billing" })).owners).toEqual([]);

  const logs = await wmill.AuditService.listAuditLogs({ workspace, operation: "folder.", perPage: 10 });
  expect(logs.map((l) => l.operation)).toEqual(["folder.remove_owner", "folder.create"]);
  expect(logs[0]).toMatchObject({
    username: "superadmin_secret",
    action_kind: "Delete",
    resource: "billing",
  });

  // Tokens belong to users: the lead's own token, listed and revoked through the client.
  wmill.setClient(lead.token, baseURL);
  const token = await wmill.UserService.createToken({
    requestBody: { label: "wmill", workspace_id: workspace },
  });
  const listed = await wmill.UserService.listTokens({ excludeEphemeral: true });
  expect(listed.map((t) => [t.label, t.token_prefix, t.workspace_id])).toEqual([
    ["wmill", token.slice(0, 10), workspace],
  ]);
  await wmill.UserService.deleteToken({ tokenPrefix: token.slice(0, 10) });
  expect(await wmill.UserService.listTokens({ excludeEphemeral: true })).toEqual([]);
});
