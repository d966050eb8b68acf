// Issue 21's rough edges of the shell: a favicon (it was a 404 on every load) and a real
// not-found page for unknown routes (it was Next's bare 404).
import { expect, test } from "@playwright/test";

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
