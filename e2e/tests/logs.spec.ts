import { expect, test, type Page } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

const SLOW_LINES = {
  path: "u/admin/slow_lines",
  language: "bash",
  summary: "",
  content: "for i in 1 2 3 4 5 6; do echo line-$i; sleep 0.5; done\necho all-done\n",
};
const SLEEPER = {
  path: "u/admin/sleeper",
  language: "bash",
  summary: "",
  content: "echo started\nsleep 60\n",
};

const workspace = uniqueWorkspace("logs");

async function run(page: Page, path: string): Promise<string> {
  const response = await page.request.post(`/api/w/${workspace}/jobs/run/p/${path}`, {
    headers: superadmin,
    data: {},
  });
  expect(response.status()).toBe(201);
  return response.text();
}

async function signIn(page: Page): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
}

/** The SSE events of a finished response body. */
function events(body: string): { id?: string; data: Record<string, unknown> }[] {
  return body
    .split("\n\n")
    .filter((block) => block.includes("data: "))
    .map((block) => {
      const lines = block.split("\n");
      const id = lines.find((line) => line.startsWith("id: "))?.slice(4);
      const data = JSON.parse(lines.find((line) => line.startsWith("data: "))!.slice(6));
      return { id, data };
    });
}

test.describe("live job logs", () => {
  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    for (const script of [SLOW_LINES, SLEEPER]) {
      const created = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data: script,
      });
      expect(created.status(), await created.text()).toBe(201);
    }
  });

  test("the run page shows lines as they are printed, then the result", async ({ page }) => {
    await signIn(page);
    const id = await run(page, SLOW_LINES.path);
    const stream = page.waitForRequest((request) => request.url().includes(`/jobs_u/getupdate_sse/${id}`));
    await page.goto(`/w/${workspace}/runs/${id}`);
    await stream;
    const logs = page.getByTestId("job-logs");
    await expect(page.getByTestId("job-status")).toHaveText("running");
    await expect(logs).toContainText("line-2");
    const early = await logs.textContent();
    expect(early).not.toContain("line-6");
    expect(early).not.toContain("all-done");
    await expect(page.getByTestId("job-result")).toHaveText("…");
    await expect(page.getByTestId("job-polling")).toHaveCount(0);

    await expect(page.getByTestId("job-status")).toHaveText("success");
    await expect(page.getByTestId("job-result")).toHaveText('"all-done"');
    await expect(logs).toContainText("line-6");
    expect((await logs.textContent())?.match(/line-1\n/g)).toHaveLength(1);
  });

  test("without a working stream the page falls back to polling", async ({ page }) => {
    await signIn(page);
    await page.route("**/jobs_u/getupdate_sse/**", (route) => route.fulfill({ status: 503, body: "down" }));
    const id = await run(page, SLOW_LINES.path);
    await page.goto(`/w/${workspace}/runs/${id}`);
    await expect(page.getByTestId("job-polling")).toBeVisible();
    await expect(page.getByTestId("job-logs")).toContainText("line-1");
    await expect(page.getByTestId("job-status")).toHaveText("success");
    await expect(page.getByTestId("job-result")).toHaveText('"all-done"');
  });

  test("Cancel stops a running job and says who canceled it and why", async ({ page }) => {
    await signIn(page);
    const id = await run(page, SLEEPER.path);
    await page.goto(`/w/${workspace}/runs/${id}`);
    await expect(page.getByTestId("job-logs")).toContainText("started");
    await page.getByLabel("Reason").fill("taking too long");
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect(page.getByTestId("job-status")).toHaveText("canceled");
    await expect(page.getByTestId("job-canceled")).toContainText("Canceled by");
    await expect(page.getByTestId("job-canceled")).toContainText("taking too long");
    await expect(page.getByRole("button", { name: "Cancel" })).toHaveCount(0);
  });

  test("the update endpoints answer in Windmill's shape and resume from an offset", async ({ request }) => {
    const response = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/${SLOW_LINES.path}`, {
      headers: superadmin,
      data: {},
    });
    expect(await response.json()).toBe("all-done");
    const [job] = await (
      await request.get(`/api/w/${workspace}/jobs/list?per_page=1&success=true`, { headers: superadmin })
    ).json();
    const base = `/api/w/${workspace}/jobs_u`;

    const sse = await request.get(`${base}/getupdate_sse/${job.id}?log_offset=0`, { headers: superadmin });
    expect(sse.status()).toBe(200);
    expect(sse.headers()["content-type"]).toContain("text/event-stream");
    const all = events(await sse.text());
    const last = all.at(-1)!;
    expect(last.data).toMatchObject({ completed: true, running: false, job: { id: job.id, success: true } });
    expect(last.id).toBe(String(last.data.log_offset));
    const text = all.map((event) => event.data.new_logs).join("");
    expect(text).toContain("line-1\n");

    const offset = text.indexOf("line-4");
    const resumed = events(
      await (
        await request.get(`${base}/getupdate_sse/${job.id}?log_offset=${offset}`, { headers: superadmin })
      ).text(),
    );
    expect(resumed.map((event) => event.data.new_logs).join("")).toBe(text.slice(offset));
    const viaHeader = events(
      await (
        await request.get(`${base}/getupdate_sse/${job.id}?log_offset=0`, {
          headers: { ...superadmin, "Last-Event-ID": String(offset) },
        })
      ).text(),
    );
    expect(viaHeader.map((event) => event.data.new_logs).join("")).toBe(text.slice(offset));

    const update = await request.get(`${base}/getupdate/${job.id}?log_offset=${offset}`, {
      headers: superadmin,
    });
    expect(await update.json()).toEqual({
      running: false,
      completed: true,
      new_logs: text.slice(offset),
      log_offset: last.data.log_offset,
    });
    const bad = await request.get(`${base}/getupdate_sse/${job.id}?log_offset=-3`, { headers: superadmin });
    expect(bad.status()).toBe(400);
    expect(await bad.text()).toMatch(/^log_offset:/);
    const other = uniqueWorkspace("logs-other");
    await createWorkspace(request, other);
    for (const path of [`getupdate_sse/${job.id}`, `getupdate/${job.id}`, `get/${job.id}`]) {
      const response = await request.get(`/api/w/${other}/jobs_u/${path}`, { headers: superadmin });
      expect(response.status(), path).toBe(404);
    }
  });
});
