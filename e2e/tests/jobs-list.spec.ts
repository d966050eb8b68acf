import { expect, test, type APIRequestContext } from "@playwright/test";
import * as wmill from "windmill-client";
import { E2E_ADMIN, E2E_SUPERADMIN_SECRET } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

interface ListedJob {
  id: string;
  type: "QueuedJob" | "CompletedJob";
  script_path?: string;
  created_by: string;
  created_at: string;
  success?: boolean;
  running?: boolean;
  tag: string;
  job_kind: string;
}

const workspace = uniqueWorkspace("list");
const other = uniqueWorkspace("list-other");
const SCRIPTS = [
  { path: "f/etl/load_a", content: "echo loaded-a\n" },
  { path: "f/etl/load_b", content: "echo loaded-b\n" },
  { path: "f/ops/fail", content: "echo failing\nexit 3\n" },
  { path: "u/admin/later", content: "echo later\n" },
];
const ids: Record<string, string> = {};

async function list(request: APIRequestContext, query: string, endpoint = "jobs/list"): Promise<ListedJob[]> {
  const response = await request.get(`/api/w/${workspace}/${endpoint}?${query}`, { headers: superadmin });
  expect(response.status(), await response.text()).toBe(200);
  return response.json();
}

const idsOf = (jobs: ListedJob[]) => jobs.map((job) => job.id);

