import { expect, test, type APIRequestContext, type Browser, type Page } from "@playwright/test";
import { addMember, createAccount } from "../fixtures/people.ts";
import { signIn } from "../fixtures/site-pages.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

// The script page (issue 21): what a script is, running it, its versions and their diff, archive,
// unarchive, delete, fork; the scripts list's filters; read-only edit pages of resources,
// variables and schedules for those who may not change them.

test.describe.configure({ mode: "serial" });

type Account = Awaited<ReturnType<typeof createAccount>>;

let workspace: string;
let admin: Account;
let operator: Account;
let viewer: Account;
const SCRIPT = "f/team/greet";
const OTHER = "f/team/py_echo";

async function post(
  request: APIRequestContext,
  path: string,
  data: unknown,
  headers: Record<string, string> = superadmin,
) {
  const response = await request.post(`/api/w/${workspace}/${path}`, { headers, data });
  expect(response.status(), `${path}: ${await response.text()}`).toBeLessThan(300);
  return response.text();
}

async function pageAs(browser: Browser, account: Account): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, account.email, account.password);
  return page;
}

async function dialogAnswer(page: Page, title: RegExp, button: string) {
  const dialog = page.getByRole("alertdialog");
  await expect(dialog).toContainText(title);
  await dialog.getByRole("button", { name: button, exact: true }).click();
  await expect(dialog).toBeHidden();
}

test.beforeAll(async ({ request }) => {
  workspace = uniqueWorkspace("script-page");
  await createWorkspace(request, workspace);
  admin = await createAccount(request, "sp-admin");
  operator = await createAccount(request, "sp-op");
  viewer = await createAccount(request, "sp-viewer");
  await addMember(request, workspace, admin.email, "admin");
  await addMember(request, workspace, operator.email, "operator");
  await addMember(request, workspace, viewer.email, "developer");
  // Everyone in the workspace may read f/team; only admins write there.
  await post(request, "folders/create", { name: "team", summary: "", extra_perms: { "g/all": false } });
  const first = await post(
    request,
    "scripts/create",
    {
      path: SCRIPT,
      language: "bash",
      content: 'who="$1"\necho "first_version-$who"',
      summary: "Greets someone",
      description: "Says hello, for the script page test.",
    },
    admin.headers,
  );
  await post(
    request,
    "scripts/create",
    {
      path: SCRIPT,
      language: "bash",
      content: 'who="$1"\necho "second_version-$who"',
      summary: "Greets someone",
      description: "Says hello, for the script page test.",
      parent_hash: first,
    },
    admin.headers,
  );
  await post(request, "scripts/create", {
    path: OTHER,
    language: "python3",
    content: "def main(text: str):\n    return text\n",
    summary: "Echoes its text",
  });
  await post(request, "schedules/create", {
    path: "f/team/nightly_greet",
    schedule: "0 0 3 * * *",
    timezone: "UTC",
    script_path: SCRIPT,
    args: { who: "night" },
    enabled: false,
  });
  await post(request, "variables/create", {
    path: "f/team/greeting",
    value: "hello-variable",
    is_secret: false,
    description: "",
  });
  await post(request, "resources/create", {
    path: "f/team/db",
    resource_type: "postgresql",
    value: { host: "db.example", port: 5432, user: "u", dbname: "d" },
  });
});

