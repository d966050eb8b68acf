// Issue 21, item 5: every list page has a search or filters that narrow its rows; the Runs list
// shows duration, trigger and arguments, a chart of the listed runs, and cancels runs in bulk.
import { expect, test, type APIRequestContext, type Locator, type Page } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { addMember, createAccount, deployScript } from "../fixtures/people.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

const workspace = uniqueWorkspace("lists");

async function signIn(page: Page) {
  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
}

async function post(request: APIRequestContext, url: string, data: unknown): Promise<string> {
  const response = await request.post(url, { headers: superadmin, data });
  expect(response.status(), `${url}: ${await response.text()}`).toBeLessThan(300);
  return response.text();
}

/** Types `query` in the search box named `label`; the rows go from `before` to `after`. */
async function narrows(page: Page, label: string, rows: Locator, query: string, after: number) {
  await expect(rows.first()).toBeVisible();
  // The list is read once; wait until it holds more rows than the search should leave.
  await expect.poll(() => rows.count()).toBeGreaterThan(after);
  const before = await rows.count();
  expect(before).toBeGreaterThan(after);
  await page.getByRole("searchbox", { name: label }).fill(query);
  await expect(rows).toHaveCount(after);
  await page.getByRole("searchbox", { name: label }).fill("");
  await expect(rows).toHaveCount(before);
}

