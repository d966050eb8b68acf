// Issue 21, item 5: the command palette (Ctrl/⌘-K) finds scripts, schedules, variables, pages and
// recent runs of the current workspace, and nothing the user may not read.
import { expect, test, type Page } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { addMember, createAccount, deployScript } from "../fixtures/people.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

const workspace = uniqueWorkspace("palette");
const other = uniqueWorkspace("palette-other");

async function signIn(page: Page, email: string, password: string) {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
}

/** Opens the palette with the keyboard and waits for its data. */
async function openPalette(page: Page) {
  await page.keyboard.press("Control+k");
  const palette = page.getByTestId("command-palette");
  await expect(palette).toBeVisible();
  await expect(palette.locator("[cmdk-root]")).toHaveAttribute("data-loaded", "true");
  return palette;
}

test.describe("command palette", () => {
  let operator: { email: string; password: string; username: string };

  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    await createWorkspace(request, other);
    await deployScript(request, workspace, "u/e2e_admin/pal_alpha", superadmin, "echo alpha");
    await deployScript(request, workspace, "f/palhidden/pal_folder_only", superadmin, "echo hidden");
    await deployScript(request, other, "u/e2e_admin/pal_elsewhere", superadmin, "echo elsewhere");
    const ran = await request.post(`/api/w/${workspace}/jobs/run_wait_result/p/u/e2e_admin/pal_alpha`, {
      headers: superadmin,
      data: {},
    });
    expect(ran.status(), await ran.text()).toBe(200);
    const variable = await request.post(`/api/w/${workspace}/variables/create`, {
      headers: superadmin,
      data: { path: "u/e2e_admin/pal_token_var", value: "v", is_secret: false, description: "palette" },
    });
    expect(variable.status(), await variable.text()).toBe(201);
    const schedule = await request.post(`/api/w/${workspace}/schedules/create`, {
      headers: superadmin,
      data: {
        path: "u/e2e_admin/pal_nightly",
        schedule: "0 0 3 * * *",
        timezone: "UTC",
        script_path: "u/e2e_admin/pal_alpha",
        is_flow: false,
        args: {},
        enabled: false,
      },
    });
    expect(schedule.status(), await schedule.text()).toBeLessThan(300);
    const account = await createAccount(request, "palette-operator");
    await addMember(request, workspace, account.email, "operator");
    operator = account;
  });

  test("Ctrl+K finds scripts, schedules, variables, pages and recent runs; Enter navigates", async ({
    page,
  }) => {
    await signIn(page, E2E_ADMIN.email, E2E_ADMIN.password);
    await page.goto(`/w/${workspace}/runs`);
    await expect(page.getByRole("heading", { name: "Runs", exact: true })).toBeVisible();

    let palette = await openPalette(page);
    const input = palette.getByRole("combobox");
    await expect(input).toBeFocused();

    await input.fill("pal_alpha");
    await expect(palette.getByRole("option", { name: /u\/e2e_admin\/pal_alpha/ }).first()).toBeVisible();
    // The recent run, labelled by script path, status and time.
    await expect(palette.getByRole("option", { name: /u\/e2e_admin\/pal_alpha\s*success/ })).toBeVisible();
    await input.fill("pal_nightly");
    await expect(palette.getByRole("option", { name: /u\/e2e_admin\/pal_nightly/ })).toBeVisible();
    await input.fill("pal_token_var");
    await expect(palette.getByRole("option", { name: /u\/e2e_admin\/pal_token_var/ })).toBeVisible();
    // Another workspace's script never appears.
    await input.fill("pal_elsewhere");
    await expect(palette.getByText("Nothing matches.")).toBeVisible();
    await expect(palette.getByRole("option", { name: /pal_elsewhere/ })).toHaveCount(0);

    // Enter opens the best match: the variable's edit page.
    await input.fill("pal_token_var");
    await input.press("Enter");
    await expect(page).toHaveURL(new RegExp(`/w/${workspace}/variables/edit/u/e2e_admin/pal_token_var$`));
    await expect(palette).toBeHidden();

    // A page of the sidebar.
    palette = await openPalette(page);
    await palette.getByRole("combobox").fill("Audit log");
    await palette.getByRole("combobox").press("Enter");
    await expect(page).toHaveURL(new RegExp(`/w/${workspace}/audit$`));

    // A recent run opens its run page.
    palette = await openPalette(page);
    await palette.getByRole("combobox").fill("pal_alpha success");
    await palette.getByRole("option", { name: /u\/e2e_admin\/pal_alpha\s*success/ }).click();
    await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));

    // A script opens its script page.
    palette = await openPalette(page);
    await palette.getByRole("combobox").fill("pal_alpha");
    // The script's option: its path, then its summary ("script <path>", as deployScript sets it).
    await palette.getByRole("option", { name: /^u\/e2e_admin\/pal_alpha\s*script/ }).click();
    await expect(page).toHaveURL(new RegExp(`/w/${workspace}/scripts/get/u/e2e_admin/pal_alpha$`));

    // Escape closes it; the sidebar button opens it too.
    palette = await openPalette(page);
    await page.keyboard.press("Escape");
    await expect(palette).toBeHidden();
    await page.getByTestId("open-command-palette").click();
    await expect(page.getByTestId("command-palette")).toBeVisible();
  });

  test("an operator sees only what they may read", async ({ page }) => {
    await signIn(page, operator.email, operator.password);
    await page.goto(`/w/${workspace}/runs`);
    await expect(page.getByRole("heading", { name: "Runs", exact: true })).toBeVisible();
    const palette = await openPalette(page);
    const input = palette.getByRole("combobox");
    // u/e2e_admin/ and the unshared folder are not the operator's to read; the other workspace is not theirs.
    for (const hidden of ["pal_alpha", "pal_folder_only", "pal_token_var", "pal_nightly", "pal_elsewhere"]) {
      await input.fill(hidden);
      await expect(palette.getByRole("option", { name: new RegExp(hidden) })).toHaveCount(0);
    }
    // Nor a superadmin's page.
    await input.fill("Instance governance");
    await expect(palette.getByRole("option", { name: "Instance governance" })).toHaveCount(0);
    await input.fill("Schedules");
    await expect(palette.getByRole("option", { name: "Schedules" })).toBeVisible();
  });
});
