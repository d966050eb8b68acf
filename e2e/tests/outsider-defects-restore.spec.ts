// Issue 34, item 13: the Restore page shows, before Apply, the lines a restore would change (not
// only the files' names), and never a secret's value in plain text.
import { expect, test, type APIRequestContext } from "@playwright/test";
import { startTestGitRemote } from "@millrace/sync/testing/git-remote";
import { E2E_ADMIN } from "../instance.ts";
import { signIn } from "../fixtures/site-pages.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

const WAIT = { timeout: 20_000 };
const SCRIPT = "u/e2e_admin/greet";

async function deploy(request: APIRequestContext, workspace: string, path: string, content: string) {
  const current = await request.get(`/api/w/${workspace}/scripts/get/p/${path}`, { headers: superadmin });
  const parent = current.ok() ? ((await current.json()) as { hash: string }).hash : undefined;
  const response = await request.post(`/api/w/${workspace}/scripts/create`, {
    headers: superadmin,
    data: { path, language: "bash", content, summary: "", parent_hash: parent },
  });
  expect(response.status(), await response.text()).toBe(201);
}

test("item 13: the Restore page shows each changed file's changed lines", async ({ page, request }) => {
  test.setTimeout(120_000);
  const backup = await startTestGitRemote({
    username: "restore",
    password: "e2e-lines",
    repoName: "lines.git",
  });
  try {
    const workspace = uniqueWorkspace("out13restore");
    await createWorkspace(request, workspace);
    const lines = ["echo one", "echo two", "echo three", "echo four", "echo five", "echo six"];
    await deploy(request, workspace, SCRIPT, lines.join("\n"));
    const secret = await request.post(`/api/w/${workspace}/variables/create`, {
      headers: superadmin,
      data: { path: "u/e2e_admin/token", value: "first-plain-secret", is_secret: true, description: "" },
    });
    expect(secret.status(), await secret.text()).toBeLessThan(300);
    const link = await request.post(`/api/w/${workspace}/git_sync/settings`, {
      headers: superadmin,
      data: { remote_url: backup.url, username: backup.username, password: backup.password },
    });
    expect(link.status(), await link.text()).toBe(200);
    await expect.poll(() => backup.readFile("u/e2e_admin/token.variable.yaml"), WAIT).not.toBeNull();
    await expect.poll(() => backup.readFile(`${SCRIPT}.sh`), WAIT).toContain("echo six");
    const unlink = await request.delete(`/api/w/${workspace}/git_sync/settings`, { headers: superadmin });
    expect(unlink.status(), await unlink.text()).toBe(200);

    // The workspace moves on: one line changed, the secret changed, one script more.
    await deploy(
      request,
      workspace,
      SCRIPT,
      lines.map((l) => (l === "echo four" ? "echo FOUR" : l)).join("\n"),
    );
    const updated = await request.post(`/api/w/${workspace}/variables/update/u/e2e_admin/token`, {
      headers: superadmin,
      data: { value: "second-plain-secret" },
    });
    expect(updated.status(), await updated.text()).toBeLessThan(300);
    await deploy(request, workspace, "u/e2e_admin/extra", "echo extra");

    await signIn(page, E2E_ADMIN.email, E2E_ADMIN.password);
    await page.goto("/admin/restore");
    await page.getByLabel("Git URL").fill(backup.url);
    await page.getByLabel("Username").fill(backup.username);
    await page.getByLabel("Password or token").fill(backup.password);
    await page.getByLabel("Workspace id").fill(workspace);
    await page.getByRole("button", { name: "Check" }).click();
    const diff = page.getByTestId("restore-diff");
    const script = diff.getByTestId("restore-file").filter({ hasText: `${SCRIPT}.sh` });
    // The repository's line against the workspace's, with some context around it.
    await expect(script).toContainText("-echo FOUR", WAIT);
    await expect(script).toContainText("+echo four");
    await expect(script).toContainText(" echo three");
    await expect(script).toContainText("@@");
    await expect(diff.getByTestId("restore-file").filter({ hasText: "u/e2e_admin/extra.sh" })).toContainText(
      "deleted",
    );
    await expect(diff.getByTestId("restore-file").filter({ hasText: "token.variable.yaml" })).toContainText(
      "enc:v",
    );
    const text = (await diff.textContent()) ?? "";
    expect(text).not.toContain("first-plain-secret");
    expect(text).not.toContain("second-plain-secret");
    await expect(page.getByTestId("restore-applied")).toHaveCount(0);
  } finally {
    await backup.close();
  }
});
