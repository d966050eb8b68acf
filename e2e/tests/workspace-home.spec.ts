// Issue 21, item 6: the workspace home shows recent runs and failures, the next scheduled runs,
// the queue and its workers, and quick actions.
import { expect, test } from "@playwright/test";
import { addMember, createAccount } from "../fixtures/people.ts";
import { E2E_ADMIN } from "../instance.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

test("the workspace home shows recent runs, failures, next schedules, the queue and quick actions", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("home");
  await createWorkspace(request, workspace);
  const deploy = async (name: string, content: string) => {
    const response = await request.post(`/api/w/${workspace}/scripts/create`, {
      headers: superadmin,
      data: { path: `u/e2e_admin/${name}`, language: "bash", content },
    });
    expect(response.status(), await response.text()).toBe(201);
  };
  await deploy("home_ok", 'echo "fine"\n');
  await deploy("home_fails", "exit 3\n");
  for (const name of ["home_ok", "home_fails"])
    await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/e2e_admin/${name}`, {
      headers: superadmin,
      data: {},
    });
  const schedule = await request.post(`/api/w/${workspace}/schedules/create`, {
    headers: superadmin,
    data: {
      path: "u/e2e_admin/home_nightly",
      schedule: "0 0 3 * * *",
      script_path: "u/e2e_admin/home_ok",
      args: {},
    },
  });
  expect(schedule.status(), await schedule.text()).toBeLessThan(300);

  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
  await page.goto(`/w/${workspace}`);
  await expect(page.getByRole("heading", { name: "Home", exact: true })).toBeVisible();

  const recent = page.getByRole("region", { name: "Recent runs" });
  await expect(recent.getByRole("link", { name: "u/e2e_admin/home_ok" })).toBeVisible();
  await expect(recent.getByText("success").first()).toBeVisible();
  const failures = page.getByRole("region", { name: "Recent failures" });
  await expect(failures.getByRole("link", { name: "u/e2e_admin/home_fails" })).toBeVisible();
  await expect(failures.getByRole("link", { name: "u/e2e_admin/home_ok" })).toHaveCount(0);
  const next = page.getByRole("region", { name: "Next scheduled runs" });
  await expect(next.getByRole("link", { name: "u/e2e_admin/home_nightly" })).toBeVisible();
  await expect(next.getByText(/^in \d+/)).toBeVisible();
  await expect(page.getByRole("region", { name: "Queue and workers" })).toBeVisible();

  await failures.getByRole("link", { name: "u/e2e_admin/home_fails" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/`));
  await page.goto(`/w/${workspace}`);
  await page
    .getByRole("navigation", { name: "Quick actions" })
    .getByRole("link", { name: "New schedule" })
    .click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/schedules/new$`));
});

test("an operator's home offers only what an operator can do", async ({ page, request }) => {
  const workspace = uniqueWorkspace("home-op");
  await createWorkspace(request, workspace);
  const operator = await createAccount(request, "home-op");
  await addMember(request, workspace, operator.email, "operator");
  await page.goto("/login");
  await page.getByLabel("Email").fill(operator.email);
  await page.getByLabel("Password").fill(operator.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
  await page.goto(`/w/${workspace}`);
  const actions = page.getByRole("navigation", { name: "Quick actions" });
  await expect(actions.getByRole("link", { name: "All runs" })).toBeVisible();
  await expect(actions.getByRole("link", { name: "Scripts" })).toBeVisible();
  await expect(actions.getByRole("link", { name: "New script" })).toHaveCount(0);
  await expect(actions.getByRole("link", { name: "New schedule" })).toHaveCount(0);
});
