import { expect, test, type APIRequestContext } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

async function login(request: APIRequestContext): Promise<string> {
  const response = await request.post("/api/auth/login", { data: E2E_ADMIN });
  expect(response.status()).toBe(200);
  return response.text();
}

async function jobCount(request: APIRequestContext, workspace: string): Promise<number> {
  const response = await request.get(`/api/w/${workspace}/jobs/list?per_page=1000`, { headers: superadmin });
  return ((await response.json()) as unknown[]).length;
}

test.describe("webhooks", () => {
  const workspace = uniqueWorkspace("hooks");
  const hook = "u/e2e_admin/hook";
  const other = "u/e2e_admin/other";

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    for (const path of [hook, other]) {
      const created = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data: { path, language: "bash", summary: "", content: 'body="$1"\necho "got $body"' },
      });
      expect(created.status()).toBe(201);
    }
  });

  test("a webhook token runs its script with ?token= and a text body, and nothing else", async ({
    request,
  }) => {
    const session = await login(request);
    const created = await request.post(`/api/w/${workspace}/webhooks/tokens/create`, {
      headers: { Authorization: `Bearer ${session}` },
      data: { path: hook, label: "e2e" },
    });
    expect(created.status(), await created.text()).toBe(201);
    const token = await created.text();

    const sync = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/${hook}?token=${token}`, {
      headers: { "content-type": "text/plain" },
      data: "hello from a webhook",
    });
    expect(sync.status(), await sync.text()).toBe(200);
    expect(await sync.json()).toBe("got hello from a webhook");

    const json = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/${hook}`, {
      headers: { Authorization: `Bearer ${token}` },
      data: { body: "as json" },
    });
    expect(await json.json()).toBe("got as json");
    const asyncRun = await request.post(`/api/w/${workspace}/jobs/run/p/${hook}?token=${token}`, {
      headers: { "content-type": "application/xml" },
      data: "<a>1</a>",
    });
    expect(asyncRun.status()).toBe(201);
    expect(await asyncRun.text()).toMatch(/^[0-9a-f-]{36}$/);

    for (const [method, url] of [
      ["POST", `/api/w/${workspace}/jobs/run/p/${other}`],
      ["GET", `/api/w/${workspace}/scripts/list`],
      ["GET", `/api/w/${workspace}/jobs_u/get/${await asyncRun.text()}`],
      ["GET", "/api/users/whoami"],
      ["POST", "/api/users/tokens/create"],
      ["GET", "/api/trpc/me"],
    ] as const) {
      const response = await request.fetch(`${url}?token=${token}`, {
        method,
        data: method === "POST" ? {} : undefined,
      });
      expect(response.status(), `${method} ${url}`).toBe(403);
    }

    const listed = await request.get(`/api/w/${workspace}/scripts/list_tokens/${hook}`, {
      headers: { Authorization: `Bearer ${session}` },
    });
    const tokens = (await listed.json()) as { token_prefix: string; scopes: string[]; label: string }[];
    expect(tokens).toEqual([
      expect.objectContaining({
        token_prefix: token.slice(0, 10),
        scopes: [`run:script/${hook}`],
        label: "e2e",
      }),
    ]);
    const revoked = await request.delete(`/api/w/${workspace}/webhooks/tokens/delete/${token.slice(0, 10)}`, {
      headers: { Authorization: `Bearer ${session}` },
    });
    expect(revoked.status()).toBe(200);
    const after = await request.post(`/api/w/${workspace}/jobs/run/p/${hook}?token=${token}`, { data: {} });
    expect(after.status()).toBe(401);
  });

  test("Windmill's scoped token, and a 10 MB body refused with 413 without a job", async ({ request }) => {
    const session = await login(request);
    const created = await request.post("/api/users/tokens/create", {
      headers: { Authorization: `Bearer ${session}` },
      data: { label: "windmill style", scopes: [`run:script/${hook}`], workspace_id: workspace },
    });
    expect(created.status(), await created.text()).toBe(201);
    const token = await created.text();
    const ran = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/${hook}?token=${token}`, {
      data: { body: "scoped" },
    });
    expect(await ran.json()).toBe("got scoped");
    const denied = await request.post(`/api/w/${workspace}/jobs/run/p/${other}?token=${token}`, { data: {} });
    expect(denied.status()).toBe(403);

    const before = await jobCount(request, workspace);
    const tooBig = await request.post(`/api/w/${workspace}/jobs/run/p/${hook}?token=${token}`, {
      headers: { "content-type": "text/plain" },
      data: "x".repeat(10 * 1024 * 1024),
    });
    expect(tooBig.status()).toBe(413);
    expect(await tooBig.text()).toMatch(/^body: payload too large/);
    expect(await jobCount(request, workspace)).toBe(before);
  });

  test("the script's webhooks page shows its URLs, creates a token once, and the curl works", async ({
    page,
    request,
  }) => {
    await page.goto("/login");
    await page.getByLabel("Email").fill(E2E_ADMIN.email);
    await page.getByLabel("Password").fill(E2E_ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
    await page.goto(`/w/${workspace}/scripts/edit/${hook}`);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await expect(page).toHaveURL(new RegExp(`/w/${workspace}/scripts/webhooks/${hook}$`));
    await expect(page.getByTestId("webhook-async-url")).toHaveValue(
      new RegExp(`/api/w/${workspace}/jobs/run/p/${hook}$`),
    );
    await expect(page.getByTestId("webhook-sync-url")).toHaveValue(
      new RegExp(`/api/w/${workspace}/jobs/run_wait_result/p/${hook}$`),
    );
    await expect(page.getByTestId("curl-example")).toContainText("Authorization: Bearer $TOKEN");

    await page.getByLabel("Label", { exact: true }).fill("from the page");
    await page.getByRole("button", { name: "Create webhook token" }).click();
    const token = await page.getByTestId("new-token").locator("input").inputValue();
    expect(token.length).toBeGreaterThan(20);
    await expect(page.getByTestId("curl-example")).toContainText(`Bearer ${token}`);
    await expect(page.getByRole("cell", { name: "from the page" })).toBeVisible();

    const ran = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/${hook}?token=${token}`, {
      headers: { "content-type": "text/plain" },
      data: "from the page",
    });
    expect(await ran.json()).toBe("got from the page");
  });
});
