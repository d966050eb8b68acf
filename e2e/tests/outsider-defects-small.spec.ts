// Issue 34, item 13: the smaller defects a new user met in Chromium at 1440×900, one test each
// (items 6 to 12 are in outsider-defects.spec.ts).
import { execFileSync } from "node:child_process";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { startTestS3 } from "@millrace/core/testing";
import { E2E_SUPERADMIN_SECRET } from "../instance.ts";
import {
  completedJob,
  createWorkspace,
  deployVersion,
  signIn,
  superadmin,
  uniqueWorkspace,
} from "./helpers.ts";

const ADMIN = "e2e_admin";

function bashStep(id: string, content: string) {
  return { id, value: { type: "rawscript", language: "bash", content, input_transforms: {} } };
}

async function createFlow(
  request: APIRequestContext,
  workspace: string,
  path: string,
  modules: unknown[],
): Promise<void> {
  const created = await request.post(`/api/w/${workspace}/flows/create`, {
    headers: superadmin,
    data: { path, summary: path, value: { modules } },
  });
  expect(created.status(), await created.text()).toBeLessThan(300);
}

test("item 13: the Path field is not red before anything is typed", async ({ page, request }) => {
  const workspace = uniqueWorkspace("out13path");
  await createWorkspace(request, workspace);
  await signIn(page);
  for (const url of [`/w/${workspace}/scripts/new`, `/w/${workspace}/flows/add`]) {
    await page.goto(url);
    const path = page.getByLabel("Path");
    await expect(path).toHaveValue(`u/${ADMIN}/`);
    await expect(page.getByTestId("path-hint")).toContainText(`a name after u/${ADMIN}/`);
    await expect(path).toHaveAttribute("aria-invalid", "false");
    await expect(page.getByTestId("path-error")).toHaveCount(0);
    await path.fill(`u/${ADMIN}/bad name`);
    await expect(page.getByTestId("path-error")).toContainText("letters, digits");
    await expect(path).toHaveAttribute("aria-invalid", "true");
  }
});

test("item 13: a skip-to-content link is the first Tab stop and reaches a list in a few more", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out13skip");
  await createWorkspace(request, workspace);
  for (const name of ["one", "two", "three"])
    await deployVersion(request, workspace, `u/${ADMIN}/${name}`, "bash", "echo");
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts`);
  await expect(page.getByTestId("script-row")).toHaveCount(3);
  await page.keyboard.press("Tab");
  const focused = page.locator(":focus");
  await expect(focused).toHaveText("Skip to content");
  await expect(focused).toBeVisible();
  await page.keyboard.press("Enter");
  let tabs = 0;
  while (tabs < 40 && (await focused.textContent()) !== `u/${ADMIN}/two`) {
    await page.keyboard.press("Tab");
    tabs++;
  }
  expect(tabs).toBeLessThanOrEqual(15);
});

test("item 13: the webhook example's curl works as shown, with $TOKEN set in the shell", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out13hook");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/hooked`;
  await deployVersion(request, workspace, path, "bash", 'echo "hooked-ok"');
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts/webhooks/${path}`);
  const example = (await page.getByTestId("curl-example").textContent()) ?? "";
  expect(example).toContain("$TOKEN");
  const output = execFileSync("bash", ["-c", example], {
    env: { PATH: process.env.PATH, TOKEN: E2E_SUPERADMIN_SECRET },
    encoding: "utf8",
  });
  expect(output).toContain("hooked-ok");
});

test("item 13: a flow tested from the editor is listed as an editor test, not a manual run", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out13ftest");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/tested`;
  await createFlow(request, workspace, path, [bashStep("only", "echo tested")]);
  await signIn(page);
  await page.goto(`/w/${workspace}/flows/edit/${path}`);
  await page.getByTestId("test-flow").click();
  await expect(page.getByTestId("flow-test").getByTestId("flow-run-status")).toHaveText("success", {
    timeout: 30_000,
  });
  await page.goto(`/w/${workspace}/runs`);
  const triggers = page.getByTestId("run-trigger");
  await expect(triggers.filter({ hasText: "editor test" }).first()).toBeVisible();
  await expect(triggers.filter({ hasText: /^manual$/ })).toHaveCount(0);
});

