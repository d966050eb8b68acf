// Issue 34: the browser defects a new user met in Chromium at 1440×900, one test per item
// (items 6 to 12; the smaller ones of item 13 are in outsider-defects-small.spec.ts).
import { expect, test, type Browser, type Page } from "@playwright/test";
import { addMember, createAccount, deployScript } from "../fixtures/people.ts";
import { setModel } from "./monaco.ts";
import {
  completedJob,
  createWorkspace,
  deployVersion,
  signIn,
  superadmin,
  uniqueWorkspace,
} from "./helpers.ts";

const ADMIN = "e2e_admin";

async function pageAs(browser: Browser, email: string, password: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, email, password);
  return page;
}

/** Replaces the script's code in the page's editor, through its change events as typing would. */
async function setCode(page: Page, code: string): Promise<void> {
  await setModel(page, "file:///main", code);
}

test("item 10: Run from a script page with a version diff raises no page error", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out10");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/twice`;
  await deployVersion(request, workspace, path, "bash", 'echo "one"\n');
  await deployVersion(request, workspace, path, "bash", 'echo "two"\n');
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));

  await signIn(page);
  for (let attempt = 0; attempt < 2; attempt++) {
    await page.goto(`/w/${workspace}/scripts/get/${path}`);
    await expect(page.getByTestId("version-diff").locator(".monaco-diff-editor")).toBeVisible();
    await expect(page.getByTestId("version-diff").locator(".editor.modified")).toContainText("two");
    await page
      .getByRole("form", { name: `Run ${path}` })
      .getByRole("button", { name: "Run" })
      .click();
    await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));
    await expect(page.getByTestId("job-status").first()).toHaveText("success");
  }
  expect(errors).toEqual([]);
});

