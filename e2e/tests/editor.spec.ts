import { expect, test } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { createWorkspace, uniqueWorkspace } from "./helpers.ts";

test("sign in, write a bash script in Monaco, deploy it, run it and see its output", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("ui");
  await createWorkspace(request, workspace);

  await page.goto("/");
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
  await page.getByRole("link", { name: workspace }).click();
  await expect(page.getByRole("heading", { name: "Scripts", exact: true })).toBeVisible();
  await expect(page.getByText("No scripts yet")).toBeVisible();

  await page.getByRole("button", { name: "New script" }).click();
  await page.getByLabel("Path").fill("u/e2e_admin/greet");
  await page.getByLabel("Summary").fill("Greets from the browser");
  await page.getByLabel("Language").selectOption("bash");

  // Typed keys reach the form only once the editor listens to its model (data-editor-ready).
  await expect(page.getByTestId("code-editor")).toHaveAttribute("data-editor-ready", "true");
  const editor = page.getByTestId("code-editor").locator(".monaco-editor");
  await expect(editor).toBeVisible();
  await editor.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.keyboard.type("who=$1");
  await page.keyboard.press("Escape");
  await page.keyboard.press("Enter");
  await page.keyboard.type("echo hello-$who-from-monaco");
  await page.keyboard.press("Escape");
  // Monaco renders spaces as non-breaking spaces.
  await expect(editor.locator(".view-lines")).toContainText("echo\u00a0hello-$who-from-monaco");

  // The form follows the signature: `who` is a required string.
  const whoInput = page.getByTestId("args-form").locator('input[name="who"]');
  await expect(whoInput).toBeVisible();

  await page.getByRole("button", { name: "Deploy" }).click();
  await expect(page.getByTestId("deployed-hash")).toContainText(/[0-9a-f]{16}/);
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/scripts/edit/u/e2e_admin/greet$`));

  await page.getByTestId("args-form").locator('input[name="who"]').fill("ada");
  await page.getByRole("button", { name: "Run" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));
  await expect(page.getByTestId("job-status")).toHaveText("success");
  await expect(page.getByTestId("job-logs")).toContainText("hello-ada-from-monaco");
  await expect(page.getByTestId("job-result")).toContainText('"hello-ada-from-monaco"');

  await page.getByRole("link", { name: "Scripts" }).click();
  await expect(page.getByRole("link", { name: "u/e2e_admin/greet", exact: true })).toBeVisible();
});
