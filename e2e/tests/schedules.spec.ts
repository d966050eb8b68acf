import { expect, test, type APIRequestContext } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

async function deployBeat(request: APIRequestContext, workspace: string, path: string): Promise<void> {
  const created = await request.post(`/api/w/${workspace}/scripts/create`, {
    headers: superadmin,
    data: { path, language: "bash", summary: "", content: 'who="$1"\necho "beat $who"' },
  });
  expect(created.status(), await created.text()).toBe(201);
}

test.describe("schedules over REST", () => {
  const workspace = uniqueWorkspace("sched");
  const script = "u/admin/beat";

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    await deployBeat(request, workspace, script);
  });

  test("an invalid cron or time zone, or a 10 MB payload, is refused naming the field; nothing is stored", async ({
    request,
  }) => {
    const create = (data: Record<string, unknown>) =>
      request.post(`/api/w/${workspace}/schedules/create`, {
        headers: superadmin,
        data: {
          path: "u/admin/bad",
          schedule: "*/5 * * * * *",
          timezone: "UTC",
          script_path: script,
          is_flow: false,
          args: { who: "x" },
          ...data,
        },
      });
    for (const [data, status, message] of [
      [{ schedule: "*/5 * * * *" }, 400, /^schedule: must have 6 fields/],
      [{ schedule: "99 * * * * *" }, 400, /^schedule: not a valid cron expression/],
      [{ timezone: "Mars/Olympus_Mons" }, 400, /^timezone: "Mars\/Olympus_Mons" is not an IANA time zone/],
      [{ script_path: "u/admin/missing" }, 400, /^script_path: no script/],
      [{ args: { who: "x".repeat(10 * 1024 * 1024) } }, 413, /^body: payload too large/],
    ] as const) {
      const response = await create(data);
      expect(response.status(), JSON.stringify(data).slice(0, 80)).toBe(status);
      expect(await response.text()).toMatch(message);
    }
    const exists = await request.get(`/api/w/${workspace}/schedules/exists/u/admin/bad`, {
      headers: superadmin,
    });
    expect(await exists.json()).toBe(false);
    const list = await request.get(`/api/w/${workspace}/schedules/list`, { headers: superadmin });
    expect(await list.json()).toEqual([]);

    const preview = await request.post("/api/schedules/preview", {
      headers: superadmin,
      data: { schedule: "0 0 12 * * *", timezone: "Asia/Tokyo" },
    });
    expect(preview.status()).toBe(200);
    const ticks = (await preview.json()) as string[];
    expect(ticks).toHaveLength(5);
    for (const tick of ticks) expect(tick).toMatch(/T03:00:00\.000Z$/);
    const badPreview = await request.post("/api/schedules/preview", {
      headers: superadmin,
      data: { schedule: "0 0 12 * * *", timezone: "Nowhere" },
    });
    expect(badPreview.status()).toBe(400);
    expect(await badPreview.text()).toMatch(/^timezone: /);
  });

  test("create, get, run on its ticks, list with jobs, disable, delete (Windmill's shapes)", async ({
    request,
  }) => {
    const path = "u/admin/every_two";
    const created = await request.post(`/api/w/${workspace}/schedules/create`, {
      headers: superadmin,
      data: {
        path,
        schedule: "*/2 * * * * *",
        timezone: "Europe/Paris",
        script_path: script,
        is_flow: false,
        args: { who: "rest" },
        summary: "every two seconds",
      },
    });
    expect(created.status(), await created.text()).toBe(201);
    const got = await (
      await request.get(`/api/w/${workspace}/schedules/get/${path}`, { headers: superadmin })
    ).json();
    expect(got).toMatchObject({
      path,
      schedule: "*/2 * * * * *",
      timezone: "Europe/Paris",
      enabled: true,
      script_path: script,
      is_flow: false,
      args: { who: "rest" },
      summary: "every two seconds",
      permissioned_as: "u/superadmin_secret",
    });

    await expect
      .poll(
        async () => {
          const list = await request.get(`/api/w/${workspace}/schedules/list_with_jobs`, {
            headers: superadmin,
          });
          const [schedule] = (await list.json()) as { jobs: { success: boolean }[] }[];
          return schedule?.jobs.filter((job) => job.success).length ?? 0;
        },
        { timeout: 20_000 },
      )
      .toBeGreaterThanOrEqual(2);
    const jobs = await request.get(`/api/w/${workspace}/jobs/completed/list?script_path_exact=${script}`, {
      headers: superadmin,
    });
    const results = ((await jobs.json()) as { result: unknown }[]).map((job) => job.result);
    expect(results).toContain("beat rest");

    const disabled = await request.post(`/api/w/${workspace}/schedules/setenabled/${path}`, {
      headers: superadmin,
      data: { enabled: false },
    });
    expect(disabled.status()).toBe(200);
    const paused = await (
      await request.get(`/api/w/${workspace}/schedules/get/${path}`, { headers: superadmin })
    ).json();
    expect(paused.enabled).toBe(false);
    expect(paused.next_run_at).toBeNull();

    const updated = await request.post(`/api/w/${workspace}/schedules/update/${path}`, {
      headers: superadmin,
      data: { schedule: "0 0 * * * *", timezone: "Nowhere/Else", args: {} },
    });
    expect(updated.status()).toBe(400);
    expect(await updated.text()).toMatch(/^timezone: /);

    const deleted = await request.delete(`/api/w/${workspace}/schedules/delete/${path}`, {
      headers: superadmin,
    });
    expect(deleted.status()).toBe(200);
    const gone = await request.get(`/api/w/${workspace}/schedules/get/${path}`, { headers: superadmin });
    expect(gone.status()).toBe(404);
  });
});

