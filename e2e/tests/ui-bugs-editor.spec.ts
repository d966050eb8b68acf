import { expect, test, type Browser, type Dialog, type Page } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { addMember, createAccount, deployScript } from "../fixtures/people.ts";
import { createWorkspace, uniqueWorkspace } from "./helpers.ts";

// Regression tests for issue 21 (the script editor), one test per reported bug.

const ADMIN_USERNAME = "e2e_admin";

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/workspaces/);
}

/** A page in a browser context of its own, signed in as the given account. */
async function pageAs(browser: Browser, email: string, password: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, email, password);
  return page;
}

/** Records every dialog the page opens (and dismisses it), to assert that none was shown. */
function recordDialogs(page: Page): Dialog[] {
  const dialogs: Dialog[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog);
    void dialog.dismiss().catch(() => undefined);
  });
  return dialogs;
}

/** Whether a beforeunload event would make the browser ask before leaving the page. */
async function beforeUnloadBlocks(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const event = new Event("beforeunload", { cancelable: true });
    // Runs in the page; the e2e package has no DOM types, hence globalThis.
    (globalThis as unknown as { dispatchEvent(event: Event): boolean }).dispatchEvent(event);
    return event.defaultPrevented;
  });
}

test("bug 3: a missing or unreadable script shows a plain not-found message, no editor and no Deploy", async ({
  page,
  browser,
  request,
}) => {
  const workspace = uniqueWorkspace("edbug3");
  await createWorkspace(request, workspace);
  await deployScript(request, workspace, `u/${ADMIN_USERNAME}/private`);

  await signIn(page, E2E_ADMIN.email, E2E_ADMIN.password);
  await page.goto(`/w/${workspace}/scripts/edit/u/${ADMIN_USERNAME}/missing`);
  await expect(page.getByText(`Script u/${ADMIN_USERNAME}/missing was not found`)).toBeVisible();
  await expect(page.getByRole("button", { name: "Deploy" })).toHaveCount(0);
  await expect(page.getByTestId("code-editor")).toHaveCount(0);
  await expect(page.getByLabel("Path")).toHaveCount(0);

  // A developer may not read another user's script: the same message, nothing to deploy over it.
  const dev = await createAccount(request, "edbug3-dev");
  await addMember(request, workspace, dev.email, "developer");
  const devPage = await pageAs(browser, dev.email, dev.password);
  try {
    await devPage.goto(`/w/${workspace}/scripts/edit/u/${ADMIN_USERNAME}/private`);
    await expect(devPage.getByText(`Script u/${ADMIN_USERNAME}/private was not found`)).toBeVisible();
    await expect(devPage.getByText("you may not read it")).toBeVisible();
    await expect(devPage.getByRole("button", { name: "Deploy" })).toHaveCount(0);
    await expect(devPage.getByTestId("code-editor")).toHaveCount(0);
  } finally {
    await devPage.context().close();
  }
});

