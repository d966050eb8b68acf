import { expect, test, type Page } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { deployScript } from "../fixtures/people.ts";
import { setModel } from "./monaco.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

// The script workbench (issue 21, item 2): Test before deploy, drafts, settings, languages,
// Monaco's types, customised arguments.

const ADMIN = "e2e_admin";

async function signIn(page: Page): Promise<void> {
  // Reloading with unsaved changes: the browser's leave prompt is accepted.
  page.on("dialog", (dialog) => void (dialog.type() === "beforeunload" ? dialog.accept() : dialog.dismiss()));
  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/workspaces/);
}

type MonacoOnPage = {
  monaco: {
    editor: {
      getModels(): { uri: { toString(): string } }[];
      getModelMarkers(filter: { resource?: unknown }): {
        severity: number;
        message: string;
        startLineNumber: number;
      }[];
    };
  };
};

/** Replaces the script's code in the page's editor, through its change events as typing would. */
async function setCode(page: Page, code: string): Promise<void> {
  await setModel(page, "file:///main", code);
}

/** The error markers (severity 8) Monaco has on the script's model, as line: message. */
async function errorMarkers(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const { monaco } = globalThis as unknown as MonacoOnPage;
    const model = monaco.editor.getModels().find((m) => m.uri.toString().startsWith("file:///main"));
    if (!model) return ["no model"];
    return monaco.editor
      .getModelMarkers({ resource: model.uri })
      .filter((marker) => marker.severity === 8)
      .map((marker) => `${marker.startLineNumber}: ${marker.message}`);
  });
}

test("Test runs the code in the editor before any deploy, with its logs and result; Ctrl-Enter runs it again", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("wbtest");
  await createWorkspace(request, workspace);
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts/new`);
  await page.getByLabel("Language").selectOption("bash");
  await setCode(page, 'echo "log-line-$((6*7))"\necho "result-$((7*7))"\n');
  await expect(page.getByRole("button", { name: "Run", exact: true })).toBeDisabled();

  const result = page.getByTestId("workbench-result");
  await page.getByTestId("workbench-test").click();
  await expect(result.getByTestId("job-status")).toHaveText("success");
  await expect(result).toContainText("log-line-42");
  await expect(result).toContainText("result-49");

  // The edited code, not a deployed one: change it and run with the keyboard from the editor.
  await setCode(page, 'echo "second-$((2+3))"\n');
  await page.getByTestId("code-editor").locator(".monaco-editor").click();
  await page.keyboard.press("Control+Enter");
  await expect(result).toContainText("second-5");
  await expect(result.getByTestId("job-status")).toHaveText("success");
  // Nothing was deployed.
  await expect(page.getByTestId("deployed-hash")).toHaveCount(0);
  const list = await request.get(`/api/w/${workspace}/scripts/list`, { headers: superadmin });
  expect(await list.json()).toEqual([]);
});

test("a draft is saved as you type, restored after a reload and after leaving, and can be discarded", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("wbdraft");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/drafty`;
  await deployScript(request, workspace, path, superadmin, "echo deployed-version");
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts/edit/${path}`);
  const lines = page.getByTestId("code-editor").locator(".view-lines");
  await expect(lines).toContainText("deployed-version");
  await expect(page.getByTestId("draft-restored")).toHaveCount(0);

  await page.getByLabel("Summary").fill("draft summary");
  await setCode(page, "echo draft-version\n");
  await expect(page.getByTestId("draft-saved")).toBeVisible();

  await page.reload();
  const note = page.getByTestId("draft-restored");
  await expect(note).toContainText("Restored your unsaved draft from");
  await expect(page.getByLabel("Summary")).toHaveValue("draft summary");
  await expect(lines).toContainText("draft-version");
  await expect(page.getByTestId("deployed-hash")).toContainText("unsaved changes");

  // Leaving by a link asks in the app's dialog; the draft is there when coming back.
  await page.getByRole("link", { name: "Runs", exact: true }).click();
  const dialog = page.getByTestId("confirm-dialog");
  await expect(dialog).toContainText("unsaved changes");
  await dialog.getByRole("button", { name: "Leave" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs$`));
  await page.goto(`/w/${workspace}/scripts/edit/${path}`);
  await expect(note).toBeVisible();
  await expect(lines).toContainText("draft-version");

  await note.getByRole("button", { name: "Discard draft" }).click();
  await expect(note).toHaveCount(0);
  await expect(lines).toContainText("deployed-version");
  await expect(page.getByLabel("Summary")).toHaveValue(`script ${path}`);
  await expect(page.getByTestId("deployed-hash")).not.toContainText("unsaved changes");
  await page.reload();
  await expect(lines).toContainText("deployed-version");
  await expect(page.getByTestId("draft-restored")).toHaveCount(0);

  // A deploy deletes the draft.
  await page.getByLabel("Summary").fill("deployed with a draft");
  await expect(page.getByTestId("draft-saved")).toBeVisible();
  await page.getByRole("button", { name: "Deploy" }).click();
  await expect(page.getByTestId("deployed-hash")).not.toContainText("unsaved changes");
  await page.reload();
  await expect(page.getByLabel("Summary")).toHaveValue("deployed with a draft");
  await expect(page.getByTestId("draft-restored")).toHaveCount(0);
});

