import { expect, test, type Page } from "@playwright/test";
import YAML from "yaml";
import { E2E_ADMIN } from "../instance.ts";
import { addMember, createAccount } from "../fixtures/people.ts";
import { createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";
import { modelValue, setModel } from "./monaco.ts";

// Issue 22, items 5 and 6: a flow built in the browser's editor (a step, a branch, a loop),
// tested step by step and as a whole, deployed, run from its form and watched turning green on
// the run page; reopened exactly as saved; the YAML view; errors beside their step; roles.

const ADMIN = "e2e_admin";

async function signIn(page: Page, email = E2E_ADMIN.email, password = E2E_ADMIN.password): Promise<void> {
  page.on("dialog", (dialog) => void (dialog.type() === "beforeunload" ? dialog.accept() : dialog.dismiss()));
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/workspaces/);
}

async function addStep(page: Page, item: string, testId = "add-step"): Promise<void> {
  await page.getByTestId(testId).click();
  await page.getByRole("menuitem", { name: item, exact: true }).click();
}

function node(page: Page, step: string) {
  return page.getByTestId("flow-node").and(page.locator(`[data-step="${step}"]`));
}

async function selectNode(page: Page, step: string): Promise<void> {
  await node(page, step).getByRole("button").click();
  await expect(page.getByTestId("step-panel")).toContainText(`Step ${step}`);
}

/** The selected step's code (inline script), and one input given as an expression. */
async function codeAndInput(page: Page, code: string, input: string, expr: string): Promise<void> {
  const panel = page.getByTestId("step-panel");
  await expect(panel.getByTestId("code-editor").locator(".monaco-editor")).toBeVisible();
  await setModel(page, "file:///main.sh", code);
  await panel.getByRole("tab", { name: "Inputs" }).click();
  const field = panel.getByTestId(`input-${input}`);
  await expect(field).toBeVisible();
  await field.getByRole("radio", { name: "Expression" }).check();
  await expect(field.getByTestId("expression-editor").locator(".monaco-editor")).toBeVisible();
  await setModel(page, "file:///expressions/", expr);
  await panel.getByRole("tab", { name: "Step", exact: true }).click();
}

