// Issue 21's rough edges of the shell: a favicon (it was a 404 on every load), a real not-found
// page for unknown routes (it was Next's bare 404), a logo, Home in the sidebar, light and dark.
import { expect, test } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { createWorkspace, uniqueWorkspace } from "./helpers.ts";

test("the favicon and the icon are served, and pages link the icon", async ({ page, request }) => {
  const favicon = await request.get("/favicon.ico");
  expect(favicon.status()).toBe(200);
  expect(favicon.headers()["content-type"]).toContain("image/");
  await page.goto("/login");
  const href = await page.locator('link[rel="icon"]').first().getAttribute("href");
  expect(href).toBeTruthy();
  expect((await request.get(href!)).status()).toBe(200);
});

test("an unknown route answers 404 with a plain page and ways back", async ({ page }) => {
  const response = await page.goto("/no/such/page/here");
  expect(response?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Your workspaces" })).toBeVisible();
  await expect(page.getByText("This page could not be found.")).toHaveCount(0);
});

test("light and dark themes: the toggle switches, the choice survives a reload, the system preference is the default", async ({
  browser,
  request,
}) => {
  const workspace = uniqueWorkspace("theme");
  await createWorkspace(request, workspace);
  const context = await browser.newContext({ colorScheme: "dark" });
  const page = await context.newPage();
  await page.goto("/login");
  // No choice yet: the system's dark preference applies before anything is clicked.
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
  await page.goto(`/w/${workspace}`);
  const sidebar = page.getByRole("navigation", { name: "Main" });
  await expect(sidebar.getByRole("link", { name: "Home" })).toHaveClass(/active/);
  await expect(sidebar.locator(".brand img")).toBeVisible();

  // The page's own computed style (the e2e package has no DOM types, hence the cast).
  const background = () =>
    page
      .locator("html")
      .evaluate(
        (root) =>
          (
            globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
          ).getComputedStyle(root).backgroundColor,
      );
  const dark = await background();
  await sidebar.getByRole("button", { name: "Switch to the light theme" }).click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "light");
  expect(await background()).not.toBe(dark);
  await page.reload();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "light");
  await expect(sidebar.getByRole("button", { name: "Switch to the dark theme" })).toBeVisible();
  await context.close();
});

test("one layout for every page: the account and admin pages keep the sidebar and the last workspace's links", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("shell");
  await createWorkspace(request, workspace);
  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
  await page.goto(`/w/${workspace}/runs`);
  const sidebar = page.getByRole("navigation", { name: "Main" });
  await expect(sidebar.getByRole("link", { name: "Runs" })).toHaveClass(/active/);
  for (const [url, heading, link] of [
    ["/workspaces", "Workspaces", "All workspaces"],
    ["/account/tokens", "API tokens", "API tokens"],
    ["/admin/users", "Users", "Users"],
  ] as const) {
    await page.goto(url);
    await expect(page.getByRole("heading", { name: heading, exact: true })).toBeVisible();
    await expect(sidebar.getByRole("link", { name: link, exact: true })).toHaveClass(/active/);
    // The workspace last opened stays one click away.
    await expect(sidebar.getByRole("link", { name: "Scripts" })).toHaveAttribute(
      "href",
      `/w/${workspace}/scripts`,
    );
    await expect(sidebar.getByLabel("Workspace")).toHaveValue(workspace);
  }
  await sidebar.getByRole("link", { name: "Schedules" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/schedules$`));
});

test("below 1024 px the sidebar is a drawer behind a menu button", async ({ page, request }) => {
  const workspace = uniqueWorkspace("drawer");
  await createWorkspace(request, workspace);
  await page.setViewportSize({ width: 768, height: 900 });
  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
  await page.goto(`/w/${workspace}/scripts`);
  const sidebar = page.getByRole("navigation", { name: "Main" });
  await expect(sidebar).toBeHidden();
  const menu = page.getByRole("button", { name: "Open the menu" });
  await menu.click();
  await expect(menu).toHaveAttribute("aria-expanded", "true");
  await expect(sidebar).toBeVisible();
  await sidebar.getByRole("link", { name: "Runs" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs$`));
  // A navigation closes the drawer.
  await expect(sidebar).toBeHidden();
});
