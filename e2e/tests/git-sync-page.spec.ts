import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { startTestGitRemote, type TestGitRemote } from "@millrace/sync/testing/git-remote";
import { E2E_ADMIN } from "../instance.ts";
import { addMember, createAccount, deployScript } from "../fixtures/people.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

// The Git sync page against a real git remote served by this test (git http-backend on
// 127.0.0.1): the server's own background loop pushes, the page shows what happened.

const WAIT = { timeout: 20_000 };

let remote: TestGitRemote;

test.beforeAll(async () => {
  remote = await startTestGitRemote({ username: "sync", password: "e2e-git-token" });
});

test.afterAll(async () => {
  await remote?.close();
});

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
}

interface Status {
  last_commit: string | null;
  last_error: string | null;
  runs: { id: string; status: string; trigger: string }[];
}

async function gitSyncStatus(
  request: APIRequestContext,
  workspace: string,
  headers: Record<string, string>,
): Promise<Status> {
  const response = await request.get(`/api/w/${workspace}/git_sync/status`, { headers });
  expect(response.status(), await response.text()).toBe(200);
  return (await response.json()) as Status;
}

/** True once the remote's head holds `file` and the page shows that head as the last commit. */
async function pageShowsHeadWith(page: Page, file: string): Promise<boolean> {
  const head = await remote.head();
  if (!head || (await remote.readFile(file)) === null) return false;
  const shown = await page.getByTestId("last-commit").textContent();
  return shown === head.slice(0, 10);
}

test("an admin links a workspace to git, sees its commits, a failing remote and the recovery", async ({
  page,
  request,
}) => {
  test.setTimeout(120_000);
  const workspace = uniqueWorkspace("gitsync-ui");
  await createWorkspace(request, workspace);
  const admin = await createAccount(request, "gitsync-admin");
  await addMember(request, workspace, admin.email, "admin");

  await signIn(page, admin.email, admin.password);
  await page.goto(`/w/${workspace}/git-sync`);
  await expect(page.getByRole("heading", { name: "Git sync", exact: true })).toBeVisible();
  await expect(
    page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Git sync" }),
  ).toBeVisible();
  await expect(page.getByText("No sync has run yet.")).toBeVisible();
  // Not a superadmin: the instance config and password hashes are not offered.
  await expect(page.getByText("Superadmin only")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Unlink" })).toHaveCount(0);

  // A wrong URL is refused next to its field.
  await page.getByLabel("Remote URL").fill("ftp://example.com/repo.git");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "http(s) URL" })).toBeVisible();

  await page.getByLabel("Remote URL").fill(remote.url);
  await page.getByLabel("Username").fill(remote.username);
  await page.getByLabel("Password or token").fill(remote.password);
  await expect(page.getByRole("switch", { name: /Enabled/ })).toBeChecked();
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("secret-stored")).toHaveText("stored");
  // The password is never sent back to the page.
  await expect(page.getByLabel("Password or token")).toHaveValue("");
  await expect(page.getByRole("button", { name: "Unlink" })).toBeVisible();

  // The first run commits the workspace as it is.
  await expect.poll(() => remote.head(), WAIT).not.toBeNull();

  // A deploy over REST becomes a commit on the remote, shown on the page (auto-refresh).
  const first = `u/${admin.username}/git_synced`;
  await deployScript(request, workspace, first, admin.headers, "echo synced");
  await expect.poll(() => pageShowsHeadWith(page, `${first}.sh`), WAIT).toBe(true);
  const commits = await remote.commits();
  expect(commits.some((c) => c.message === `Create script ${first}`)).toBe(true);
  await expect(page.getByTestId("pending-changes")).toHaveText("0", WAIT);
  await expect(page.getByRole("table", { name: "Recent runs" }).getByText("success").first()).toBeVisible();

  // "Sync now" starts one more run at once.
  const runsBefore = (await gitSyncStatus(request, workspace, admin.headers)).runs.length;
  await page.getByRole("button", { name: "Sync now" }).click();
  await expect
    .poll(async () => {
      const { runs } = await gitSyncStatus(request, workspace, admin.headers);
      return runs.length > runsBefore && runs[0]!.status === "success" ? runs[0]!.trigger : null;
    }, WAIT)
    .toBe("manual");
  await expect(page.getByRole("table", { name: "Recent runs" }).locator("tbody tr")).toHaveCount(
    runsBefore + 1,
    WAIT,
  );

  // The remote goes down: the next change cannot be pushed, and the page says so.
  await remote.stop();
  const second = `u/${admin.username}/while_down`;
  await deployScript(request, workspace, second, admin.headers, "echo down");
  const error = page.getByTestId("last-error");
  await expect(error).toBeVisible(WAIT);
  await expect(error).toContainText("Last error");
  await expect(page.getByTestId("next-attempt")).toBeVisible(WAIT);
  await expect(page.getByTestId("pending-changes")).not.toHaveText("0");
  await expect(page.getByRole("table", { name: "Recent runs" }).getByText("failure").first()).toBeVisible();
  // The deploy itself never waited for git.
  expect(await remote.readFile(`${second}.sh`)).toBeNull();

  // Back up: "Sync now" skips the backoff; the change is pushed and the error is gone.
  await remote.start();
  await page.getByRole("button", { name: "Sync now" }).click();
  await expect.poll(() => pageShowsHeadWith(page, `${second}.sh`), WAIT).toBe(true);
  await expect(error).toHaveCount(0, WAIT);
  await expect(page.getByTestId("next-attempt")).toHaveCount(0);
  await expect(page.getByTestId("pending-changes")).toHaveText("0", WAIT);

  // Unlink asks first; then the link is gone (the remote keeps its commits).
  await page.getByRole("button", { name: "Unlink" }).click();
  await page.getByTestId("confirm-dialog").getByRole("button", { name: "Unlink" }).click();
  await expect(page.getByRole("button", { name: "Unlink" })).toHaveCount(0, WAIT);
  await expect(page.getByLabel("Remote URL")).toHaveValue("");
  const unlinked = await gitSyncStatus(request, workspace, admin.headers);
  expect(unlinked).toMatchObject({ settings: null });
  expect(await remote.readFile(`${second}.sh`)).not.toBeNull();
});