test.describe("job lists (Windmill filters)", () => {
  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    await createWorkspace(request, other);
    for (const script of SCRIPTS) {
      const created = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data: { ...script, language: "bash", summary: "" },
      });
      expect(created.status(), await created.text()).toBe(201);
    }
    for (const name of ["load_a", "load_b", "fail"]) {
      const path = SCRIPTS.find((s) => s.path.endsWith(name))!.path;
      await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/${path}`, {
        headers: superadmin,
        data: {},
      });
      const [job] = await list(request, `script_path_exact=${path}`);
      ids[name] = job!.id;
    }
    // Scheduled an hour ahead, so it stays in the queue for the whole test.
    const queued = await request.post(`/api/w/${workspace}/jobs/run/p/u/admin/later?scheduled_in_secs=3600`, {
      headers: superadmin,
      data: {},
    });
    ids.later = await queued.text();
  });

  test.afterAll(async ({ request }) => {
    await request.post(`/api/w/${workspace}/jobs_u/queue/cancel/${ids.later}`, {
      headers: superadmin,
      data: { reason: "test over" },
    });
  });

  test("lists newest first with Windmill's job union", async ({ request }) => {
    const all = await list(request, "");
    expect(idsOf(all)).toEqual([ids.later, ids.fail, ids.load_b, ids.load_a]);
    expect(all[0]).toMatchObject({ type: "QueuedJob", running: false, script_path: "u/admin/later" });
    expect(all[1]).toMatchObject({ type: "CompletedJob", success: false, script_path: "f/ops/fail" });
    expect(all[3]).toMatchObject({ type: "CompletedJob", success: true, tag: "bash", job_kind: "script" });
    expect(idsOf(await list(request, "per_page=2"))).toEqual([ids.later, ids.fail]);
    expect(idsOf(await list(request, "per_page=2&page=2"))).toEqual([ids.load_b, ids.load_a]);
    expect(await list(request, "per_page=2&page=3")).toEqual([]);
  });

  test("filters by path, state, creator, tag, kind and time", async ({ request }) => {
    expect(idsOf(await list(request, "script_path_exact=f/etl/load_a"))).toEqual([ids.load_a]);
    expect(idsOf(await list(request, "script_path_exact=f/etl/load_a,f/ops/fail"))).toEqual([
      ids.fail,
      ids.load_a,
    ]);
    expect(idsOf(await list(request, "script_path_start=f/etl/"))).toEqual([ids.load_b, ids.load_a]);
    expect(idsOf(await list(request, "script_path_start=!f/"))).toEqual([ids.later]);
    expect(idsOf(await list(request, "success=true"))).toEqual([ids.load_b, ids.load_a]);
    expect(idsOf(await list(request, "success=false"))).toEqual([ids.fail]);
    expect(await list(request, "running=true")).toEqual([]);
    expect(idsOf(await list(request, "running=false&script_path_start=u/"))).toEqual([ids.later]);
    expect(idsOf(await list(request, "tag=bash"))).toHaveLength(4);
    expect(await list(request, "tag=gpu")).toEqual([]);
    expect(idsOf(await list(request, "job_kinds=script"))).toHaveLength(4);
    expect(await list(request, "job_kinds=preview,flow")).toEqual([]);
    const [first] = await list(request, `script_path_exact=f/etl/load_a`);
    const creator = encodeURIComponent(first!.created_by);
    expect(idsOf(await list(request, `created_by=${creator}`))).toHaveLength(4);
    expect(await list(request, `created_by=!${creator}`)).toEqual([]);
    const after = encodeURIComponent(first!.created_at);
    expect(idsOf(await list(request, `created_after=${after}`))).toEqual([ids.later, ids.fail, ids.load_b]);
    expect(idsOf(await list(request, `created_before=${after}`))).toEqual([ids.load_a]);
  });

  test("queue and completed lists split the jobs", async ({ request }) => {
    const queue = await list(request, "", "jobs/queue/list");
    expect(idsOf(queue)).toEqual([ids.later]);
    expect(queue[0]).toMatchObject({ type: "QueuedJob" });
    const completed = await list(request, "", "jobs/completed/list");
    expect(idsOf(completed)).toEqual([ids.fail, ids.load_b, ids.load_a]);
    expect(completed.every((job) => job.type === "CompletedJob")).toBe(true);
    expect(idsOf(await list(request, "success=true&per_page=1", "jobs/completed/list"))).toEqual([
      ids.load_b,
    ]);
  });

  test("bad filter values get a 400 naming the parameter", async ({ request }) => {
    const cases: [string, RegExp][] = [
      ["created_before=yesterday", /^created_before: not a valid date-time/],
      ["created_after=2025-02-30T10:00:00Z", /^created_after: not a valid date-time/],
      ["success=maybe", /^success: must be true or false/],
      ["running=1", /^running: must be true or false/],
      ["per_page=0", /^per_page: must be at least 1/],
      ["page=two", /^page: must be a whole number/],
      ["job_kinds=scripts", /^job_kinds: unknown job kind "scripts"/],
      ["tag=a,!b", /^tag: prefix either every value/],
    ];
    for (const endpoint of ["jobs/list", "jobs/queue/list", "jobs/completed/list"]) {
      for (const [query, message] of cases) {
        const response = await request.get(`/api/w/${workspace}/${endpoint}?${query}`, {
          headers: superadmin,
        });
        expect(response.status(), `${endpoint}?${query}`).toBe(400);
        expect(await response.text()).toMatch(message);
      }
    }
  });

  test("another workspace sees none of these jobs", async ({ request, playwright, baseURL }) => {
    const response = await request.get(`/api/w/${other}/jobs/list`, { headers: superadmin });
    expect(await response.json()).toEqual([]);
    const job = await request.get(`/api/w/${other}/jobs_u/get/${ids.load_a}`, { headers: superadmin });
    expect(job.status()).toBe(404);
    const anonymous = await playwright.request.newContext({ baseURL });
    expect((await anonymous.get(`/api/w/${workspace}/jobs/list`)).status()).toBe(401);
    await anonymous.dispose();
  });

  test("windmill-client reads the lists", async ({ baseURL }) => {
    wmill.setClient(E2E_SUPERADMIN_SECRET, baseURL);
    const jobs = await wmill.JobService.listJobs({ workspace, scriptPathStart: "f/etl/", perPage: 10 });
    expect(jobs.map((job) => job.id)).toEqual([ids.load_b, ids.load_a]);
    const queue = await wmill.JobService.listQueue({ workspace });
    expect(queue.map((job) => job.id)).toEqual([ids.later]);
    const failed = await wmill.JobService.listCompletedJobs({ workspace, success: false });
    expect(failed.map((job) => job.id)).toEqual([ids.fail]);
  });

  test("the Runs page filters through its URL and shows errors beside the field", async ({ page }) => {
    await page.goto("/login");
    await page.getByLabel("Email").fill(E2E_ADMIN.email);
    await page.getByLabel("Password").fill(E2E_ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();

    await page.goto(`/w/${workspace}/runs`);
    const rows = page.getByTestId("runs-table").locator("tbody tr");
    await expect(rows).toHaveCount(4);
    await page.getByRole("combobox", { name: "Path match" }).selectOption("start");
    await page.getByRole("textbox", { name: "Path", exact: true }).fill("f/etl/");
    await page.getByRole("combobox", { name: "Status" }).selectOption("success");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page).toHaveURL(/script_path_start=f%2Fetl%2F/);
    await expect(page).toHaveURL(/status=success/);
    await expect(rows).toHaveCount(2);

    await page.getByRole("combobox", { name: "Status" }).selectOption("running");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page.getByTestId("runs-empty")).toHaveText("No runs match these filters.");

    await page.goto(`/w/${workspace}/runs?created_before=not-a-date`);
    await expect(page.getByTestId("run-filters")).toContainText("created_before: not a valid date-time");
    await expect(page.getByLabel("Created before")).toHaveAttribute("aria-invalid", "true");

    await page.goto(`/w/${workspace}/runs?per_page=2`);
    await expect(rows).toHaveCount(2);
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page).toHaveURL(/page=2/);
    await expect(rows).toHaveCount(2);
    await expect(rows.first()).toContainText("f/etl/load_b");
  });
});
