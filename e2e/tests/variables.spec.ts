import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "@playwright/test";
import pg from "pg";
import { E2E_ADMIN, E2E_PG_PORT } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

const SECRET = `ui-secret-${Date.now().toString(36)}`;

/** The e2e instance's own database (global-setup's embedded PostgreSQL), to look at what is stored. */
async function storedText(sql: string, params: unknown[] = []): Promise<string> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const { password } = JSON.parse(fs.readFileSync(path.join(root, ".data/e2e-pg.json"), "utf8")) as {
    password: string;
  };
  const client = new pg.Client({
    connectionString: `postgresql://postgres:${password}@127.0.0.1:${E2E_PG_PORT}/millrace_e2e`,
  });
  await client.connect();
  try {
    const { rows } = await client.query<{ t: string | null }>(sql, params);
    return rows.map((row) => row.t ?? "").join("\n");
  } finally {
    await client.end();
  }
}

test("a secret set in the UI is encrypted at rest, hidden from lists and read by a bun job", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("vars");
  await createWorkspace(request, workspace);

  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();

  await page.goto(`/w/${workspace}/variables`);
  await expect(page.getByText("No variables yet")).toBeVisible();
  await page.getByRole("button", { name: "New variable" }).click();

  // A bad path is refused next to the field, and nothing is stored.
  await page.getByLabel("Path").fill("u/e2e_admin/../db password");
  await page.getByLabel("Secret").check();
  await page.getByLabel("Value").fill(SECRET);
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.locator(".field-error")).toContainText("path");
  const empty = await request.get(`/api/w/${workspace}/variables/list`, { headers: superadmin });
  expect(await empty.json()).toEqual([]);

  await page.getByLabel("Path").fill("u/e2e_admin/db_password");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/variables$`));
  const row = page.getByTestId("variable-row").filter({ hasText: "u/e2e_admin/db_password" });
  await expect(row).toContainText("secret");
  await expect(page.getByText(SECRET)).toHaveCount(0);

  // The API list hides the value; a get decrypts it (and is audited).
  const list = await request.get(`/api/w/${workspace}/variables/list`, { headers: superadmin });
  expect(list.status()).toBe(200);
  expect(await list.text()).not.toContain(SECRET);
  expect(await list.json()).toEqual([
    expect.objectContaining({ path: "u/e2e_admin/db_password", is_secret: true, value: null }),
  ]);
  const value = await request.get(`/api/w/${workspace}/variables/get_value/u/e2e_admin/db_password`, {
    headers: superadmin,
  });
  expect(await value.json()).toBe(SECRET);

  // What a database dump would hold: ciphertext only.
  const stored = await storedText("SELECT v::text AS t FROM variable v WHERE workspace_id = $1", [workspace]);
  expect(stored).toContain("enc:v2:");
  expect(stored).not.toContain(SECRET);
  expect(await storedText("SELECT k::text AS t FROM workspace_key k")).not.toContain(SECRET);

  // A resource through the UI: a value that does not match its type is refused at the field.
  await page.goto(`/w/${workspace}/resources/new`);
  await page.locator('input[name="path"]').fill("u/e2e_admin/main_db");
  await page.locator('select[name="resource_type"]').selectOption("postgresql");
  await page
    .locator('textarea[name="value"]')
    .fill(JSON.stringify({ host: "db.internal", port: "five", user: "app", dbname: "app" }));
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("value-error")).toContainText("value.port");
  await page.locator('textarea[name="value"]').fill(
    JSON.stringify({
      host: "db.internal",
      port: 5432,
      user: "app",
      dbname: "app",
      password: "$var:u/e2e_admin/db_password",
    }),
  );
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/resources$`));
  await expect(page.getByRole("link", { name: "u/e2e_admin/main_db" })).toBeVisible();

  // A bun script using Windmill's own client reads both from Millrace, with the job token of the
  // user who runs it (the SUPERADMIN_SECRET principal is no user and gets no token).
  const login = await request.post("/api/auth/login", { data: E2E_ADMIN });
  const admin = { Authorization: `Bearer ${await login.text()}` };
  // Stored where the job will look (a CI run once saw the job's read answered 404; this says which
  // side it was on should it happen again).
  const resources = await request.get(`/api/w/${workspace}/resources/list`, { headers: admin });
  expect(await resources.json(), "the workspace's resources").toEqual([
    expect.objectContaining({ path: "u/e2e_admin/main_db", resource_type: "postgresql" }),
  ]);
  const deployed = await request.post(`/api/w/${workspace}/scripts/create`, {
    headers: admin,
    data: {
      path: "u/e2e_admin/read_config",
      summary: "",
      language: "bun",
      content: `import * as wmill from "windmill-client";

export async function main() {
  const password = await wmill.getVariable("u/e2e_admin/db_password");
  const db = await wmill.getResource("u/e2e_admin/main_db");
  return { same: password === db.password, host: db.host, length: password.length };
}
`,
    },
  });
  expect(deployed.status(), await deployed.text()).toBe(201);
  const run = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/e2e_admin/read_config`, {
    headers: admin,
    data: {},
  });
  expect(run.status(), await run.text()).toBe(200);
  expect(await run.json()).toEqual({ same: true, host: "db.internal", length: SECRET.length });
});

test("variables and resources over REST: who may do what, and bad input refused with the field", async ({
  request,
}) => {
  const workspace = uniqueWorkspace("vars-api");
  await createWorkspace(request, workspace);
  // Before any sign-in: the request context keeps the `token` cookie that /api/auth/login sets.
  const anonymous = await request.get(`/api/w/${workspace}/variables/list`);
  expect(anonymous.status()).toBe(401);
  const stamp = Date.now().toString(36);
  const tokenOf = async (role: "operator" | "developer" | null) => {
    const email = `${role ?? "outsider"}-${stamp}@example.com`;
    const created = await request.post("/api/users/create", {
      headers: superadmin,
      data: { email, password: "password-123456" },
    });
    expect(created.status(), await created.text()).toBe(201);
    if (role) {
      const added = await request.post(`/api/w/${workspace}/users/add`, {
        headers: superadmin,
        data: { email, role },
      });
      expect(added.status(), await added.text()).toBe(201);
    }
    const login = await request.post("/api/auth/login", { data: { email, password: "password-123456" } });
    const headers = { Authorization: `Bearer ${await login.text()}` };
    const { username } = (await (await request.get("/api/users/whoami", { headers })).json()) as {
      username: string;
    };
    return { headers, username };
  };
  const op = await tokenOf("operator");
  const dev = await tokenOf("developer");
  const [operator, developer, outsider] = [op.headers, dev.headers, (await tokenOf(null)).headers];
  const base = `/api/w/${workspace}`;
  const create = (headers: Record<string, string>, path: string) =>
    request.post(`${base}/variables/create`, {
      headers,
      data: { path, value: "v", is_secret: true, description: "" },
    });

  expect((await request.get(`${base}/variables/list`, { headers: outsider })).status()).toBe(404);
  expect((await create(developer, `u/${dev.username}/token`)).status()).toBe(201);
  expect((await create(operator, `u/${op.username}/other`)).status()).toBe(403);
  expect((await request.get(`${base}/variables/list`, { headers: operator })).status()).toBe(200);
  expect(
    (
      await request.delete(`${base}/variables/delete/u/${dev.username}/token`, { headers: operator })
    ).status(),
  ).toBe(403);
  expect(
    (await request.get(`${base}/variables/exists/u/${dev.username}/token`, { headers: developer })).ok(),
  ).toBe(true);

  const bad = await request.post(`${base}/resources/create`, {
    headers: superadmin,
    data: { path: "f/shared/db", resource_type: "smtp", value: { host: "mail", port: "25" } },
  });
  expect(bad.status()).toBe(400);
  expect(bad.headers()["x-error-field"]).toBe("value.port");
  expect(await bad.text()).toContain("value.port: must be integer");
  const badPath = await request.post(`${base}/resources/create`, {
    headers: superadmin,
    data: { path: "f/shared/../db", resource_type: "smtp", value: { host: "mail", port: 25 } },
  });
  expect(badPath.status()).toBe(400);
  expect(badPath.headers()["x-error-field"]).toBe("path");
  expect(await (await request.get(`${base}/resources/list`, { headers: superadmin })).json()).toEqual([]);

  const type = await request.post(`${base}/resources/type/create`, {
    headers: developer,
    data: { name: "c_bucket", schema: { type: "object", properties: { name: { type: "string" } } } },
  });
  expect(type.status(), await type.text()).toBe(201);
  const names = await (await request.get(`${base}/resources/type/listnames`, { headers: operator })).json();
  expect(names).toEqual(expect.arrayContaining(["postgresql", "state", "c_bucket"]));
});