test("a superadmin restores a workspace from a git remote: checked, then applied", async ({
  page,
  request,
}) => {
  test.setTimeout(120_000);
  const backup = await startTestGitRemote({
    username: "restore",
    password: "e2e-restore-token",
    repoName: "backup.git",
  });
  try {
    // The remote holds a workspace pushed there by the server's git sync.
    const source = uniqueWorkspace("gitsync-src");
    await createWorkspace(request, source);
    await deployScript(request, source, "u/e2e_admin/restored_script", superadmin, "echo restored");
    const link = await request.post(`/api/w/${source}/git_sync/settings`, {
      headers: superadmin,
      data: { remote_url: backup.url, username: backup.username, password: backup.password },
    });
    expect(link.status(), await link.text()).toBe(200);
    await expect.poll(() => backup.readFile("u/e2e_admin/restored_script.sh"), WAIT).not.toBeNull();
    await expect.poll(() => backup.readFile(".millrace/workspace.yaml"), WAIT).toContain(source);

    await signIn(page, E2E_ADMIN.email, E2E_ADMIN.password);
    await page.goto("/admin/restore");
    await expect(page.getByRole("heading", { name: "Restore a workspace from git" })).toBeVisible();
    const target = uniqueWorkspace("gitsync-restored");
    await page.getByLabel("Git URL").fill(backup.url);
    await page.getByLabel("Username").fill(backup.username);
    await page.getByLabel("Password or token").fill("wrong-token");
    await page.getByLabel("Workspace id").fill(target);
    await page.getByRole("button", { name: "Check" }).click();
    await expect(page.locator(".error").first()).toContainText("git.url", WAIT);

    // A new workspace: Check lists what would be added and applies nothing; Apply restores it.
    await page.getByLabel("Password or token").fill(backup.password);
    await page.getByRole("button", { name: "Check" }).click();
    await expect(page.getByTestId("restore-diff")).toContainText("u/e2e_admin/restored_script.sh", WAIT);
    await expect(page.getByTestId("restore-applied")).toHaveCount(0);
    expect((await request.get(`/api/w/${target}/scripts/list`, { headers: superadmin })).status()).toBe(404);
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByTestId("confirm-dialog").getByRole("button", { name: "Apply" }).click();
    await expect(page.getByTestId("restore-applied")).toBeVisible(WAIT);
    const restored = await request.get(`/api/w/${target}/scripts/get/p/u/e2e_admin/restored_script`, {
      headers: superadmin,
    });
    expect(restored.status(), await restored.text()).toBe(200);

    // The workspace now differs (one more script): Check lists the diff and waits for Apply.
    await deployScript(request, target, "u/e2e_admin/extra", superadmin, "echo extra");
    await page.getByRole("button", { name: "Check" }).click();
    const diff = page.getByTestId("restore-diff");
    await expect(diff).toContainText("2 deleted", WAIT);
    await expect(diff).toContainText("u/e2e_admin/extra.sh");
    await expect(page.getByTestId("restore-applied")).toHaveCount(0);
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByTestId("confirm-dialog").getByRole("button", { name: "Apply" }).click();
    await expect(page.getByTestId("restore-applied")).toBeVisible(WAIT);
    await expect(page.getByRole("button", { name: "Apply" })).toHaveCount(0);
    // The script missing from the repository is archived.
    const gone = await request.get(`/api/w/${target}/scripts/get/p/u/e2e_admin/extra`, {
      headers: superadmin,
    });
    if (gone.status() === 200) expect((await gone.json()).archived).toBe(true);
    else expect(gone.status()).toBe(404);

    const unlink = await request.delete(`/api/w/${source}/git_sync/settings`, { headers: superadmin });
    expect(unlink.status(), await unlink.text()).toBe(200);
  } finally {
    await backup.close();
  }
});