test("bug 4: leaving the editor with unsaved changes asks first; no prompt without changes or after deploying", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("edbug4");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN_USERNAME}/draft`;
  await deployScript(request, workspace, path);
  const editorUrl = new RegExp(`/w/${workspace}/scripts/edit/${path}$`);
  const runsLink = page.getByRole("link", { name: "Runs", exact: true });

  await signIn(page, E2E_ADMIN.email, E2E_ADMIN.password);
  await page.goto(`/w/${workspace}/scripts/edit/${path}`);
  await expect(page.getByTestId("deployed-hash")).toContainText(/[0-9a-f]{16}/);

  // No changes: leaving asks nothing.
  expect(await beforeUnloadBlocks(page)).toBe(false);
  const silent = recordDialogs(page);
  await runsLink.click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs$`));
  await expect(page.getByTestId("confirm-dialog")).toHaveCount(0);
  expect(silent).toHaveLength(0);
  page.removeAllListeners("dialog");

  // Unsaved changes: a sidebar link asks; cancelling keeps the editor and the change.
  await page.goto(`/w/${workspace}/scripts/edit/${path}`);
  await expect(page.getByTestId("deployed-hash")).toContainText(/[0-9a-f]{16}/);
  await page.getByLabel("Summary").fill("changed, not deployed");
  await expect(page.getByTestId("deployed-hash")).toContainText("unsaved changes");
  expect(await beforeUnloadBlocks(page)).toBe(true);

  // The question is the app's own dialog (components/ui/confirm.tsx), not window.confirm.
  const confirm = page.getByTestId("confirm-dialog");
  const native = recordDialogs(page);
  await runsLink.click();
  await expect(confirm).toBeVisible();
  await expect(confirm).toContainText("unsaved changes");
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(confirm).toHaveCount(0);
  await expect(page).toHaveURL(editorUrl);
  await expect(page.getByLabel("Summary")).toHaveValue("changed, not deployed");

  // Accepting leaves.
  await runsLink.click();
  await expect(confirm).toContainText("unsaved changes");
  await confirm.getByRole("button", { name: "Leave" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs$`));
  expect(native).toHaveLength(0);
  page.removeAllListeners("dialog");

  // Right after a successful deploy there is nothing to lose: no prompt.
  await page.goto(`/w/${workspace}/scripts/edit/${path}`);
  await expect(page.getByTestId("deployed-hash")).toContainText(/[0-9a-f]{16}/);
  await page.getByLabel("Summary").fill("deployed this time");
  await expect(page.getByTestId("deployed-hash")).toContainText("unsaved changes");
  await page.getByRole("button", { name: "Deploy" }).click();
  await expect(page.getByTestId("deployed-hash")).not.toContainText("unsaved changes");
  expect(await beforeUnloadBlocks(page)).toBe(false);
  const afterDeploy = recordDialogs(page);
  await runsLink.click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs$`));
  await expect(page.getByTestId("confirm-dialog")).toHaveCount(0);
  expect(afterDeploy).toHaveLength(0);
  page.removeAllListeners("dialog");

  // Closing the tab with unsaved changes brings up the browser's own prompt.
  await page.goto(`/w/${workspace}/scripts/edit/${path}`);
  await expect(page.getByTestId("deployed-hash")).toContainText(/[0-9a-f]{16}/);
  // A real click: browsers only prompt on unload after the user interacted with the page.
  await page.getByLabel("Summary").click();
  await page.getByLabel("Summary").fill("closing with this");
  await expect(page.getByTestId("deployed-hash")).toContainText("unsaved changes");
  const unload = page.waitForEvent("dialog");
  await page.close({ runBeforeUnload: true });
  const prompt = await unload;
  expect(prompt.type()).toBe("beforeunload");
  await prompt.accept();
});

