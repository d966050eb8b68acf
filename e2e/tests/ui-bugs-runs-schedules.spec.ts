import { expect, test, type Page } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

// Regression tests for issue 21 (bugs 1, 2, 6 and 8): the run page, the Schedules page and the
// workspace switcher.

const workspace = uniqueWorkspace("ui21");
const QUICK = { path: "u/admin/quick", language: "bash", summary: "", content: "echo quick-done\n" };
const SHORT = {
  path: "u/admin/short",
  language: "bash",
  summary: "",
  content: "echo short-start\nsleep 2\necho short-done\n",
};
const SCHEDULE = "u/admin/nightly";
const setEnabled = (url: URL) => url.pathname.includes("schedule.setEnabled");

async function signIn(page: Page): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
}

test.describe("issue 21: runs, schedules and the workspace switcher", () => {
  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    for (const script of [QUICK, SHORT]) {
      const created = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data: script,
      });
      expect(created.status(), await created.text()).toBe(201);
    }
    const schedule = await request.post(`/api/w/${workspace}/schedules/create`, {
      headers: superadmin,
      // Once a year: the test only toggles it, it never needs to run.
      data: { path: SCHEDULE, schedule: "0 0 3 1 1 *", timezone: "UTC", script_path: QUICK.path, args: {} },
    });
    expect(schedule.status(), await schedule.text()).toBe(201);
  });

  test("bug 1: a run that does not exist (or a malformed id) says so and stops polling", async ({ page }) => {
    await signIn(page);
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
      let reads = 0;
      const onRequest = (request: { url(): string }) => {
        if (request.url().includes("job.get")) reads += 1;
      };
      page.on("request", onRequest);
      await page.goto(`/w/${workspace}/runs/${id}`);
      await expect(page.getByTestId("job-not-found")).toHaveText(`Run ${id} was not found.`);
      await expect(page.getByText("Loading…")).toHaveCount(0);
      // Polling has stopped: no more reads of the job once the message is shown.
      const settled = reads;
      await page.waitForTimeout(2_000);
      expect(reads, `job.get reads for ${id}`).toBe(settled);
      page.off("request", onRequest);
    }
  });

  test("bug 2: the run page reaches the final state even when the live stream ends too early", async ({
    page,
  }) => {
    await signIn(page);
    const started = await page.request.post(`/api/w/${workspace}/jobs/run/p/${SHORT.path}`, {
      headers: superadmin,
      data: {},
    });
    expect(started.status()).toBe(201);
    const id = await started.text();
    // The stream says "completed" while the job is still running (the job takes about 2 s), then
    // closes: the page must not believe the job it read at that moment is final.
    let streams = 0;
    await page.route("**/jobs_u/getupdate_sse/**", async (route) => {
      streams += 1;
      const update = { running: true, completed: true, new_logs: "short-start\n", log_offset: 12 };
      await route.fulfill({
        status: 200,
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
        body: `id: 12\ndata: ${JSON.stringify(update)}\n\n`,
      });
    });
    await page.goto(`/w/${workspace}/runs/${id}`);
    await expect.poll(() => streams).toBeGreaterThan(0);
    await expect(page.getByTestId("job-status")).toHaveText("success", { timeout: 20_000 });
    await expect(page.getByTestId("job-result")).toHaveText('"short-done"');
  });

  test("bug 6: the schedule Enabled box stays as clicked until the server answers, reverts on refusal", async ({
    page,
  }) => {
    await signIn(page);
    await page.goto(`/w/${workspace}/schedules`);
    const box = page.getByLabel(`enabled ${SCHEDULE}`);
    await expect(box).toBeChecked();

    // Hold the server's answer until the box has been seen unticked.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await page.route(setEnabled, async (route) => {
      await gate;
      await route.continue();
    });
    const saved = page.waitForResponse((response) => response.url().includes("schedule.setEnabled"));
    await box.click();
    await expect(box).not.toBeChecked({ timeout: 2_000 });
    release();
    await saved;
    await expect(box).not.toBeChecked();
    await page.reload();
    await expect(page.getByLabel(`enabled ${SCHEDULE}`)).not.toBeChecked();
    await page.unroute(setEnabled);

    // The server refuses (here: the request fails): the box goes back and an error is shown.
    await page.route(setEnabled, (route) => route.abort());
    const again = page.getByLabel(`enabled ${SCHEDULE}`);
    await again.click();
    await expect(page.getByTestId("schedule-toggle-error")).toBeVisible();
    await expect(again).not.toBeChecked();
  });

  test("bug 8: an unknown workspace is named as such and the switcher does not pretend to be elsewhere", async ({
    page,
  }) => {
    await signIn(page);
    const missing = uniqueWorkspace("nosuchws");
    await page.goto(`/w/${missing}/scripts`);
    await expect(page.getByTestId("workspace-not-found")).toHaveText(
      `Workspace ${missing} was not found. See all workspaces.`,
    );
    const switcher = page.getByLabel("Workspace");
    await expect(switcher).toHaveValue("");
    await expect(switcher.locator("option:checked")).toHaveText("Choose a workspace");
    // The known workspaces are still offered.
    await expect(switcher.locator(`option[value="${workspace}"]`)).toHaveCount(1);
    await page.getByTestId("workspace-not-found").getByRole("link", { name: "all workspaces" }).click();
    await expect(page).toHaveURL(/\/workspaces$/);
  });
});