test("the list links to the script page, which shows the script, its schedules, webhooks and versions with a diff", async ({
  browser,
}) => {
  const page = await pageAs(browser, admin);
  await page.goto(`/w/${workspace}/scripts`);
  await page.getByRole("link", { name: SCRIPT, exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/scripts/get/${SCRIPT}$`));
  await expect(page.getByRole("heading", { name: SCRIPT, level: 1 })).toBeVisible();
  const summary = page.getByTestId("script-summary");
  await expect(summary.getByTestId("script-language")).toHaveText("bash");
  await expect(summary).toContainText("Greets someone");
  await expect(summary).toContainText("Says hello, for the script page test.");
  await expect(page.getByTestId("script-deployed")).toContainText(`deployed by ${admin.username}`);

  // Schedules that run it, and its webhooks.
  const schedules = page.getByTestId("script-schedules");
  await expect(schedules.getByRole("link", { name: "f/team/nightly_greet" })).toHaveAttribute(
    "href",
    `/w/${workspace}/schedules/edit/f/team/nightly_greet`,
  );
  await expect(schedules).toContainText("paused");
  const webhooks = page.getByTestId("script-webhooks");
  await expect(webhooks.getByTestId("script-webhook-async")).toContainText(
    `/api/w/${workspace}/jobs/run/p/${SCRIPT}`,
  );
  await expect(webhooks.getByRole("link", { name: "Webhook tokens and examples" })).toHaveAttribute(
    "href",
    `/w/${workspace}/scripts/webhooks/${SCRIPT}`,
  );

  // Both versions, newest first, and the diff of the two side by side.
  const versions = page.getByTestId("script-versions");
  await expect(versions.getByTestId("script-version")).toHaveCount(2);
  await expect(versions.getByTestId("script-version").first()).toContainText("latest");
  const diff = page.getByTestId("version-diff");
  await expect(diff.locator(".editor.original .view-lines")).toContainText("first_version");
  await expect(diff.locator(".editor.modified .view-lines")).toContainText("second_version");
  // Picking the same version on both sides shows no diff.
  const latest = await page.getByLabel("Newer (right)").inputValue();
  await page.getByLabel("Older (left)").selectOption(latest);
  await expect(diff).toHaveCount(0);
  await expect(versions).toContainText("Pick two different versions");

  // Edit leads to the editor; Fork to a new script from this one.
  await expect(page.getByRole("link", { name: "Edit" })).toHaveAttribute(
    "href",
    `/w/${workspace}/scripts/edit/${SCRIPT}`,
  );
  await expect(page.getByRole("link", { name: "Fork" })).toHaveAttribute(
    "href",
    `/w/${workspace}/scripts/new?fork=${encodeURIComponent(SCRIPT)}`,
  );
  // The fork is a new script under the forker's own path, with the source's code and summary.
  const source = (await (
    await page.request.get(`/api/w/${workspace}/scripts/get/p/${SCRIPT}`, { headers: superadmin })
  ).json()) as { content: string; summary: string };
  await page.getByRole("link", { name: "Fork" }).click();
  await expect(page).toHaveURL(/\/scripts\/new\?fork=/);
  const forkPath = page.getByLabel("Path");
  await expect(forkPath).toHaveValue(new RegExp(`^u/[^/]+/${SCRIPT.split("/").pop()}_fork$`));
  await expect(page.getByLabel("Summary")).toHaveValue(source.summary);
  const firstLine = source.content.split("\n")[0]!;
  await expect(page.getByTestId("code-editor").locator(".view-lines")).toContainText(firstLine.trim());
  const forkedAt = await forkPath.inputValue();
  await page.getByRole("button", { name: "Deploy" }).click();
  await expect(page).toHaveURL(new RegExp(`/scripts/edit/${forkedAt}$`));
  const forked = (await (
    await page.request.get(`/api/w/${workspace}/scripts/get/p/${forkedAt}`, { headers: superadmin })
  ).json()) as { content: string };
  expect(forked.content).toBe(source.content);
  // The other tests count this workspace's scripts: the fork goes again.
  const removed = await page.request.post(`/api/w/${workspace}/scripts/delete/p/${forkedAt}`, {
    headers: superadmin,
  });
  expect(removed.status(), await removed.text()).toBeLessThan(300);
  await page.context().close();
});

test("runs from the script page, then lists the run among its recent runs", async ({ browser }) => {
  const page = await pageAs(browser, admin);
  await page.goto(`/w/${workspace}/scripts/get/${SCRIPT}`);
  await expect(page.getByTestId("script-recent-runs")).toContainText("No runs yet.");
  await page.getByTestId("args-form").locator('input[name="who"]').fill("ada");
  await page.getByTestId("script-run").getByRole("button", { name: "Run" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));
  const id = page.url().split("/").pop()!;
  await expect(page.getByTestId("job-status")).toHaveText("success");
  await page.goto(`/w/${workspace}/scripts/get/${SCRIPT}`);
  const runs = page.getByTestId("script-runs");
  await expect(runs.getByRole("link", { name: id.slice(0, 8) })).toHaveAttribute(
    "href",
    `/w/${workspace}/runs/${id}`,
  );
  await expect(runs).toContainText("success");
  await page.context().close();
});

test("archive, then unarchive; the list shows an archived script only on request", async ({ browser }) => {
  const page = await pageAs(browser, admin);
  await page.goto(`/w/${workspace}/scripts/get/${SCRIPT}`);
  await page.getByRole("button", { name: "Archive" }).click();
  await dialogAnswer(page, new RegExp(`Archive ${SCRIPT}\\?`), "Archive script");
  await expect(page.getByText(`Archived ${SCRIPT}`)).toBeVisible();
  await expect(page.getByTestId("archived-badge")).toBeVisible();
  await expect(page.getByTestId("script-run")).toHaveCount(0);
  await expect(page.getByRole("link", { name: "Edit" })).toHaveCount(0);
  // Its versions stay.
  await expect(page.getByTestId("script-version")).toHaveCount(2);

  await page.goto(`/w/${workspace}/scripts`);
  await expect(page.getByRole("link", { name: OTHER, exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: SCRIPT, exact: true })).toHaveCount(0);
  await page.getByLabel("Show archived").check();
  const row = page.getByTestId("script-row").filter({ hasText: SCRIPT });
  await expect(row).toContainText("archived");
  // An archived script has no Edit shortcut.
  await expect(row.getByRole("link", { name: `Edit ${SCRIPT}` })).toHaveCount(0);
  await row.getByRole("link", { name: SCRIPT, exact: true }).click();

  await expect(page).toHaveURL(new RegExp(`/scripts/get/${SCRIPT}$`));
  await page.getByRole("button", { name: "Unarchive" }).click();
  await expect(page.getByText(`Unarchived ${SCRIPT}`)).toBeVisible();
  await expect(page.getByTestId("archived-badge")).toHaveCount(0);
  await expect(page.getByTestId("script-run")).toBeVisible();
  await page.context().close();
});

test("delete asks first: Cancel keeps the script, Delete script removes it", async ({ browser, request }) => {
  const path = "f/team/doomed";
  await post(request, "scripts/create", { path, language: "bash", content: "echo doomed", summary: "" });
  const page = await pageAs(browser, admin);
  await page.goto(`/w/${workspace}/scripts/get/${path}`);
  await page.getByRole("button", { name: "Delete" }).click();
  await dialogAnswer(page, new RegExp(`Delete ${path}\\?`), "Cancel");
  await expect(page.getByRole("heading", { name: path, level: 1 })).toBeVisible();
  expect(
    (await request.get(`/api/w/${workspace}/scripts/get/p/${path}`, { headers: superadmin })).status(),
  ).toBe(200);

  await page.getByRole("button", { name: "Delete" }).click();
  await dialogAnswer(page, new RegExp(`Delete ${path}\\?`), "Delete script");
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/scripts$`));
  await expect(page.getByText(`Deleted ${path}`)).toBeVisible();
  await page.getByLabel("Show archived").check();
  await expect(page.getByRole("link", { name: SCRIPT, exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: path, exact: true })).toHaveCount(0);
  expect(
    (await request.get(`/api/w/${workspace}/scripts/get/p/${path}`, { headers: superadmin })).status(),
  ).toBe(404);
  await page.context().close();
});