test("item 7: flows are reached from the sidebar, the home page and the Scripts list", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out7");
  await createWorkspace(request, workspace);
  await signIn(page);
  await page.goto(`/w/${workspace}`);
  const sidebar = page.getByRole("navigation", { name: "Main" });
  await sidebar.getByRole("link", { name: "Flows", exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/flows$`));
  await expect(sidebar.getByRole("link", { name: "Flows", exact: true })).toHaveClass(/active/);

  await page.goto(`/w/${workspace}`);
  await page
    .getByRole("navigation", { name: "Quick actions" })
    .getByRole("link", { name: "New flow" })
    .click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/flows/add$`));

  await page.goto(`/w/${workspace}/scripts`);
  await page.getByRole("main").getByRole("link", { name: /flows/i }).first().click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/flows$`));
});

test("item 11: operators and developers are not offered admin pages, nor operators Edit and run", async ({
  page,
  browser,
  request,
}) => {
  const workspace = uniqueWorkspace("out11");
  await createWorkspace(request, workspace);
  const folder = await request.post(`/api/w/${workspace}/folders/create`, {
    headers: superadmin,
    data: { name: "shared", extra_perms: { "g/all": true } },
  });
  expect(folder.status(), await folder.text()).toBe(201);
  await deployScript(request, workspace, "f/shared/hello", superadmin, 'echo "hello"');
  const id = await (
    await request.post(`/api/w/${workspace}/jobs/run/p/f/shared/hello`, { headers: superadmin, data: {} })
  ).text();
  await completedJob(request, workspace, id);
  const operator = await createAccount(request, "out11-op");
  const developer = await createAccount(request, "out11-dev");
  await addMember(request, workspace, operator.email, "operator");
  await addMember(request, workspace, developer.email, "developer");
  const adminOnly = ["Git sync", "Workers", "Governance", "Object storage"];

  await signIn(page);
  await page.goto(`/w/${workspace}`);
  const adminSidebar = page.getByRole("navigation", { name: "Main" });
  for (const name of adminOnly)
    await expect(adminSidebar.getByRole("link", { name, exact: true })).toBeVisible();

  for (const account of [operator, developer]) {
    const other = await pageAs(browser, account.email, account.password);
    try {
      await other.goto(`/w/${workspace}/runs/${id}`);
      await expect(other.getByTestId("job-status").first()).toHaveText("success");
      const sidebar = other.getByRole("navigation", { name: "Main" });
      await expect(sidebar.getByRole("link", { name: "Runs", exact: true })).toBeVisible();
      for (const name of adminOnly)
        await expect(sidebar.getByRole("link", { name, exact: true })).toHaveCount(0);
      await expect(other.getByRole("button", { name: "Run again" })).toBeVisible();
      if (account === operator) {
        await expect(other.getByRole("button", { name: "Edit and run" })).toHaveCount(0);
        await expect(other.getByRole("link", { name: "Run with other arguments" })).toBeVisible();
      } else {
        await expect(other.getByRole("button", { name: "Edit and run" })).toBeVisible();
      }
      // Nor through the command palette.
      await other.keyboard.press("Control+k");
      const palette = other.getByTestId("command-palette");
      await expect(palette.locator("[cmdk-root]")).toHaveAttribute("data-loaded", "true");
      await palette.getByRole("combobox").fill("Git sync");
      await expect(palette.getByRole("option", { name: "Git sync" })).toHaveCount(0);
    } finally {
      await other.context().close();
    }
  }
});

test("item 12: the command palette ranks exact, then prefix, then substring, then fuzzy matches", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out12");
  await createWorkspace(request, workspace);
  // ts_obj's summary names the pipeline (a word-start match that cmdk's own score put first);
  // post_it_pre matches "pipe" only letter by letter.
  await deployVersion(
    request,
    workspace,
    `u/${ADMIN}/ts_obj`,
    "bun",
    "export function main() {}",
    "Builds a typed object for the pipeline",
  );
  for (const name of ["post_it_pre", "my_pipe_run", "pipeline", "pipe"])
    await deployVersion(request, workspace, `u/${ADMIN}/${name}`, "bash", `echo ${name}`);
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts`);
  await page.keyboard.press("Control+k");
  const palette = page.getByTestId("command-palette");
  await expect(palette.locator("[cmdk-root]")).toHaveAttribute("data-loaded", "true");
  const input = palette.getByRole("combobox");
  // The options' paths, in the order shown (each option's first monospace span is its path).
  const firstPaths = async () => palette.getByRole("option").locator(".font-mono").allTextContents();

  await input.fill("pipe");
  await expect
    .poll(firstPaths)
    .toEqual(
      ["pipe", "pipeline", "my_pipe_run", "ts_obj", "post_it_pre"].map((name) => `u/${ADMIN}/${name}`),
    );
  await input.fill("u/e2e_admin/pipel");
  await expect.poll(async () => (await firstPaths())[0]).toBe(`u/${ADMIN}/pipeline`);
  await input.fill("obj");
  await expect.poll(async () => (await firstPaths())[0]).toBe(`u/${ADMIN}/ts_obj`);
  // Enter opens the best match.
  await input.fill("pipe");
  await input.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/scripts/get/u/${ADMIN}/pipe$`));
});

test("item 6: switching language offers the new template or keeps the code on request; Deploy names a mismatch", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out6");
  await createWorkspace(request, workspace);
  page.on("dialog", (dialog) => void (dialog.type() === "beforeunload" ? dialog.accept() : dialog.dismiss()));
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts/new`);
  const language = page.getByLabel("Language");
  const lines = page.getByTestId("code-editor").locator(".view-lines");

  // Untouched template code follows the language.
  await language.selectOption("python3");
  await expect(lines).toContainText("def main");
  await language.selectOption("bash");
  await expect(lines).toContainText('echo "Hello $name"');

  await language.selectOption("python3");
  await page.getByLabel("Path").fill(`u/${ADMIN}/mixed`);
  await setCode(page, 'import os\n\ndef main(x: int = 2):\n    return {"twice": x * 2}\n');
  await expect(page.getByTestId("draft-saved")).toBeVisible();
  // Leave and come back: the draft is restored.
  await page.getByRole("link", { name: "Runs", exact: true }).click();
  await page.getByTestId("confirm-dialog").getByRole("button", { name: "Leave" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs$`));
  await page.goto(`/w/${workspace}/scripts/new`);
  await expect(page.getByTestId("draft-restored")).toBeVisible();
  await expect(lines).toContainText("import os");

  // Edited code: asked first.
  await language.selectOption("bash");
  const ask = page.getByTestId("confirm-dialog");
  await expect(ask).toContainText("bash");
  await expect(ask.getByRole("button", { name: "Replace with the bash template" })).toBeVisible();
  await ask.getByRole("button", { name: "Keep my code" }).click();
  await expect(language).toHaveValue("bash");
  await expect(lines).toContainText("import os");

  // Deploying Python as bash names the mismatch; cancelling deploys nothing.
  await page.getByRole("button", { name: "Deploy" }).click();
  const confirm = page.getByTestId("confirm-dialog");
  await expect(confirm).toContainText(/looks like Python/i);
  await expect(confirm).toContainText("bash");
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(confirm).toHaveCount(0);
  const listed = await request.get(`/api/w/${workspace}/scripts/list`, { headers: superadmin });
  expect(await listed.json()).toEqual([]);

  // Switching again, this time to the template.
  await language.selectOption("python3");
  await expect(lines).toContainText("import os");
  await language.selectOption("bun");
  await page
    .getByTestId("confirm-dialog")
    .getByRole("button", { name: "Replace with the bun template" })
    .click();
  await expect(lines).toContainText("export async function main");
  await expect(lines).not.toContainText("import os");
  await page.getByRole("button", { name: "Deploy" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/scripts/edit/u/${ADMIN}/mixed$`));
});

