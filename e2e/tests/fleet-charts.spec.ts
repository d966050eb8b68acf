import { expect, test, type Locator } from "@playwright/test";
import { completedJob, createWorkspace, signIn, superadmin, uniqueWorkspace } from "./helpers.ts";

/** The peak a chart's text alternative states for a series ("15 s: latest 40%, peak 57%"). */
async function peakOf(chart: Locator, series: string): Promise<number> {
  const summary = (await chart.getByTestId(/-summary$/).textContent()) ?? "";
  const match = new RegExp(`${series}: latest [^,]+, peak ([\\d.]+)`).exec(summary);
  return match ? Number(match[1]) : NaN;
}

test.describe("the Workers page's charts", () => {
  const workspace = uniqueWorkspace("fleet");

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    for (const [path, content] of [
      ["u/admin/nap", "sleep 2\necho rested\n"],
      ["u/admin/fail", "echo failing >&2\nexit 1\n"],
    ]) {
      const created = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data: { path, language: "bash", content, summary: "", description: "" },
      });
      expect(created.status(), await created.text()).toBe(201);
    }
  });

  test("occupancy, queue, wait and jobs per minute render from the fleet's samples", async ({
    page,
    request,
  }) => {
    // Eight 2 s jobs on the instance's two workers keep a queue for several seconds (sampled every
    // second in e2e), then two failures.
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const run = await request.post(`/api/w/${workspace}/jobs/run/p/u/admin/nap`, {
        headers: superadmin,
        data: {},
      });
      expect(run.status()).toBe(201);
      ids.push(await run.text());
    }
    for (let i = 0; i < 2; i++) {
      const run = await request.post(`/api/w/${workspace}/jobs/run/p/u/admin/fail`, {
        headers: superadmin,
        data: {},
      });
      ids.push(await run.text());
    }
    for (const id of ids) await completedJob(request, workspace, id);

    await signIn(page);
    await page.goto(`/w/${workspace}/workers`);
    await expect(page.getByRole("heading", { name: "Fleet" })).toBeVisible();
    await page.getByLabel("Time window").selectOption({ label: "Last 5 minutes" });

    const occupancy = page.getByRole("figure", { name: "Occupancy of group default" });
    const queue = page.getByRole("figure", { name: "Queue depth per tag" });
    const wait = page.getByRole("figure", { name: "Oldest wait per tag" });
    const throughput = page.getByRole("figure", { name: "Jobs per minute" });
    for (const chart of [occupancy, queue, wait, throughput]) {
      await expect(chart).toBeVisible();
      await expect(chart.locator("svg.recharts-surface").first()).toBeVisible();
    }
    // The charts refresh every 15 s; the samples are already there, so the first answer has them.
    expect(await peakOf(occupancy, "15 s")).toBeGreaterThan(0);
    expect(await peakOf(queue, "bash")).toBeGreaterThanOrEqual(1);
    await expect(queue.locator(".recharts-line-curve").first()).toBeVisible();
    expect(await peakOf(throughput, "Completed")).toBeGreaterThanOrEqual(1);
    expect(await peakOf(throughput, "Failed")).toBeGreaterThanOrEqual(1);
    await expect(throughput.locator(".recharts-bar-rectangle").first()).toBeVisible();

    // The same points as a table, for those who do not see the chart.
    await throughput.getByRole("button", { name: "Show table" }).click();
    const table = throughput.getByRole("table", { name: "Jobs per minute" });
    await expect(table.getByRole("columnheader", { name: "Failed" })).toBeVisible();
    await expect(table.locator("tbody tr")).toHaveCount(5);

    // The worker list says each worker's version and sandbox.
    const row = page.getByTestId("worker-group-default").getByTestId("worker-row").first();
    await expect(row).toBeVisible();
    await expect(page.getByRole("columnheader", { name: "Version" }).first()).toBeVisible();
  });
});