test("build a flow with a branch and a loop, test it, deploy it, run it from its form and reopen it as saved", async ({
  page,
  request,
}) => {
  test.setTimeout(180_000);
  const workspace = uniqueWorkspace("flowed");
  await createWorkspace(request, workspace);
  await signIn(page);

  await page.goto(`/w/${workspace}/flows`);
  await expect(page.getByTestId("flows-empty")).toBeVisible();
  await page.getByRole("link", { name: "New flow" }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/flows/add$`));
  const path = `u/${ADMIN}/three_steps`;
  await page.locator('input[name="path"]').fill(path);
  await page.locator('input[name="summary"]').fill("Greet, branch and loop");

  // The flow's input: name (default world).
  await page.getByTestId("flow-node-input").getByRole("button").click();
  await page.getByLabel("New input name").fill("name");
  await page.getByTestId("add-input").click();
  await page.locator('input[name="schema-name-default"]').fill("world");

  // a: an inline bash step reading flow_input.name (typed, with completion of flow_input.).
  await addStep(page, "Inline script: bash");
  await expect(node(page, "a")).toBeVisible();
  await expect(page.getByTestId("step-panel")).toContainText("Step a");
  await setModel(page, "file:///main.sh", 'name="$1"\necho "hello-$name"\n');
  const panel = page.getByTestId("step-panel");
  await panel.getByRole("tab", { name: "Inputs" }).click();
  const nameInput = panel.getByTestId("input-name");
  await expect(nameInput).toBeVisible();
  await nameInput.getByRole("radio", { name: "Expression" }).check();
  const expression = nameInput.getByTestId("expression-editor").locator(".monaco-editor");
  await expect(expression).toBeVisible();
  await setModel(page, "file:///expressions/", "");
  await expression.click();
  await page.keyboard.type("flow_input.");
  await expect(page.locator(".suggest-widget")).toContainText("name");
  await page.keyboard.press("Escape");
  await page.keyboard.type("name");
  await expect.poll(() => modelValue(page, "file:///expressions/")).toBe("flow_input.name");

  // Test this step alone: its input evaluated from the test input, its result kept for previews.
  await panel.getByRole("tab", { name: "Test" }).click();
  await panel.getByTestId("test-step").click();
  await expect(panel.getByTestId("test-step-run").getByTestId("job-status")).toHaveText("success");
  await expect(panel.getByTestId("test-step-run")).toContainText("hello-world");
  await panel.getByRole("tab", { name: "Inputs" }).click();
  await expect(panel.getByTestId("input-preview-name")).toContainText('"world"');

  // b: a branch; its first branch gets an inline step c reading results.a.
  await addStep(page, "Branch to one");
  await expect(node(page, "b")).toBeVisible();
  await page.getByRole("button", { name: "Branch 1: empty, select to add a step here" }).click();
  await addStep(page, "Inline script: bash", "add-to-lane");
  await expect(node(page, "c")).toBeVisible();
  await codeAndInput(page, 'r="$1"\necho "branch-$r"\n', "r", "results.a");

  // d: a for loop after b, over [1, 2, 3], whose body e echoes each item.
  await selectNode(page, "b");
  await addStep(page, "For loop");
  await expect(node(page, "d")).toBeVisible();
  await page.getByRole("button", { name: "Loop body: empty, select to add a step here" }).click();
  await addStep(page, "Inline script: bash", "add-to-lane");
  await expect(node(page, "e")).toBeVisible();
  await codeAndInput(page, 'i="$1"\necho "item-$i"\n', "i", "flow_input.iter.value");
  // A step inside a loop is tested with an iteration value of one's choosing.
  await panel.getByRole("tab", { name: "Test" }).click();
  await panel.getByLabel("Iteration value").fill('"q"');
  await panel.getByTestId("test-step").click();
  await expect(panel.getByTestId("test-step-run").getByTestId("job-status")).toHaveText("success");
  await expect(panel.getByTestId("test-step-run")).toContainText("item-q");
  await panel.getByRole("tab", { name: "Step", exact: true }).click();

  // Reorder: move the branch b above a and back (the graph follows).
  await selectNode(page, "b");
  await page.getByRole("button", { name: "Move step up" }).click();
  await page.getByRole("button", { name: "Move step down" }).click();

  // Test the whole flow: every step turns green, the result is the loop's list.
  await page.getByTestId("test-flow").click();
  const tester = page.getByTestId("flow-test");
  await expect(tester.getByTestId("flow-run-status")).toHaveText("success", { timeout: 30_000 });
  for (const step of ["a", "b", "c", "d", "e"]) {
    await expect(node(page, step)).toHaveAttribute("data-status", "success");
  }
  await expect(tester.getByTestId("flow-run-result")).toContainText("item-3");

  // The YAML view shows the same flow; what it says is what gets deployed.
  await page.getByRole("tab", { name: "YAML" }).click();
  await expect(page.getByTestId("yaml-editor").locator(".monaco-editor")).toBeVisible();
  const yamlBefore = await modelValue(page, "file:///flow.yaml");
  expect(yamlBefore).toContain("summary: Greet, branch and loop");
  expect(yamlBefore).toContain("expr: results.a");
  await page.getByRole("tab", { name: "Graph" }).click();

  await page.getByTestId("deploy-flow").click();
  await expect(page).toHaveURL(new RegExp(`/flows/edit/${path}$`));
  await expect(page.getByTestId("flow-version")).toBeVisible();
  await expect(page.getByTestId("flow-version")).not.toContainText("unsaved");

  // Run it from the flow page's form and watch the steps turn green on the run page.
  await page.goto(`/w/${workspace}/flows/get/${path}`);
  await expect(page.getByRole("heading", { name: path, level: 1 })).toBeVisible();
  const form = page.getByTestId("flow-run");
  await form.getByLabel("name").fill("millrace");
  await form.getByTestId("run-flow").click();
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));
  await expect(page.getByTestId("job-status").first()).toHaveText("success", { timeout: 30_000 });
  const run = page.getByTestId("flow-run-view");
  for (const step of ["a", "b", "c", "d", "e"]) {
    await expect(run.getByTestId("flow-node").and(page.locator(`[data-step="${step}"]`))).toHaveAttribute(
      "data-status",
      "success",
    );
  }
  // A step's arguments, logs and result; the loop body's iterations one by one.
  await run.getByTestId("flow-node").and(page.locator('[data-step="a"]')).getByRole("button").click();
  await expect(run.getByTestId("flow-step-job")).toContainText("hello-millrace");
  await run.getByTestId("flow-node").and(page.locator('[data-step="e"]')).getByRole("button").click();
  const runs = run.getByRole("group", { name: "Runs of this step" });
  await runs.getByRole("combobox").selectOption({ index: 0 });
  await expect(run.getByTestId("flow-step-job")).toContainText("item-1");
  await runs.getByRole("button", { name: "Next run of this step" }).click();
  await expect(run.getByTestId("flow-step-job")).toContainText("item-2");

  // Reopen the editor: the flow is exactly as saved.
  await page.goto(`/w/${workspace}/flows/edit/${path}`);
  await expect(page.getByTestId("flow-version")).toBeVisible();
  for (const step of ["a", "b", "c", "d", "e"]) await expect(node(page, step)).toBeVisible();
  await page.getByRole("tab", { name: "YAML" }).click();
  await expect(page.getByTestId("yaml-editor").locator(".monaco-editor")).toBeVisible();
  // The same document (jsonb keeps no key order, so compared parsed).
  await expect
    .poll(async () => YAML.parse(await modelValue(page, "file:///flow.yaml")))
    .toEqual(YAML.parse(yamlBefore));
  const stored = await (
    await request.get(`/api/w/${workspace}/flows/get/${path}`, { headers: superadmin })
  ).json();
  expect(stored.value.modules.map((m: { id: string }) => m.id)).toEqual(["a", "b", "d"]);
  expect(stored.value.modules[1].value.branches[0].modules[0].value.input_transforms.r).toEqual({
    type: "javascript",
    expr: "results.a",
  });
  expect(stored.schema.properties.name.default).toBe("world");
});

test("the YAML view edits the same flow; a refused deploy names its step beside it", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("flowyaml");
  await createWorkspace(request, workspace);
  await signIn(page);
  await page.goto(`/w/${workspace}/flows/add`);
  await page.locator('input[name="path"]').fill(`u/${ADMIN}/bad_ref`);
  await page.getByRole("tab", { name: "YAML" }).click();
  await expect(page.getByTestId("yaml-editor").locator(".monaco-editor")).toBeVisible();
  await setModel(page, "file:///flow.yaml", "summary: [unclosed\n");
  await expect(page.getByTestId("yaml-error")).toBeVisible();
  await setModel(
    page,
    "file:///flow.yaml",
    [
      "summary: From YAML",
      "value:",
      "  modules:",
      "    - id: first",
      "      value:",
      "        type: identity",
      "    - id: second",
      "      value:",
      "        type: rawscript",
      "        language: bash",
      '        content: |\n          x="$1"\n          echo "$x"',
      "        input_transforms:",
      "          x:",
      "            type: javascript",
      "            expr: results.nope",
      "",
    ].join("\n"),
  );
  await expect(page.getByTestId("yaml-error")).toHaveCount(0);
  await expect(page.locator('input[name="summary"]')).toHaveValue("From YAML");
  await page.getByRole("tab", { name: "Graph" }).click();
  await expect(node(page, "first")).toBeVisible();
  await expect(node(page, "second")).toBeVisible();

  await page.getByTestId("deploy-flow").click();
  await expect(page.getByTestId("step-error")).toContainText("results.nope");
  await expect(page.getByTestId("step-panel")).toContainText("Step second");
  await expect(node(page, "second").getByRole("button")).toHaveAccessibleName(/has an error/);
  // Nothing was stored.
  const exists = await request.get(`/api/w/${workspace}/flows/exists/u/${ADMIN}/bad_ref`, {
    headers: superadmin,
  });
  expect(await exists.json()).toBe(false);
});

test("an operator gets the flow page, never the editor", async ({ page, request }) => {
  const workspace = uniqueWorkspace("flowrole");
  await createWorkspace(request, workspace);
  const operator = await createAccount(request, "flow-op");
  await addMember(request, workspace, operator.email, "operator");
  const path = "f/shared/identity_flow";
  const folder = await request.post(`/api/w/${workspace}/folders/create`, {
    headers: superadmin,
    data: { name: "shared", summary: "", extra_perms: { "g/all": false } },
  });
  expect(folder.status(), await folder.text()).toBeLessThan(300);
  const created = await request.post(`/api/w/${workspace}/flows/create`, {
    headers: superadmin,
    data: { path, summary: "Identity", value: { modules: [{ id: "a", value: { type: "identity" } }] } },
  });
  expect(created.status(), await created.text()).toBeLessThan(300);

  await signIn(page, operator.email, operator.password);
  await page.goto(`/w/${workspace}/flows`);
  await expect(page.getByRole("heading", { name: "Flows", level: 1 })).toBeVisible();
  await expect(page.getByRole("link", { name: "New flow" })).toHaveCount(0);
  await expect(page.getByRole("link", { name: path, exact: true })).toBeVisible();
  // The command palette finds the flow and opens its page.
  await page.keyboard.press("Control+k");
  const palette = page.getByTestId("command-palette");
  await expect(palette.locator("[cmdk-root]")).toHaveAttribute("data-loaded", "true");
  await palette.getByRole("combobox").fill("identity_flow");
  await palette.getByRole("option", { name: /f\/shared\/identity_flow/ }).click();
  await expect(page).toHaveURL(new RegExp(`/flows/get/${path}$`));
  await expect(page.getByTestId("flow-run")).toBeVisible();
  await page.goto(`/w/${workspace}/flows/add`);
  await expect(page.getByTestId("read-only-note")).toBeVisible();
  await expect(page.getByTestId("deploy-flow")).toHaveCount(0);
  await page.goto(`/w/${workspace}/flows/edit/${path}`);
  await expect(page).toHaveURL(new RegExp(`/flows/get/${path}$`));
  await expect(page.getByRole("button", { name: "Delete" })).toHaveCount(0);
  await expect(page.getByRole("link", { name: "Edit" })).toHaveCount(0);
});

test("a sub-flow step: picked by path, its inputs from the sub-flow's schema, tested and deployed", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("flowsub");
  await createWorkspace(request, workspace);
  const child = `u/${ADMIN}/child`;
  const created = await request.post(`/api/w/${workspace}/flows/create`, {
    headers: superadmin,
    data: {
      path: child,
      summary: "child",
      value: { modules: [{ id: "only", value: { type: "identity" } }] },
      schema: { type: "object", properties: { x: { type: "string" } }, required: [], order: ["x"] },
    },
  });
  expect(created.status(), await created.text()).toBeLessThan(300);
  await signIn(page);
  await page.goto(`/w/${workspace}/flows/add`);
  await page.locator('input[name="path"]').fill(`u/${ADMIN}/parent`);
  await addStep(page, "Sub-flow");
  const panel = page.getByTestId("step-panel");
  await panel.getByLabel("Flow path").fill(child);
  await panel.getByRole("tab", { name: "Inputs" }).click();
  await expect(panel.getByTestId("input-x")).toBeVisible();
  await page.getByTestId("test-flow").click();
  await expect(page.getByTestId("flow-test").getByTestId("flow-run-status")).toHaveText("success", {
    timeout: 30_000,
  });
  await page.getByTestId("deploy-flow").click();
  await expect(page).toHaveURL(new RegExp(`/flows/edit/u/${ADMIN}/parent$`));
});