test("bug 5: the path field can be cleared and edited; an invalid path is explained at the field and Deploy waits", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("edbug5");
  await createWorkspace(request, workspace);
  const deploys: string[] = [];
  page.on("request", (req) => {
    if (req.url().includes("script.deploy")) deploys.push(req.url());
  });

  await signIn(page, E2E_ADMIN.email, E2E_ADMIN.password);
  await page.goto(`/w/${workspace}/scripts/new`);
  const pathInput = page.getByLabel("Path");
  const deploy = page.getByRole("button", { name: "Deploy" });
  const fieldError = page.getByTestId("path-error");
  await expect(pathInput).toHaveValue(`u/${ADMIN_USERNAME}/`);
  // Before any typing, what is missing is a hint, not an error (issue 34, item 13).
  await expect(page.getByTestId("path-hint")).toContainText(
    `Give the script a name after u/${ADMIN_USERNAME}/`,
  );
  await expect(fieldError).toHaveCount(0);
  await expect(deploy).toBeDisabled();

  // Cleared, it stays cleared.
  await pathInput.fill("");
  await expect(pathInput).toHaveValue("");
  await expect(fieldError).toBeVisible();
  await expect(fieldError).not.toContainText('segment ""');
  await expect(deploy).toBeDisabled();
  // Give the app a chance to put something back: it must not.
  await expect(page.getByLabel("Summary")).toBeVisible();
  await expect(pathInput).toHaveValue("");

  // Typed freely, including a different owner prefix.
  await pathInput.pressSequentially("f/");
  await expect(pathInput).toHaveValue("f/");
  await expect(fieldError).toBeVisible();
  await expect(deploy).toBeDisabled();

  await pathInput.fill(`u/${ADMIN_USERNAME}/`);
  await expect(fieldError).toHaveText(new RegExp(`Give the script a name after u/${ADMIN_USERNAME}/`));
  await expect(deploy).toBeDisabled();

  await pathInput.fill(`u/${ADMIN_USERNAME}/my script`);
  await expect(fieldError).toContainText("letters, digits");
  await expect(deploy).toBeDisabled();

  await pathInput.fill(`u/${ADMIN_USERNAME}/my_script`);
  await expect(fieldError).toHaveCount(0);
  await expect(deploy).toBeEnabled();
  expect(deploys).toHaveLength(0);

  await deploy.click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/scripts/edit/u/${ADMIN_USERNAME}/my_script$`));
  await expect(page.getByTestId("deployed-hash")).toContainText(/[0-9a-f]{16}/);
});

test("bug 7: operators get no New script, no editable editor and no Deploy; a developer is told before deploying under another user's path", async ({
  browser,
  request,
}) => {
  const workspace = uniqueWorkspace("edbug7");
  await createWorkspace(request, workspace);
  const op = await createAccount(request, "edbug7-op");
  await addMember(request, workspace, op.email, "operator");
  const dev = await createAccount(request, "edbug7-dev");
  await addMember(request, workspace, dev.email, "developer");
  const opScript = `u/${op.username}/hello`;
  await deployScript(request, workspace, opScript, undefined, "echo operator-can-read-this");

  const opPage = await pageAs(browser, op.email, op.password);
  try {
    await opPage.goto(`/w/${workspace}/scripts`);
    await expect(opPage.getByRole("link", { name: opScript })).toBeVisible();
    await expect(opPage.getByRole("button", { name: "New script" })).toHaveCount(0);

    // The list leads an operator to the script page; the editor's URL leads there too: the
    // code can be read and the script run, never edited or deployed.
    await opPage.getByRole("link", { name: opScript }).click();
    await expect(opPage).toHaveURL(new RegExp(`/scripts/get/${opScript}$`));
    await expect(opPage.getByRole("link", { name: "Edit" })).toHaveCount(0);
    await opPage.goto(`/w/${workspace}/scripts/edit/${opScript}`);
    await expect(opPage).toHaveURL(new RegExp(`/scripts/get/${opScript}$`));
    await expect(opPage.getByRole("heading", { name: opScript })).toBeVisible();
    await expect(opPage.getByRole("button", { name: "Deploy" })).toHaveCount(0);
    await expect(opPage.getByRole("link", { name: "Edit" })).toHaveCount(0);
    await expect(opPage.getByTestId("script-run").getByRole("button", { name: "Run" })).toBeEnabled();

    // The new-script page itself offers nothing to write.
    await opPage.goto(`/w/${workspace}/scripts/new`);
    await expect(opPage.getByText("Your role (operator) can run scripts but not edit them")).toBeVisible();
    await expect(opPage.getByRole("button", { name: "Deploy" })).toHaveCount(0);
    await expect(opPage.getByTestId("code-editor")).toHaveCount(0);
  } finally {
    await opPage.context().close();
  }

  const devPage = await pageAs(browser, dev.email, dev.password);
  try {
    await devPage.goto(`/w/${workspace}/scripts/new`);
    const pathInput = devPage.getByLabel("Path");
    await expect(pathInput).toHaveValue(`u/${dev.username}/`);
    await pathInput.fill(`u/${ADMIN_USERNAME}/mine`);
    await expect(devPage.getByTestId("path-error")).toHaveText(
      `Scripts under u/${ADMIN_USERNAME}/ belong to ${ADMIN_USERNAME}: save yours under u/${dev.username}/ or in a folder you can write to.`,
    );
    await expect(devPage.getByRole("button", { name: "Deploy" })).toBeDisabled();
    await pathInput.fill(`u/${dev.username}/mine`);
    await expect(devPage.getByTestId("path-error")).toHaveCount(0);
    await expect(devPage.getByRole("button", { name: "Deploy" })).toBeEnabled();
  } finally {
    await devPage.context().close();
  }

  // The server's own answer for that case is a plain sentence too.
  const refused = await request.post(`/api/w/${workspace}/scripts/create`, {
    headers: dev.headers,
    data: { path: `u/${ADMIN_USERNAME}/mine`, language: "bash", content: "echo no" },
  });
  expect(refused.status()).toBe(403);
  const message = await refused.text();
  expect(message).toContain(`belongs to ${ADMIN_USERNAME}`);
  expect(message).toContain(`save yours under u/${dev.username}/ or in a folder you can write to`);
  expect(message).not.toContain("only e2e_admin or an admin");
});