test("the scripts list filters by path or summary and by language, and offers Edit to writers", async ({
  browser,
}) => {
  const page = await pageAs(browser, admin);
  await page.goto(`/w/${workspace}/scripts`);
  const rows = page.getByTestId("script-row");
  await expect(rows).toHaveCount(2);
  await expect(page.getByRole("link", { name: `Edit ${SCRIPT}` })).toHaveAttribute(
    "href",
    `/w/${workspace}/scripts/edit/${SCRIPT}`,
  );
  await page.getByLabel("Search").fill("echoes");
  await expect(rows).toHaveCount(1);
  await expect(rows).toContainText(OTHER);
  await page.getByLabel("Search").fill("greet");
  await expect(rows).toHaveCount(1);
  await expect(rows).toContainText(SCRIPT);
  await page.getByLabel("Search").fill("");
  await page.getByLabel("Language").selectOption("python3");
  await expect(rows).toHaveCount(1);
  await expect(rows).toContainText(OTHER);
  await page.getByLabel("Search").fill("greet");
  await expect(rows).toHaveCount(0);
  await expect(page.getByText("No script matches these filters.")).toBeVisible();
  await page.context().close();
});

test("an operator gets the script page without Edit, Fork, Archive or Delete, and can run", async ({
  browser,
}) => {
  const page = await pageAs(browser, operator);
  await page.goto(`/w/${workspace}/scripts`);
  await expect(page.getByTestId("script-row")).toHaveCount(2);
  await expect(page.getByRole("link", { name: /^Edit / })).toHaveCount(0);
  await page.getByRole("link", { name: SCRIPT, exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/scripts/get/${SCRIPT}$`));
  await expect(page.getByTestId("script-versions").getByTestId("script-version")).toHaveCount(2);
  for (const name of ["Edit", "Fork"]) await expect(page.getByRole("link", { name })).toHaveCount(0);
  for (const name of ["Archive", "Unarchive", "Delete"]) {
    await expect(page.getByRole("button", { name })).toHaveCount(0);
  }
  await page.getByTestId("args-form").locator('input[name="who"]').fill("op");
  await page.getByTestId("script-run").getByRole("button", { name: "Run" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));
  await expect(page.getByTestId("job-status")).toHaveText("success");
  await expect(page.getByTestId("job-logs")).toContainText("second_version-op");
  await page.context().close();
});

test("a developer who may only view the folder gets Fork but no Edit, Archive or Delete", async ({
  browser,
}) => {
  const page = await pageAs(browser, viewer);
  await page.goto(`/w/${workspace}/scripts/get/${SCRIPT}`);
  await expect(page.getByRole("heading", { name: SCRIPT, level: 1 })).toBeVisible();
  await expect(page.getByRole("link", { name: "Fork" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Edit" })).toHaveCount(0);
  for (const name of ["Archive", "Delete"]) await expect(page.getByRole("button", { name })).toHaveCount(0);
  await page.goto(`/w/${workspace}/scripts`);
  await expect(page.getByTestId("script-row")).toHaveCount(2);
  await expect(page.getByRole("link", { name: /^Edit / })).toHaveCount(0);
  await page.context().close();
});

test("an operator sees resource, variable and schedule pages read-only", async ({ browser }) => {
  const page = await pageAs(browser, operator);
  await page.goto(`/w/${workspace}/variables/edit/f/team/greeting`);
  await expect(page.getByTestId("read-only-note")).toHaveText("You can see this variable but not change it.");
  await expect(page.locator('textarea[name="value"]')).toHaveValue("hello-variable");
  await expect(page.locator('textarea[name="value"]')).not.toBeEditable();
  await expect(page.locator('input[name="path"]')).not.toBeEditable();
  for (const name of ["Save", "Delete"]) await expect(page.getByRole("button", { name })).toHaveCount(0);

  await page.goto(`/w/${workspace}/resources/edit/f/team/db`);
  await expect(page.getByTestId("read-only-note")).toHaveText("You can see this resource but not change it.");
  await expect(page.locator('textarea[name="value"]')).toHaveValue(/db\.example/);
  await expect(page.locator('textarea[name="value"]')).not.toBeEditable();
  for (const name of ["Save", "Delete"]) await expect(page.getByRole("button", { name })).toHaveCount(0);

  await page.goto(`/w/${workspace}/schedules/edit/f/team/nightly_greet`);
  const settings = page.getByTestId("schedule-settings");
  await expect(settings).toContainText("You can see this schedule but not change it.");
  await expect(settings).toContainText("0 0 3 * * *");
  await expect(settings.getByRole("link", { name: SCRIPT })).toHaveAttribute(
    "href",
    `/w/${workspace}/scripts/get/${SCRIPT}`,
  );
  await expect(page.getByRole("checkbox", { name: "Enabled" })).toBeDisabled();
  for (const name of ["Save schedule", "Delete"]) {
    await expect(page.getByRole("button", { name })).toHaveCount(0);
  }
  await page.context().close();
});

test("resource, variable and schedule deletes ask first; the schedule's Enabled box answers at once", async ({
  browser,
  request,
}) => {
  await post(request, "variables/create", { path: "f/team/tmp_var", value: "x", is_secret: false });
  await post(request, "resources/create", {
    path: "f/team/tmp_db",
    resource_type: "postgresql",
    value: { host: "h", port: 5432, user: "u", dbname: "d" },
  });
  await post(request, "schedules/create", {
    path: "f/team/tmp_schedule",
    schedule: "0 0 4 * * *",
    timezone: "UTC",
    script_path: SCRIPT,
    args: { who: "tmp" },
    enabled: false,
  });
  const page = await pageAs(browser, admin);
  for (const [kind, path, action] of [
    ["variables", "f/team/tmp_var", "Delete variable"],
    ["resources", "f/team/tmp_db", "Delete resource"],
    ["schedules", "f/team/tmp_schedule", "Delete schedule"],
  ] as const) {
    await page.goto(`/w/${workspace}/${kind}/edit/${path}`);
    const del = page.getByRole("button", { name: "Delete", exact: true });
    await del.click();
    await dialogAnswer(page, new RegExp(`Delete (schedule )?${path}\\?`), "Cancel");
    await expect(page).toHaveURL(new RegExp(`/${kind}/edit/${path}$`));
    if (kind === "schedules") {
      // Optimistic: the box is checked as soon as it is clicked, and stays so once saved.
      const enabled = page.getByRole("checkbox", { name: "Enabled" });
      await expect(enabled).not.toBeChecked();
      await enabled.click();
      await expect(enabled).toBeChecked({ timeout: 200 });
      await expect(page.getByText(`Enabled ${path}`)).toBeVisible();
      await expect(page.getByTestId("next-run")).toContainText("Next run:");
      await expect(enabled).toBeChecked();
    }
    await del.click();
    await dialogAnswer(page, new RegExp(`Delete (schedule )?${path}\\?`), action);
    await expect(page).toHaveURL(new RegExp(`/w/${workspace}/${kind}$`));
    await expect(page.getByText(new RegExp(`Deleted (schedule )?${path}`))).toBeVisible();
  }
  await page.context().close();
});

test("REST: scripts/delete/p deletes every version of a path (Windmill's endpoint)", async ({ request }) => {
  const path = "f/team/rest_doomed";
  const first = await post(request, "scripts/create", {
    path,
    language: "bash",
    content: "echo 1",
    summary: "",
  });
  await post(request, "scripts/create", {
    path,
    language: "bash",
    content: "echo 2",
    summary: "",
    parent_hash: first,
  });
  const refused = await request.post(`/api/w/${workspace}/scripts/delete/p/${path}`, {
    headers: operator.headers,
  });
  expect(refused.status()).toBe(403);
  const deleted = await request.post(`/api/w/${workspace}/scripts/delete/p/${path}`, {
    headers: admin.headers,
  });
  expect(deleted.status(), await deleted.text()).toBe(200);
  expect(await deleted.text()).toBe(`Script ${path} deleted`);
  const gone = await request.get(`/api/w/${workspace}/scripts/get/h/${first}`, { headers: superadmin });
  expect(gone.status()).toBe(404);
  const again = await request.post(`/api/w/${workspace}/scripts/delete/p/${path}`, {
    headers: admin.headers,
  });
  expect(again.status()).toBe(404);
});