test("the schedule form: an invalid cron is shown at the field, next runs preview, create, runs listed", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("sched-ui");
  await createWorkspace(request, workspace);
  await deployBeat(request, workspace, "u/e2e_admin/beat");

  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
  await page.goto(`/w/${workspace}/schedules`);
  await expect(page.getByText("No schedules yet")).toBeVisible();

  await page.getByRole("button", { name: "New schedule" }).click();
  await page.getByLabel("Path").fill("u/e2e_admin/every_two");
  await page.getByLabel("Script").selectOption("u/e2e_admin/beat");
  await page.getByTestId("args-form").locator('input[name="who"]').fill("browser");
  const cron = page.getByLabel("Cron");
  await cron.fill("*/2 * * *");
  const cronLabel = page.locator("label", { has: cron });
  await expect(cronLabel.getByRole("alert")).toContainText("schedule: must have 6 fields");
  await expect(cron).toHaveAttribute("aria-invalid", "true");
  // Submitting anyway: the server refuses it and the error stays next to the field.
  await page.getByRole("button", { name: "Create schedule" }).click();
  await expect(cronLabel.getByRole("alert").first()).toContainText("schedule:");

  await cron.fill("*/2 * * * * *");
  const timezone = page.getByLabel("Time zone");
  await timezone.fill("Mars/Olympus_Mons");
  await expect(page.locator("label", { has: timezone }).getByRole("alert")).toContainText(
    "not an IANA time zone",
  );
  await timezone.fill("Europe/Paris");
  await expect(page.getByTestId("next-runs").locator("li")).toHaveCount(5);
  await expect(page.getByTestId("next-runs").locator("li").first()).toContainText(/:\d[02468]Z\)/);

  await page.getByRole("button", { name: "Create schedule" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/schedules$`));
  await expect(page.getByRole("link", { name: "u/e2e_admin/every_two" })).toBeVisible();
  // The list refreshes itself: runs appear with their status.
  await expect(page.locator("td .status-success").first()).toBeVisible({ timeout: 20_000 });

  await page.getByRole("link", { name: "u/e2e_admin/every_two" }).click();
  const runs = page.getByTestId("schedule-runs");
  await expect(runs.locator(".status-success").first()).toBeVisible();
  // The box follows the server: it unticks once the change is saved.
  await page.getByLabel("Enabled").first().click();
  await expect(page.getByLabel("Enabled").first()).not.toBeChecked();
  await expect(page.getByTestId("next-run")).toContainText("Paused");
  await runs.locator("a").first().click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));
  await expect(page.getByTestId("job-logs")).toContainText("beat browser");
});
