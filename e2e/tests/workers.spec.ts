import { expect, test } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

interface WorkerPing {
  worker: string;
  worker_group: string;
  custom_tags: string[];
  last_ping: number;
  jobs_executed: number;
}

test.describe("workers, worker groups and tags", () => {
  const allowed = uniqueWorkspace("tags-in");
  const excluded = uniqueWorkspace("tags-out");
  const suffix = Date.now().toString(36);
  const gpu = `gpu-${suffix}`;
  const cpu = `cpu-${suffix}`;
  const group = `e2e-${suffix}`;

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, allowed);
    await createWorkspace(request, excluded);
  });

  test.afterAll(async ({ request }) => {
    // The setting is instance-wide: leave nothing behind for the other test files.
    await request.post("/api/settings/global/custom_tags", { headers: superadmin, data: { value: null } });
    for (const name of [group, `${group}-ui`, `${group}-as`])
      await request.delete(`/api/configs/delete/worker__${name}`, { headers: superadmin });
  });

  test("custom tags restricted to workspaces", async ({ request }) => {
    const set = await request.post("/api/settings/global/custom_tags", {
      headers: superadmin,
      data: { value: [`${gpu}(${allowed})`, `${cpu}(^${excluded})`] },
    });
    expect(set.status(), await set.text()).toBe(200);

    const forAllowed = await request.get(`/api/workers/custom_tags?workspace=${allowed}`, {
      headers: superadmin,
    });
    expect(forAllowed.status()).toBe(200);
    const allowedTags: string[] = await forAllowed.json();
    expect(allowedTags).toEqual(expect.arrayContaining(["bash", "python3", gpu, cpu]));

    const excludedTags: string[] = await (
      await request.get(`/api/workers/custom_tags?workspace=${excluded}`, { headers: superadmin })
    ).json();
    expect(excludedTags).toContain("bash");
    expect(excludedTags).not.toContain(gpu);
    expect(excludedTags).not.toContain(cpu);

    const all: string[] = await (
      await request.get("/api/workers/custom_tags", { headers: superadmin })
    ).json();
    expect(all).toEqual(expect.arrayContaining([gpu, cpu]));

    const invalid = await request.post("/api/settings/global/custom_tags", {
      headers: superadmin,
      data: { value: ["fine", `${gpu}(`] },
    });
    expect(invalid.status()).toBe(400);
    expect(await invalid.text()).toMatch(/^value\[1\]: .*missing "\)"/);
    const stored = await request.get("/api/settings/global/custom_tags", { headers: superadmin });
    expect(await stored.json()).toEqual([`${gpu}(${allowed})`, `${cpu}(^${excluded})`]);

    expect((await request.get("/api/workers/custom_tags")).status()).toBe(401);
  });

  test("the worker list shows the instance's live workers", async ({ request }) => {
    const response = await request.get("/api/workers/list", { headers: superadmin });
    expect(response.status()).toBe(200);
    const workers: WorkerPing[] = await response.json();
    // The standalone instance runs one worker process with NUM_WORKERS=2 slots.
    expect(workers.length).toBeGreaterThanOrEqual(2);
    for (const worker of workers) {
      expect(worker.worker_group).toBe("default");
      expect(worker.custom_tags).toContain("bash");
      expect(worker.last_ping).toBeLessThan(60);
    }
    const counts = await request.get("/api/workers/queue_counts", { headers: superadmin });
    expect(typeof (await counts.json())).toBe("object");
    expect((await request.get("/api/workers/list")).status()).toBe(401);
  });

  test("worker group configs over the Windmill config API", async ({ request }) => {
    const bad = await request.post(`/api/configs/update/worker__${group}`, {
      headers: superadmin,
      data: { worker_tags: [gpu, "bad tag"] },
    });
    expect(bad.status()).toBe(400);
    expect(await bad.text()).toMatch(/^worker_tags\[1\]: /);

    const good = await request.post(`/api/configs/update/worker__${group}`, {
      headers: superadmin,
      data: { worker_tags: [gpu], network: false },
    });
    expect(good.status(), await good.text()).toBe(200);
    const got = await request.get(`/api/configs/get/worker__${group}`, { headers: superadmin });
    expect(await got.json()).toEqual({ worker_tags: [gpu], network: false });
    const listed: { name: string; config: unknown }[] = await (
      await request.get("/api/configs/list_worker_groups", { headers: superadmin })
    ).json();
    expect(listed).toContainEqual({ name: group, config: { worker_tags: [gpu], network: false } });

    expect(
      (await request.delete(`/api/configs/delete/worker__${group}`, { headers: superadmin })).status(),
    ).toBe(200);
    expect(
      await (await request.get(`/api/configs/get/worker__${group}`, { headers: superadmin })).json(),
    ).toBeNull();
  });

  test("the Workers page renders live workers and edits a group's config", async ({ page, request }) => {
    const workers: WorkerPing[] = await (
      await request.get("/api/workers/list", { headers: superadmin })
    ).json();

    await page.goto("/login");
    await page.getByLabel("Email").fill(E2E_ADMIN.email);
    await page.getByLabel("Password").fill(E2E_ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
    await page.goto(`/w/${allowed}/scripts`);
    await page.getByRole("link", { name: "Workers" }).click();
    await expect(page).toHaveURL(new RegExp(`/w/${allowed}/workers$`));
    await expect(page.getByRole("heading", { name: "Workers", exact: true })).toBeVisible();

    const defaultGroup = page.getByTestId("worker-group-default");
    await expect(defaultGroup.getByTestId("worker-row")).toHaveCount(workers.length);
    for (const worker of workers) await expect(defaultGroup).toContainText(worker.worker);
    await expect(page.getByTestId("available-tags")).toContainText(gpu);

    await page.getByLabel("New worker group config").fill(`${group}-ui`);
    await page.getByRole("button", { name: "Add" }).click();
    const editor = page.getByRole("form", { name: `Config of worker group ${group}-ui` });
    await editor.getByLabel(/^Tags/).fill(`${gpu}, bad tag`);
    await editor.getByRole("button", { name: "Save config" }).click();
    await expect(editor.locator(".field-error")).toContainText('worker_tags[1]: "bad tag"');

    await editor.getByLabel(/^Tags/).fill(gpu);
    await editor.getByLabel(/Network access/).uncheck();
    await editor.getByRole("button", { name: "Save config" }).click();
    await expect(editor.getByText(/Saved/)).toBeVisible();
    const stored = await request.get(`/api/configs/get/worker__${group}-ui`, { headers: superadmin });
    expect(await stored.json()).toEqual({ worker_tags: [gpu], network: false });
  });

  test("the Workers page edits a group's autoscaling and shows the autoscaler's decisions", async ({
    page,
    request,
  }) => {
    const name = `${group}-as`;
    await page.goto("/login");
    await page.getByLabel("Email").fill(E2E_ADMIN.email);
    await page.getByLabel("Password").fill(E2E_ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
    await page.goto(`/w/${allowed}/workers`);

    await page.getByLabel("New worker group config").fill(name);
    await page.getByRole("button", { name: "Add" }).click();
    const editor = page.getByRole("form", { name: `Config of worker group ${name}` });
    await editor.getByLabel(/^Tags/).fill(gpu);
    await editor.getByLabel(/^Integration/).selectOption("local");
    await editor.getByLabel(/^Min workers/).fill("4");
    await editor.getByLabel(/^Max workers/).fill("3");
    await editor.getByRole("button", { name: "Save config" }).click();
    await expect(editor.locator(".field-error")).toContainText(
      "autoscaling.min_workers: must not exceed max_workers (4 > 3)",
    );
    await expect(editor.getByLabel(/^Min workers/)).toHaveAttribute("aria-invalid", "true");

    await editor.getByLabel(/^Min workers/).fill("1");
    await editor.getByLabel(/^Cooldown/).fill("30");
    await editor.getByRole("button", { name: "Save config" }).click();
    await expect(editor.getByText(/Saved/)).toBeVisible();
    const stored = await request.get(`/api/configs/get/worker__${name}`, { headers: superadmin });
    expect(await stored.json()).toEqual({
      worker_tags: [gpu],
      autoscaling: {
        enabled: true,
        min_workers: 1,
        max_workers: 3,
        cooldown_seconds: 30,
        integration: { type: "local" },
      },
    });

    // No worker of the group runs: the leader brings it up to min_workers and says why.
    const decision = page
      .getByRole("table", { name: "Autoscaling decisions" })
      .getByTestId("autoscaling-event")
      .filter({ hasText: name });
    await expect(decision).toContainText("0 → 1", { timeout: 30_000 });
    await expect(decision).toContainText("below min_workers (1)");
    const events = await request.get(`/api/configs/list_autoscaling_events/${name}`, { headers: superadmin });
    expect(await events.json()).toMatchObject([
      { worker_group: name, event_type: "bounds", desired_workers: 1 },
    ]);
  });
});