test("item 13: a deploy over a newer version says so in words and offers to view or overwrite it", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out13conflict");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/contested`;
  await deployVersion(request, workspace, path, "bash", "echo first", "first");
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts/edit/${path}`);
  await expect(page.getByTestId("deployed-hash")).toContainText(/[0-9a-f]{16}/);
  // Someone else deploys meanwhile.
  await deployVersion(request, workspace, path, "bash", "echo theirs", "theirs");
  await page.getByLabel("Summary").fill("mine");
  await page.getByRole("button", { name: "Deploy" }).click();
  const conflict = page.getByTestId("deploy-conflict");
  await expect(conflict).toContainText(`Another version of ${path} was deployed`);
  await expect(page.getByText("parent_hash")).toHaveCount(0);
  await expect(conflict.getByRole("link", { name: "View the latest version" })).toHaveAttribute(
    "href",
    `/w/${workspace}/scripts/get/${path}`,
  );
  await conflict.getByRole("button", { name: "Overwrite with my version" }).click();
  await expect(conflict).toHaveCount(0);
  await expect(page.getByTestId("deployed-hash")).not.toContainText("unsaved changes");
  const latest = await request.get(`/api/w/${workspace}/scripts/get/p/${path}`, { headers: superadmin });
  expect(((await latest.json()) as { summary: string }).summary).toBe("mine");
});

test("item 13: a boolean argument is a checkbox beside its name", async ({ page, request }) => {
  const workspace = uniqueWorkspace("out13bool");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/flagged`;
  await deployVersion(
    request,
    workspace,
    path,
    "python3",
    'def main(verbose: bool = False, name: str = "x"):\n    return name\n',
  );
  await signIn(page);
  await page.goto(`/w/${workspace}/scripts/get/${path}`);
  const form = page.getByRole("form", { name: `Run ${path}` });
  const box = await form.getByRole("switch", { name: "verbose" }).boundingBox();
  const name = await form.locator('[data-arg="verbose"] label span').first().boundingBox();
  expect(box && name).toBeTruthy();
  expect(box!.x + box!.width).toBeLessThanOrEqual(name!.x);
  expect(Math.abs(box!.y + box!.height / 2 - (name!.y + name!.height / 2))).toBeLessThan(6);
});

test("item 13: the home's Queue and workers card shows each tag's live workers, even with an empty queue", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out13home");
  await createWorkspace(request, workspace);
  await signIn(page);
  await page.goto(`/w/${workspace}`);
  const card = page.getByRole("region", { name: "Queue and workers" });
  const bash = card.locator("tr").filter({ has: page.locator("code", { hasText: /^bash$/ }) });
  await expect(bash).toContainText(/serving/);
});

test("item 13: a long flow's run graph keeps readable labels and starts at its first step", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out13graph");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/long`;
  await createFlow(
    request,
    workspace,
    path,
    Array.from({ length: 20 }, (_, i) => bashStep(`s${i + 1}`, `echo ${i + 1}`)),
  );
  const id = await (
    await request.post(`/api/w/${workspace}/jobs/run/f/${path}`, { headers: superadmin, data: {} })
  ).text();
  await completedJob(request, workspace, id);
  await signIn(page);
  await page.goto(`/w/${workspace}/runs/${id}`);
  const graph = page.getByTestId("flow-run-view").getByTestId("flow-graph");
  const first = graph.getByTestId("flow-node").and(page.locator('[data-step="s1"]'));
  await expect(first).toHaveAttribute("data-status", "success");
  const scale = async () => {
    const transform = await graph
      .locator(".react-flow__viewport")
      .evaluate((element) => (element as unknown as { style: { transform: string } }).style.transform);
    return Number(/scale\(([\d.]+)\)/.exec(transform)?.[1] ?? 0);
  };
  await expect.poll(scale).toBeGreaterThanOrEqual(0.79);
  const area = await graph.boundingBox();
  const node = await first.boundingBox();
  expect(node!.y).toBeGreaterThanOrEqual(area!.y);
  expect(node!.y + node!.height).toBeLessThanOrEqual(area!.y + area!.height);
});

