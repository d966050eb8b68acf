import { expect, test } from "@playwright/test";
import { createWorkspace, signIn, superadmin, uniqueWorkspace } from "./helpers.ts";

const figure = async (text: string | null) => Number((text ?? "").replace(/[^\d.]/g, ""));

test.describe("the sizing simulator", () => {
  const workspace = uniqueWorkspace("sizing");

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
  });

  test("a batch of 100 jobs × 1 s on 10 workers drains in about 10 s at 100 % occupancy", async ({
    page,
  }) => {
    await signIn(page);
    await page.goto(`/w/${workspace}/workers`);
    await page.getByRole("link", { name: "Sizing simulator" }).click();
    await expect(page.getByRole("heading", { name: "Sizing simulator" })).toBeVisible();

    await page.getByLabel("Mode").selectOption("batch");
    await page.getByLabel("Jobs", { exact: true }).fill("100");
    await page.getByLabel("Distribution").selectOption("fixed");
    await page.getByLabel("Duration (s)").fill("1");
    await page.getByLabel("Worker count").selectOption("fixed");
    await page.getByLabel("Workers", { exact: true }).fill("10");
    await page.getByRole("button", { name: "Simulate" }).click();

    const drain = await figure(await page.getByTestId("sim-drain").textContent());
    expect(drain).toBeGreaterThan(9.5);
    expect(drain).toBeLessThan(10.5);
    expect(await figure(await page.getByTestId("sim-occupancy").textContent())).toBeGreaterThanOrEqual(99.5);
    await expect(page.getByTestId("sim-jobs")).toHaveText("100");

    for (const name of ["Queue depth", "Wait time", "Occupancy"]) {
      const chart = page.getByRole("figure", { name, exact: true });
      // A flat line (occupancy at 100 % throughout) has no height: check that it is drawn.
      await expect(chart.locator(".recharts-line-curve").first()).toHaveAttribute("d", /^M[\d.]+,[\d.]+L/);
    }
    await expect(
      page.getByRole("figure", { name: "Occupancy", exact: true }).getByTestId(/-summary$/),
    ).toHaveText(/Occupancy: latest 100%, peak 100%/);

    // Changing a figure without simulating keeps the result; simulating again changes it.
    await page.getByLabel("Workers", { exact: true }).fill("20");
    await page.getByRole("button", { name: "Simulate" }).click();
    expect(await figure(await page.getByTestId("sim-drain").textContent())).toBeCloseTo(5, 1);
  });

  test("recommends min and max workers by seed 004's formulas and reads the instance's day", async ({
    page,
    request,
  }) => {
    const created = await request.post(`/api/w/${workspace}/scripts/create`, {
      headers: superadmin,
      data: { path: "u/admin/quick", language: "bash", content: "echo hi\n", summary: "", description: "" },
    });
    expect(created.status(), await created.text()).toBe(201);
    for (let i = 0; i < 2; i++) {
      const run = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/admin/quick`, {
        headers: superadmin,
        data: {},
      });
      expect(run.status()).toBe(200);
    }

    await signIn(page);
    await page.goto(`/w/${workspace}/workers/simulator`);
    // Scenario 3 of the seed: normal load 2 jobs/s, peaks of 8 jobs/s, 1 s per job.
    await page.getByLabel("Expected base load (jobs/s)").fill("2");
    await page.getByLabel("Peak load (jobs/s)").fill("8");
    await expect(page.getByTestId("recommend-min")).toContainText("2 jobs/s × 1 s = 2 → 2 workers");
    await expect(page.getByTestId("recommend-max")).toContainText("8 jobs/s × 1 s × 1.5 = 12 → 12 workers");

    await page.getByLabel("Tag").selectOption("bash");
    await expect(page.getByTestId("my-data")).toContainText(/Last 24 h: [\d,]+ jobs/);
    await page.getByRole("button", { name: "Use my data" }).click();
    await expect(page.getByLabel("Mode")).toHaveValue("random");
    expect(Number(await page.getByLabel("Arrival rate (jobs/s)").inputValue())).toBeGreaterThan(0);
    await expect(page.getByLabel("Arrivals for (s)")).toHaveValue("86400");
    expect(Number(await page.getByLabel("Expected base load (jobs/s)").inputValue())).toBeGreaterThan(0);
    await expect(page.getByTestId("sim-jobs")).not.toHaveText("");
  });
});