test("settings: only the workspace's tags are offered, a bad timeout is refused at its field, the rest is saved on deploy", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("wbset");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/configured`;
  await deployScript(request, workspace, path);
  const stamp = Date.now().toString(36);
  const allowed = `wbok-${stamp}`;
  const elsewhere = `wbno-${stamp}`;
  const previous = await (
    await request.get("/api/settings/global/custom_tags", { headers: superadmin })
  ).json();
  const set = await request.post("/api/settings/global/custom_tags", {
    headers: superadmin,
    data: { value: [...((previous as string[] | null) ?? []), allowed, `${elsewhere}(not-this-one)`] },
  });
  expect(set.status(), await set.text()).toBeLessThan(300);
  try {
    await signIn(page);
    await page.goto(`/w/${workspace}/scripts/edit/${path}`);
    await page.getByRole("tab", { name: "Settings" }).click();
    const settings = page.getByTestId("workbench-settings");
    const tag = settings.getByLabel("Worker tag");
    await expect(tag.locator("option", { hasText: allowed })).toHaveCount(1);
    await expect(tag.locator("option", { hasText: elsewhere })).toHaveCount(0);

    await settings.getByLabel("Timeout").fill("-5");
    await page.getByRole("button", { name: "Deploy" }).click();
    await expect(settings.getByText(/timeout: must be a positive whole number/)).toBeVisible();
    await expect(page.getByTestId("deployed-hash")).toContainText("unsaved changes");

    await page.getByRole("tab", { name: "Test" }).click();
    await page.getByRole("button", { name: "Deploy" }).click();
    // The refused field's tab comes back by itself.
    await expect(settings.getByText(/timeout: must be a positive whole number/)).toBeVisible();
    await settings.getByLabel("Timeout").fill("30");
    await settings.getByLabel("Description").fill("Configured in the workbench");
    await tag.selectOption(allowed);
    await settings.getByLabel("Priority").fill("7");
    await settings.getByLabel("Concurrency limit").fill("3");
    await settings.getByLabel("Time window").fill("60");
    await settings.getByLabel("Retries").fill("2");
    await settings.getByLabel("Retry delay").fill("5");
    await page.getByRole("button", { name: "Deploy" }).click();
    await expect(page.getByText(`Deployed ${path}`)).toBeVisible();
    await expect(page.getByTestId("deployed-hash")).not.toContainText("unsaved changes");

    await page.reload();
    await page.getByRole("tab", { name: "Settings" }).click();
    await expect(settings.getByLabel("Timeout")).toHaveValue("30");
    await expect(settings.getByLabel("Description")).toHaveValue("Configured in the workbench");
    await expect(tag).toHaveValue(allowed);
    await expect(settings.getByLabel("Priority")).toHaveValue("7");
    await expect(settings.getByLabel("Concurrency limit")).toHaveValue("3");
    await expect(settings.getByLabel("Time window")).toHaveValue("60");
    await expect(settings.getByLabel("Retries")).toHaveValue("2");
    await expect(settings.getByLabel("Retry delay")).toHaveValue("5");
    const script = await (
      await request.get(`/api/w/${workspace}/scripts/get/p/${path}`, { headers: superadmin })
    ).json();
    expect(script.tag).toBe(allowed);
    expect(script.description).toBe("Configured in the workbench");
  } finally {
    await request.post("/api/settings/global/custom_tags", {
      headers: superadmin,
      data: { value: previous },
    });
  }
});

test("all five languages are offered and a postgresql script deploys", async ({ page, request }) => {
  const workspace = uniqueWorkspace("wblang");
  await createWorkspace(request, workspace);
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts/new`);
  const language = page.getByLabel("Language");
  await expect(language.locator("option")).toHaveText(["bun", "deno", "python3", "bash", "postgresql"]);
  await language.selectOption("postgresql");
  await expect(page.getByTestId("code-editor").locator(".view-lines")).toContainText("SELECT");
  await page.getByLabel("Path").fill(`u/${ADMIN}/hello_sql`);
  await page.getByRole("button", { name: "Deploy" }).click();
  await expect(page).toHaveURL(new RegExp(`/scripts/edit/u/${ADMIN}/hello_sql$`));
  await expect(page.getByTestId("deployed-hash")).toContainText(/[0-9a-f]{16}/);
  const script = await (
    await request.get(`/api/w/${workspace}/scripts/get/p/u/${ADMIN}/hello_sql`, { headers: superadmin })
  ).json();
  expect(script.language).toBe("postgresql");
});