test("item 13: a run's arguments are listed in the signature's order", async ({ page, request }) => {
  const workspace = uniqueWorkspace("out13args");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/ordered`;
  await deployVersion(
    request,
    workspace,
    path,
    "bash",
    'zeta="$1"\nalpha="$2"\nmid="$3"\necho "$zeta $alpha $mid"',
  );
  const id = await (
    await request.post(`/api/w/${workspace}/jobs/run/p/${path}`, {
      headers: superadmin,
      data: { zeta: "z", alpha: "a", mid: "m" },
    })
  ).text();
  await completedJob(request, workspace, id);
  await signIn(page);
  await page.goto(`/w/${workspace}/runs/${id}`);
  const args = page.getByTestId("job-args");
  await expect(args).toContainText("zeta");
  const text = (await args.textContent()) ?? "";
  const at = ["zeta", "alpha", "mid"].map((key) => text.indexOf(`${key}:`));
  expect(at.every((index) => index >= 0)).toBe(true);
  expect(at).toEqual([...at].sort((a, b) => a - b));
});

test("item 13: the YAML view reads the same after a save as before it", async ({ page, request }) => {
  const workspace = uniqueWorkspace("out13yaml");
  await createWorkspace(request, workspace);
  await signIn(page);
  await page.goto(`/w/${workspace}/flows/add`);
  await page.getByLabel("Path").fill(`u/${ADMIN}/kept_order`);
  await page.getByTestId("add-step").click();
  await page.getByRole("menuitem", { name: "Inline script: bash", exact: true }).click();
  const yamlText = async () => {
    await page.getByRole("tab", { name: "YAML" }).click();
    await expect(page.getByTestId("yaml-editor").locator(".monaco-editor")).toBeVisible();
    await expect.poll(() => page.evaluate(() => "monaco" in globalThis)).toBe(true);
    const text = await page.evaluate(() => {
      const models = (
        globalThis as unknown as {
          monaco: { editor: { getModels(): { uri: { toString(): string }; getValue(): string }[] } };
        }
      ).monaco.editor
        .getModels()
        .filter((m) => m.uri.toString().startsWith("file:///flow.yaml"));
      return models[models.length - 1]?.getValue() ?? "";
    });
    await page.getByRole("tab", { name: "Graph" }).click();
    return text;
  };
  const before = await yamlText();
  expect(before).toContain("id: a");
  await page.getByTestId("deploy-flow").click();
  await expect(page).toHaveURL(new RegExp(`/flows/edit/u/${ADMIN}/kept_order$`));
  await expect(page.getByTestId("flow-version")).toBeVisible();
  expect(await yamlText()).toBe(before);
});

test("item 13: expression completion lists every suggestion with its label, none clipped", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out13complete");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/completed`;
  const created = await request.post(`/api/w/${workspace}/flows/create`, {
    headers: superadmin,
    data: {
      path,
      summary: path,
      schema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { name: { type: "string" }, count: { type: "number" }, verbose: { type: "boolean" } },
        required: [],
      },
      value: { modules: [bashStep("a", "echo first"), bashStep("b", 'x="$1"\necho "$x"')] },
    },
  });
  expect(created.status(), await created.text()).toBeLessThan(300);
  await signIn(page);
  await page.goto(`/w/${workspace}/flows/edit/${path}`);
  await page.getByTestId("flow-node").and(page.locator('[data-step="b"]')).getByRole("button").click();
  const panel = page.getByTestId("step-panel");
  await panel.getByRole("tab", { name: "Inputs" }).click();
  const field = panel.getByTestId("input-x");
  await field.getByRole("radio", { name: "Expression" }).check();
  await expect(field.getByTestId("expression-editor")).toHaveAttribute("data-editor-ready", "true");
  const editor = field.getByTestId("expression-editor").locator(".monaco-editor");
  await expect(editor).toBeVisible();

  const rows = page.locator(".suggest-widget.visible .monaco-list-row");
  const expectRows = async (typed: string, labels: string[]) => {
    await editor.click();
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.press("Backspace");
    await page.keyboard.type(typed);
    await expect(rows.first()).toBeVisible();
    // Each row's label as drawn: its text, and whether the label sits inside its row and is the
    // topmost element at its centre (a blank row had its label pushed out of it, or clipped).
    const drawn = () =>
      rows.evaluateAll((elements) =>
        elements.map((row) => {
          const label = row.querySelector(".label-name");
          const box = label?.getBoundingClientRect();
          const rowBox = row.getBoundingClientRect();
          const x = box ? box.left + box.width / 2 : -1;
          const y = box ? box.top + box.height / 2 : -1;
          const top = row.ownerDocument.elementFromPoint(x, y);
          const inside = x > rowBox.left && x < rowBox.right && y > rowBox.top && y < rowBox.bottom;
          return { text: label?.textContent?.trim() ?? "", shown: inside && !!top && !!label?.contains(top) };
        }),
      );
    // The JavaScript service may add words of the expression itself; ours must all be there.
    await expect
      .poll(async () => (await drawn()).map((row) => row.text))
      .toEqual(expect.arrayContaining(labels));
    const seen = await drawn();
    expect(seen.filter((row) => row.text === "" || !row.shown)).toEqual([]);
    await page.keyboard.press("Escape");
  };
  await expectRows("flow_input.", ["name", "count", "verbose"]);
  await expectRows("results.", ["a"]);
});