test.describe("list pages", () => {
  const w = `/api/w/${workspace}`;
  const accounts: { email: string; username: string }[] = [];
  let queued: string[] = [];

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    // A second workspace, so the workspaces list has one to filter out whatever ran before.
    await createWorkspace(request, uniqueWorkspace("lst-other"));
    await deployScript(request, workspace, "u/e2e_admin/lst_args", superadmin, 'who="$1"\necho "hi $who"\n');
    await deployScript(request, workspace, "u/e2e_admin/lst_fail", superadmin, "exit 3\n");
    await post(request, `${w}/jobs/run_wait_result/p/u/e2e_admin/lst_args`, { who: "world-of-lists" });
    await request.post(`${w}/jobs/run_wait_result/p/u/e2e_admin/lst_fail`, { headers: superadmin, data: {} });
    // A schedule that fires every second until one run is recorded, then is paused.
    await post(request, `${w}/schedules/create`, {
      path: "u/e2e_admin/lst_every",
      schedule: "* * * * * *",
      timezone: "UTC",
      script_path: "u/e2e_admin/lst_args",
      is_flow: false,
      args: { who: "cron" },
    });
    await expect
      .poll(
        async () => {
          const response = await request.get(
            `${w}/jobs/list?schedule_path=u/e2e_admin/lst_every&success=true`,
            { headers: superadmin },
          );
          return ((await response.json()) as unknown[]).length;
        },
        { timeout: 30_000 },
      )
      .toBeGreaterThan(0);
    await post(request, `${w}/schedules/setenabled/u/e2e_admin/lst_every`, { enabled: false });
    await post(request, `${w}/schedules/create`, {
      path: "u/e2e_admin/lst_nightly",
      schedule: "0 0 3 * * *",
      timezone: "UTC",
      script_path: "u/e2e_admin/lst_fail",
      is_flow: false,
      args: {},
      enabled: false,
    });
    // Two runs an hour ahead: queued for the whole test.
    queued = [];
    for (let i = 0; i < 2; i++) {
      queued.push(
        await post(request, `${w}/jobs/run/p/u/e2e_admin/lst_args?scheduled_in_secs=3600`, { who: `q${i}` }),
      );
    }
    for (const name of ["lst_alpha", "lst_beta"]) {
      await post(request, `${w}/variables/create`, {
        path: `u/e2e_admin/${name}_var`,
        value: name,
        is_secret: false,
        description: "",
      });
      await post(request, `${w}/resources/type/create`, {
        name: `c_${name}`,
        schema: { type: "object", properties: { url: { type: "string" } } },
      });
      await post(request, `${w}/resources/create`, {
        path: `u/e2e_admin/${name}_res`,
        resource_type: `c_${name}`,
        value: { url: "x" },
      });
      await post(request, `${w}/folders/create`, { name: `${name}_folder`, summary: "" });
      await post(request, `${w}/groups/create`, { name: `${name}_group` });
      const account = await createAccount(request, name);
      await addMember(request, workspace, account.email, "developer");
      accounts.push(account);
    }
  });

  test.afterAll(async ({ request }) => {
    for (const id of queued)
      await request.post(`${w}/jobs_u/queue/cancel/${id}`, {
        headers: superadmin,
        data: { reason: "test over" },
      });
  });

  test("a search narrows each list page", async ({ page }) => {
    await signIn(page);
    const base = `/w/${workspace}`;

    await page.goto(`${base}/schedules`);
    await narrows(page, "Search schedules", page.locator("main tbody tr"), "nightly", 1);

    await page.goto(`${base}/variables`);
    await narrows(page, "Search variables", page.getByTestId("variable-row"), "lst_alpha", 1);

    await page.goto(`${base}/resources`);
    await narrows(page, "Search resources", page.locator("main tbody tr"), "lst_beta", 1);

    await page.goto(`${base}/resources/types`);
    await narrows(page, "Search resource types", page.locator("main tbody tr"), "c_lst_alpha", 1);

    await page.goto(`${base}/members`);
    await narrows(page, "Search members", page.locator("main tbody tr"), accounts[0]!.email, 1);

    await page.goto(`${base}/folders`);
    await narrows(page, "Search folders", page.locator("[data-folder]"), "lst_beta", 1);
    await narrows(page, "Search groups", page.locator("[data-group]"), "lst_alpha_group", 1);

    await page.goto("/workspaces");
    await narrows(page, "Search workspaces", page.locator("main tbody tr"), workspace, 1);

    await page.goto("/admin/users");
    await narrows(page, "Search users", page.locator("main tbody tr"), accounts[1]!.email, 1);

    await page.goto(`${base}/workers`);
    const workers = page.getByTestId("worker-row");
    await expect(workers.first()).toBeVisible();
    await page.getByRole("searchbox", { name: "Search workers" }).fill("no-such-worker-anywhere");
    await expect(workers).toHaveCount(0);
    await expect(page.getByText("No worker or group matches")).toBeVisible();

    // API tokens: two new ones, one found by its label.
    await page.goto("/account/tokens");
    const label = `lst-${Date.now().toString(36)}`;
    for (const suffix of ["one", "two"]) {
      await page.getByLabel("Label", { exact: true }).fill(`${label}-${suffix}`);
      await page.getByRole("button", { name: "Create token" }).click();
      await expect(page.locator("main tbody tr", { hasText: `${label}-${suffix}` })).toHaveCount(1);
    }
    await page.getByRole("searchbox", { name: "Search tokens" }).fill(label);
    await expect(page.locator("main tbody tr")).toHaveCount(2);
    await page.getByRole("searchbox", { name: "Search tokens" }).fill(`${label}-two`);
    await expect(page.locator("main tbody tr")).toHaveCount(1);

    // The audit log is paged: its filters go to the server.
    await page.goto(`${base}/audit`);
    const audit = page.getByTestId("audit-table").locator("tbody tr");
    await expect(audit.first()).toBeVisible();
    const all = await audit.count();
    await page.getByLabel("Resource").fill("u/e2e_admin/lst_alpha_var");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect(audit).not.toHaveCount(all);
    for (const row of await audit.all()) await expect(row).toContainText("lst_alpha_var");
    await page.getByRole("button", { name: "Clear" }).click();
    await expect(audit).toHaveCount(all);
  });

  test("the Runs list shows duration, trigger and arguments, a chart, and filters by trigger", async ({
    page,
  }) => {
    await signIn(page);
    await page.goto(`/w/${workspace}/runs`);
    const table = page.getByTestId("runs-table");
    for (const column of ["Duration", "Trigger", "Arguments"])
      await expect(table.getByRole("columnheader", { name: column })).toBeVisible();
    const rows = table.locator("tbody tr");
    await expect(rows.first()).toBeVisible();

    const argsRun = rows.filter({ hasText: "world-of-lists" });
    await expect(argsRun).toHaveCount(1);
    await expect(argsRun.getByTestId("run-args")).toContainText('{"who":"world-of-lists"}');
    // Started over the REST API with a token (the superadmin secret).
    await expect(argsRun.getByTestId("run-trigger")).toHaveText("API");
    await expect(argsRun.getByTestId("run-duration")).toHaveText(/^\d+(\.\d+)? (ms|s)$/);
    const scheduled = rows.filter({ has: page.getByRole("link", { name: "u/e2e_admin/lst_every" }) });
    await expect(scheduled.first().getByTestId("run-trigger")).toContainText("schedule");
    // Queued runs have no duration yet.
    await expect(rows.filter({ hasText: "queued" }).first().getByTestId("run-duration")).toHaveText("—");

    // One bar per listed run.
    const count = await rows.count();
    await expect(page.getByTestId("runs-chart").locator(".recharts-bar-rectangle")).toHaveCount(count);

    await page.getByRole("combobox", { name: "Trigger" }).selectOption("schedule");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page).toHaveURL(/trigger=schedule/);
    await expect(rows).toHaveCount(await scheduled.count());
    for (const trigger of await table.getByTestId("run-trigger").all())
      await expect(trigger).toContainText("schedule");
    await expect(page.getByTestId("runs-chart").locator(".recharts-bar-rectangle")).toHaveCount(
      await rows.count(),
    );

    await page.getByRole("combobox", { name: "Trigger" }).selectOption("api");
    await page.getByRole("combobox", { name: "Status" }).selectOption("failure");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText("u/e2e_admin/lst_fail");

    // A bar opens its run.
    await page.getByTestId("runs-chart").locator(".recharts-bar-rectangle path").first().click();
    await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));
  });

  test("bulk cancel asks first, and cancels the ticked runs", async ({ page, request }) => {
    await signIn(page);
    await page.goto(`/w/${workspace}/runs?status=queued&trigger=api`);
    const rows = page.getByTestId("runs-table").locator("tbody tr");
    await expect(rows).toHaveCount(2);
    for (const id of queued) await page.locator(`tr[data-job-id="${id}"]`).getByRole("checkbox").check();
    const bulk = page.getByRole("button", { name: "Cancel 2 runs" });
    await bulk.click();
    const dialog = page.getByRole("alertdialog");
    await expect(dialog).toContainText("Cancel 2 runs?");
    await dialog.getByRole("button", { name: "Cancel", exact: true }).click();
    await expect(dialog).toBeHidden();
    await expect(rows).toHaveCount(2);
    for (const id of queued) {
      const job = await (
        await request.get(`/api/w/${workspace}/jobs_u/get/${id}`, { headers: superadmin })
      ).json();
      expect(job.type).toBe("QueuedJob");
    }

    await bulk.click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Cancel 2 runs" }).click();
    await expect(page.getByText("Canceled 2 runs.")).toBeVisible();
    await expect(page.getByTestId("runs-empty")).toBeVisible();
    for (const id of queued) {
      const job = await (
        await request.get(`/api/w/${workspace}/jobs_u/get/${id}`, { headers: superadmin })
      ).json();
      expect(job).toMatchObject({ type: "CompletedJob", canceled: true });
    }
  });
});