test("item 9: the approval page and the run page give each step the same status", async ({
  page,
  request,
}) => {
  test.setTimeout(120_000);
  const workspace = uniqueWorkspace("out9");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/gated`;
  const created = await request.post(`/api/w/${workspace}/flows/create`, {
    headers: superadmin,
    data: {
      path,
      summary: "gated",
      value: {
        modules: [
          {
            id: "first",
            value: { type: "rawscript", language: "bash", content: "echo first", input_transforms: {} },
          },
          { id: "gate", value: { type: "identity" }, suspend: { required_events: 1, timeout: 600 } },
          {
            id: "after",
            value: { type: "rawscript", language: "bash", content: "echo after", input_transforms: {} },
          },
        ],
      },
    },
  });
  expect(created.status(), await created.text()).toBeLessThan(300);
  const flowId = await (
    await request.post(`/api/w/${workspace}/jobs/run/f/${path}`, { headers: superadmin, data: {} })
  ).text();
  let stepJob = "";
  await expect
    .poll(async () => {
      const job = await (
        await request.get(`/api/w/${workspace}/jobs_u/get/${flowId}`, { headers: superadmin })
      ).json();
      stepJob = job.flow_status?._engine?.suspended?.job ?? "";
      return stepJob;
    })
    .not.toBe("");
  const urls = (await (
    await request.get(`/api/w/${workspace}/jobs/resume_urls/${stepJob}/1?approver=ops`, {
      headers: superadmin,
    })
  ).json()) as { approvalPage: string };

  await signIn(page);
  await page.goto(`/w/${workspace}/runs/${flowId}`);
  const node = (step: string) =>
    page
      .getByTestId("flow-run-view")
      .getByTestId("flow-node")
      .and(page.locator(`[data-step="${step}"]`));
  await expect(node("gate")).toHaveAttribute("data-status", "suspended");
  const onRunPage: Record<string, string> = {};
  for (const step of ["first", "gate", "after"])
    onRunPage[step] = (await node(step).getAttribute("data-status")) ?? "";
  expect(onRunPage).toEqual({ first: "success", gate: "suspended", after: "waiting" });

  const url = new URL(urls.approvalPage);
  await page.goto(url.pathname + url.search);
  const steps = page.getByRole("list", { name: "Steps" });
  for (const step of ["first", "gate", "after"]) {
    await expect(steps.getByRole("listitem").filter({ hasText: step }).locator(".status")).toHaveText(
      onRunPage[step]!,
    );
  }
});

test("item 8: the version diff shows indentation-only changes", async ({ page, request }) => {
  const workspace = uniqueWorkspace("out8");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/indent`;
  const before = [
    "def main(items: list = []):",
    "    total = 0",
    "    for item in items:",
    "        if item:",
    "        total += 1",
    "        print(item)",
    "        print(total)",
    "    return total",
    "",
  ].join("\n");
  const after = before
    .replace("        total += 1", "            total += 1")
    .replace("        print(item)", "            print(item)")
    .replace("        print(total)", "            print(total)");
  await deployVersion(request, workspace, path, "python3", before);
  await deployVersion(request, workspace, path, "python3", after);
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts/get/${path}`);
  const modified = page.getByTestId("version-diff").locator(".editor.modified");
  await expect(modified).toContainText("print(total)");
  // Three changed lines are marked on the new side.
  await expect(modified.locator(".line-insert")).toHaveCount(3);
});