test("item 13: a result table's columns are in the order the script wrote them", async ({
  page,
  request,
}) => {
  const workspace = uniqueWorkspace("out13table");
  await createWorkspace(request, workspace);
  const path = `u/${ADMIN}/table`;
  await deployVersion(
    request,
    workspace,
    path,
    "python3",
    "def main():\n    return [{'zeta': 1, 'alpha': 2, 'mid': 3}, {'zeta': 4, 'alpha': 5, 'mid': 6}]\n",
  );
  const run = await request.post(`/api/w/${workspace}/jobs/run/p/${path}`, { headers: superadmin, data: {} });
  expect(run.status(), await run.text()).toBeLessThan(300);
  const id = await run.text();
  await completedJob(request, workspace, id);
  await signIn(page);
  await page.goto(`/w/${workspace}/runs/${id}`);
  const headers = page.getByTestId("result-table").locator("thead th");
  await expect(headers).toHaveText(["zeta", "alpha", "mid"]);
});

test("item 13: Test connection tests the object storage as entered, before it is saved", async ({
  page,
  request,
}) => {
  const s3 = await startTestS3("out13-unsaved");
  try {
    const workspace = uniqueWorkspace("out13s3");
    await createWorkspace(request, workspace);
    for (const [name, accessKey] of [
      ["files", s3.accessKey],
      ["wrong_key", "NOT-THE-KEY"],
    ]) {
      const created = await request.post(`/api/w/${workspace}/resources/create`, {
        headers: superadmin,
        data: {
          path: `u/${ADMIN}/${name}`,
          resource_type: "s3",
          value: {
            bucket: s3.bucket,
            region: "us-east-1",
            endPoint: s3.endpoint,
            useSSL: false,
            pathStyle: true,
            accessKey,
            secretKey: s3.secretKey,
          },
        },
      });
      expect(created.status(), await created.text()).toBeLessThan(300);
    }
    await signIn(page);
    await page.goto(`/w/${workspace}/object-storage`);
    const form = page.getByRole("form", { name: "Object storage settings" });
    const resource = form.getByRole("combobox", { name: "S3 resource", exact: true });
    const testButton = form.getByRole("button", { name: "Test connection" });
    const result = form.getByTestId("test-result");

    await resource.selectOption(`u/${ADMIN}/files`);
    await testButton.click();
    await expect(result).toContainText(`Connection works: a test object was written to ${s3.bucket}`);
    // The answer was about the settings tested: once they change, it goes.
    await resource.selectOption(`u/${ADMIN}/wrong_key`);
    await expect(result).toHaveCount(0);
    await testButton.click();
    await expect(result).toContainText("InvalidAccessKeyId");
    // Nothing was saved by testing.
    const settings = await request.get(`/api/w/${workspace}/workspaces/get_settings`, {
      headers: superadmin,
    });
    expect(((await settings.json()) as { large_file_storage?: unknown }).large_file_storage).toBeUndefined();
  } finally {
    await s3.close();
  }
});