test("Monaco knows windmill-client and the Bun and Deno globals", async ({ page, request }) => {
  const workspace = uniqueWorkspace("wbmonaco");
  await createWorkspace(request, workspace);
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts/new`);
  await page.getByLabel("Language").selectOption("bun");
  await setCode(
    page,
    [
      'import * as wmill from "windmill-client";',
      "export async function main() {",
      '  const value: string = await wmill.getVariable("u/someone/secret");',
      "  return { bun: Bun.version, value };",
      "}",
      'const wrong: number = "not a number";',
      "",
    ].join("\n"),
  );
  // Line 6 is wrong on purpose: its marker shows that the checks ran; nothing else is flagged.
  await expect
    .poll(() => errorMarkers(page), { timeout: 30_000 })
    .toEqual([expect.stringMatching(/^6: Type 'string' is not assignable to type 'number'/)]);

  await page.getByLabel("Language").selectOption("deno");
  await setCode(
    page,
    [
      'import * as wmill from "windmill-client";',
      "export async function main() {",
      '  const home = Deno.env.get("HOME");',
      '  return { home, deno: Deno.version.deno, v: await wmill.getVariable("u/x/y") };',
      "}",
      "const wrong: number = 'x';",
      "",
    ].join("\n"),
  );
  await expect
    .poll(() => errorMarkers(page), { timeout: 30_000 })
    .toEqual([expect.stringMatching(/^6: Type 'string' is not assignable to type 'number'/)]);
});

test("a customised argument (choices, description, default) is on the run form after deploy", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("wbargs");
  await createWorkspace(request, workspace);
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts/new`);
  await page.getByLabel("Language").selectOption("bash");
  await setCode(page, 'color="$1"\necho "color-$color"\n');
  await page.getByLabel("Path").fill(`u/${ADMIN}/colors`);
  await expect(page.getByTestId("args-form").locator('[name="color"]')).toBeVisible();

  await page.getByRole("tab", { name: "Arguments" }).click();
  const card = page.getByTestId("customize-color");
  await card.getByLabel("Description").fill("Pick a colour");
  await card.getByLabel("Choices").fill("red, green, blue");
  await card.getByLabel("Default").fill("green");
  await page.getByRole("button", { name: "Deploy" }).click();
  await expect(page).toHaveURL(new RegExp(`/scripts/edit/u/${ADMIN}/colors$`));
  await expect(page.getByTestId("deployed-hash")).toContainText(/[0-9a-f]{16}/);

  await page.reload();
  const form = page.getByTestId("args-form");
  const select = form.locator('select[name="color"]');
  await expect(select).toBeVisible();
  await expect(select.locator("option")).toContainText(["red", "green", "blue"]);
  await expect(select).toHaveValue("green");
  await expect(form).toContainText("Pick a colour");
  // Kept per version: the deployed schema has them, and a run outside the choices is refused.
  const script = await (
    await request.get(`/api/w/${workspace}/scripts/get/p/u/${ADMIN}/colors`, { headers: superadmin })
  ).json();
  expect(script.schema.properties.color.enum).toEqual(["red", "green", "blue"]);
  const refused = await request.post(`/api/w/${workspace}/jobs/run/p/u/${ADMIN}/colors`, {
    headers: superadmin,
    data: { color: "purple" },
  });
  expect(refused.status()).toBe(400);

  // The Test panel runs with the chosen value.
  await select.selectOption("blue");
  await page.getByTestId("workbench-test").click();
  await expect(page.getByTestId("workbench-result")).toContainText("color-blue");
});

test("layout: editor and test panel side by side when wide, stacked when narrow, no horizontal scroll", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("wblayout");
  await createWorkspace(request, workspace);
  await signIn(page);
  for (const width of [1440, 1024, 768]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`/w/${workspace}/scripts/new`);
    const editor = page.getByTestId("code-editor");
    const side = page.getByTestId("workbench-side");
    await expect(editor.locator(".monaco-editor")).toBeVisible();
    const e = (await editor.boundingBox())!;
    const s = (await side.boundingBox())!;
    expect(e.height, `editor height at ${width}`).toBeGreaterThanOrEqual(300);
    if (width >= 1024) expect(s.x, `side by side at ${width}`).toBeGreaterThan(e.x + e.width - 1);
    else expect(s.y, `stacked at ${width}`).toBeGreaterThanOrEqual(e.y + e.height - 1);
    const overflow = await page.evaluate(() => {
      const root = (
        globalThis as unknown as {
          document: { documentElement: { scrollWidth: number; clientWidth: number } };
        }
      ).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow, `horizontal scroll at ${width}`).toBeLessThanOrEqual(0);
  }
});
