import AxeBuilder from "@axe-core/playwright";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { addMember, createAccount } from "../fixtures/people.ts";
import { completedJob, createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

// Issue 21, item 4: the run page renders a result by its shape, shows errors readably, shows the
// logs with their times and follows them, and runs a job again (as it was, or edited first).

const workspace = uniqueWorkspace("runresults");
// A 1×1 red PNG.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

const SCRIPTS = {
  table: {
    path: "u/admin/table",
    language: "bun",
    content:
      "export async function main() {\n  return Array.from({ length: 25 }, (_, i) => ({ id: i + 1, name: `row-${i + 1}`, tags: [i] }));\n}\n",
  },
  png: {
    path: "u/admin/png",
    language: "bun",
    content: `export async function main() {\n  return { png: "${PNG}" };\n}\n`,
  },
  svg: {
    path: "u/admin/svg",
    language: "bun",
    content:
      'export async function main() {\n  return { svg: \'<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><rect width="20" height="10" fill="blue"/></svg>\' };\n}\n',
  },
  tree: {
    path: "u/admin/tree",
    language: "bun",
    content:
      'export async function main() {\n  return { outer: { inner: { deepest: "found-me" } }, list: [1, 2] };\n}\n',
  },
  bunThrow: {
    path: "u/admin/bun_throw",
    language: "bun",
    content:
      'function deeper() {\n  throw new TypeError("bun went wrong");\n}\nexport async function main() {\n  deeper();\n}\n',
  },
  pyRaise: {
    path: "u/admin/py_raise",
    language: "python3",
    content: 'def deeper():\n    raise ValueError("python went wrong")\n\n\ndef main():\n    deeper()\n',
  },
  slow: {
    path: "u/admin/slow_lines",
    language: "bash",
    content: "for i in 1 2 3 4; do echo tick-$i; sleep 0.6; done\necho all-done\n",
  },
  many: {
    path: "u/admin/many_lines",
    language: "bash",
    content:
      "for i in $(seq 1 80); do echo early-$i; done\nfor j in $(seq 1 12); do sleep 0.5; for i in $(seq 1 5); do echo late-$j-$i; done; done\necho finished\n",
  },
  greet: {
    path: "u/admin/greet",
    language: "bash",
    content: 'who="$1"\ntimes="$2"\necho "hello $who x$times"\n',
  },
};

async function signIn(page: Page, email = E2E_ADMIN.email, password = E2E_ADMIN.password): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
}

async function run(
  request: APIRequestContext,
  path: string,
  args: Record<string, unknown> = {},
): Promise<string> {
  const response = await request.post(`/api/w/${workspace}/jobs/run/p/${path}`, {
    headers: superadmin,
    data: args,
  });
  expect(response.status(), await response.text()).toBe(201);
  return response.text();
}

/** Runs the script, waits for it and opens its run page. */
async function openFinished(page: Page, request: APIRequestContext, path: string): Promise<string> {
  const id = await run(request, path);
  await completedJob(request, workspace, id);
  await page.goto(`/w/${workspace}/runs/${id}`);
  await expect(page.getByTestId("job-status")).not.toHaveText(/queued|running/);
  return id;
}

test.describe("run results", () => {
  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    for (const script of Object.values(SCRIPTS)) {
      const created = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: superadmin,
        data: { ...script, summary: "" },
      });
      expect(created.status(), await created.text()).toBe(201);
    }
  });

  test("a list of objects is a table: columns from the keys, the first rows, then all", async ({
    page,
    request,
  }) => {
    await signIn(page);
    await openFinished(page, request, SCRIPTS.table.path);
    const table = page.getByTestId("result-table");
    await expect(table.locator("thead th")).toHaveText(["id", "name", "tags"]);
    await expect(table.locator("tbody tr")).toHaveCount(20);
    await expect(table.locator("tbody tr").first()).toContainText("row-1");
    await expect(page.getByTestId("result-table-count")).toHaveText("First 20 of 25 rows");
    await page.getByRole("button", { name: "Show all 25 rows" }).click();
    await expect(table.locator("tbody tr")).toHaveCount(25);
    await expect(table.locator("tbody tr").last()).toContainText("row-25");
    // Raw JSON shows the value as text.
    await page.getByRole("button", { name: "Raw JSON" }).click();
    await expect(page.getByTestId("job-result")).toContainText('"name": "row-25"');
  });

  test("png and svg results are images", async ({ page, request }) => {
    await signIn(page);
    for (const [script, mime] of [
      [SCRIPTS.png, "image/png"],
      [SCRIPTS.svg, "image/svg+xml"],
    ] as const) {
      await openFinished(page, request, script.path);
      const image = page.getByTestId("result-image");
      await expect(image).toBeVisible();
      await expect(image).toHaveAttribute("src", new RegExp(`^data:${mime.replace("+", "\\+")}`));
      // The browser decoded it.
      await expect
        .poll(() => image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
        .toBeGreaterThan(0);
    }
  });

  test("other values are a JSON tree that collapses and expands", async ({ page, request }) => {
    await signIn(page);
    await openFinished(page, request, SCRIPTS.tree.path);
    const result = page.getByTestId("job-result");
    // Two levels open: `inner` is closed, its content hidden.
    const inner = result.getByRole("button", { name: /inner/ });
    await expect(inner).toHaveAttribute("aria-expanded", "false");
    await expect(result).not.toContainText("found-me");
    await inner.click();
    await expect(result).toContainText('"found-me"');
    const outer = result.getByRole("button", { name: /outer/ });
    await outer.click();
    await expect(outer).toHaveAttribute("aria-expanded", "false");
    await expect(result).not.toContainText("found-me");
    await expect(result).toContainText("[ 2 items ]");
  });

  test("a bun throw shows its name, message and a readable multi-line stack", async ({ page, request }) => {
    await signIn(page);
    await openFinished(page, request, SCRIPTS.bunThrow.path);
    await expect(page.getByTestId("job-status")).toHaveText("failure");
    await expect(page.getByTestId("job-error-name")).toHaveText("TypeError");
    await expect(page.getByTestId("job-error-message")).toHaveText("bun went wrong");
    const stack = (await page.getByTestId("job-error-stack").innerText()).trim();
    expect(stack).not.toContain("\\n");
    expect(stack.split("\n").length).toBeGreaterThan(1);
    expect(stack).toContain("deeper");
  });

  test("a python raise shows its name, message and the traceback", async ({ page, request }) => {
    await signIn(page);
    await openFinished(page, request, SCRIPTS.pyRaise.path);
    await expect(page.getByTestId("job-status")).toHaveText("failure");
    await expect(page.getByTestId("job-error-name")).toHaveText("ValueError");
    await expect(page.getByTestId("job-error-message")).toHaveText("python went wrong");
    const stack = (await page.getByTestId("job-error-stack").innerText()).trim();
    expect(stack).not.toContain("\\n");
    expect(stack.split("\n").length).toBeGreaterThan(2);
    expect(stack).toContain("Traceback");
    expect(stack).toContain("deeper");
  });

  test("logs show the time of each piece of output", async ({ page, request }) => {
    await signIn(page);
    const id = await run(request, SCRIPTS.slow.path);
    await page.goto(`/w/${workspace}/runs/${id}`);
    await expect(page.getByTestId("job-status")).toHaveText("success");
    const times = page.getByTestId("job-logs").getByTestId("log-time");
    // Lines printed over ~2.4 s arrive in several pieces, each with its time.
    await expect.poll(() => times.count()).toBeGreaterThan(1);
    for (const text of await times.allTextContents()) expect(text).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3}$/);
    // The log text itself is unchanged (the REST API's text has no times).
    const api = await (
      await request.get(`/api/w/${workspace}/jobs_u/getupdate/${id}?log_offset=0`, { headers: superadmin })
    ).json();
    expect(api.new_logs).not.toMatch(/\d{2}:\d{2}:\d{2}\.\d{3}/);
    expect(api.new_logs).toContain("tick-1\n");
  });

  test("logs follow the output until the reader scrolls up", async ({ page, request }) => {
    await signIn(page);
    const id = await run(request, SCRIPTS.many.path);
    await page.goto(`/w/${workspace}/runs/${id}`);
    const logs = page.getByTestId("job-logs");
    await expect(logs).toContainText("late-2-1");
    await expect(page.getByTestId("log-following")).toBeVisible();
    const position = () =>
      logs.evaluate((element) => {
        const box = element as unknown as { scrollTop: number; scrollHeight: number; clientHeight: number };
        return { top: box.scrollTop, gap: box.scrollHeight - box.scrollTop - box.clientHeight };
      });
    // Following: at the bottom as lines arrive.
    await expect.poll(async () => (await position()).gap).toBeLessThan(15);
    await expect(logs).toContainText("late-3-1");
    await expect.poll(async () => (await position()).gap).toBeLessThan(15);

    // Scrolled up: the view stays where the reader is while more lines arrive.
    await logs.evaluate((element) => {
      const box = element as unknown as { scrollTop: number; dispatchEvent(e: unknown): boolean };
      box.scrollTop = 0;
    });
    await expect(page.getByTestId("log-paused")).toBeVisible();
    await expect(logs).toContainText("late-6-1");
    expect((await position()).top).toBe(0);

    // "Jump to latest" follows again.
    await page.getByRole("button", { name: "Jump to latest" }).click();
    await expect(page.getByTestId("log-following")).toBeVisible();
    await expect(logs).toContainText("late-8-1");
    await expect.poll(async () => (await position()).gap).toBeLessThan(15);
    await expect(page.getByTestId("job-status")).toHaveText("success", { timeout: 20_000 });
  });

  test("Run again runs the script with the same arguments; Edit and run with changed ones", async ({
    page,
    request,
  }) => {
    await signIn(page);
    const first = await run(request, SCRIPTS.greet.path, { who: "ada", times: "2" });
    await completedJob(request, workspace, first);
    await page.goto(`/w/${workspace}/runs/${first}`);
    await expect(page.getByText(`Runs the latest deployed version of ${SCRIPTS.greet.path}`)).toBeVisible();
    await page.getByRole("button", { name: "Run again" }).click();
    await expect(page).not.toHaveURL(new RegExp(`/runs/${first}$`));
    await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));
    const second = page.url().split("/").at(-1) as string;
    const again = await completedJob(request, workspace, second);
    expect(again.args).toEqual({ who: "ada", times: "2" });
    expect(again.script_path).toBe(SCRIPTS.greet.path);
    await expect(page.getByTestId("job-logs")).toContainText("hello ada x2");

    await page.getByRole("button", { name: "Edit and run" }).click();
    const form = page.getByTestId("edit-and-run");
    const who = form.locator('input[name="who"]');
    await expect(who).toHaveValue("ada");
    await who.fill("grace");
    await form.getByRole("button", { name: "Run", exact: true }).click();
    await expect(page).not.toHaveURL(new RegExp(`/runs/${second}$`));
    const third = page.url().split("/").at(-1) as string;
    const edited = await completedJob(request, workspace, third);
    expect(edited.args).toEqual({ who: "grace", times: "2" });
    await expect(page.getByTestId("job-logs")).toContainText("hello grace x2");
  });

  test("a preview runs again only; operators run a script they can read again", async ({ page, request }) => {
    const preview = await request.post(`/api/w/${workspace}/jobs/run/preview`, {
      headers: superadmin,
      data: { language: "bash", content: 'x="$1"\necho "preview $x"', args: { x: "one" } },
    });
    expect(preview.status(), await preview.text()).toBe(201);
    const previewId = await preview.text();
    await completedJob(request, workspace, previewId);

    await signIn(page);
    await page.goto(`/w/${workspace}/runs/${previewId}`);
    await expect(page.getByTestId("job-status")).toHaveText("success");
    await expect(page.getByText("a preview: this code was never deployed")).toBeVisible();
    await expect(page.getByRole("button", { name: "Edit and run" })).toHaveCount(0);
    await page.getByRole("button", { name: "Run again" }).click();
    await expect(page).not.toHaveURL(new RegExp(`/runs/${previewId}$`));
    await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));
    const rerun = await completedJob(request, workspace, page.url().split("/").at(-1) as string);
    expect(rerun.job_kind).toBe("preview");
    expect(rerun.args).toEqual({ x: "one" });
    await expect(page.getByTestId("job-logs")).toContainText("preview one");

    // An operator sees a run of a script in a folder open to everyone, and may run it again.
    const folder = await request.post(`/api/w/${workspace}/folders/create`, {
      headers: superadmin,
      data: { name: "shared", extra_perms: { "g/all": true } },
    });
    expect(folder.status(), await folder.text()).toBe(201);
    const created = await request.post(`/api/w/${workspace}/scripts/create`, {
      headers: superadmin,
      data: { ...SCRIPTS.greet, path: "f/shared/greet", summary: "" },
    });
    expect(created.status(), await created.text()).toBe(201);
    const script = await run(request, "f/shared/greet", { who: "op", times: "1" });
    await completedJob(request, workspace, script);
    const operator = await createAccount(request, "runresults-op");
    await addMember(request, workspace, operator.email, "operator");
    await page.context().clearCookies();
    await signIn(page, operator.email, operator.password);
    await page.goto(`/w/${workspace}/runs/${script}`);
    await expect(page.getByTestId("job-status")).toHaveText("success");
    // "Edit" is for those who may edit scripts (issue 34, item 11); the run form is a link away.
    await expect(page.getByRole("button", { name: "Edit and run" })).toHaveCount(0);
    await expect(page.getByRole("link", { name: "Run with other arguments" })).toHaveAttribute(
      "href",
      `/w/${workspace}/scripts/get/f/shared/greet`,
    );
    await page.getByRole("button", { name: "Run again" }).click();
    await expect(page).not.toHaveURL(new RegExp(`/runs/${script}$`));
    const byOperator = await completedJob(request, workspace, page.url().split("/").at(-1) as string);
    expect(byOperator.args).toEqual({ who: "op", times: "1" });
    expect(byOperator.created_by).toBe(operator.username);
  });

  test("result views are accessible and fit 768 px, in light and dark", async ({ page, request }) => {
    const ids = [];
    for (const script of [SCRIPTS.table, SCRIPTS.tree, SCRIPTS.bunThrow, SCRIPTS.slow]) {
      const id = await run(request, script.path);
      await completedJob(request, workspace, id);
      ids.push(id);
    }
    await page.setViewportSize({ width: 768, height: 900 });
    await signIn(page);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const id of ids) {
        await page.goto(`/w/${workspace}/runs/${id}`);
        await expect(page.getByTestId("job-result")).toBeVisible();
        await expect(page.locator("html")).toHaveAttribute("data-theme", scheme);
        const results = await new AxeBuilder({ page })
          .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"])
          .analyze();
        const serious = results.violations
          .filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
        expect(serious, `${scheme} ${id}`).toEqual([]);
        const overflow = await page.evaluate(() => {
          const root = (
            globalThis as unknown as {
              document: { documentElement: { scrollWidth: number; clientWidth: number } };
            }
          ).document.documentElement;
          return root.scrollWidth - root.clientWidth;
        });
        expect(overflow, `${scheme}: the page scrolls sideways`).toBeLessThanOrEqual(0);
        await page.screenshot({
          path: test.info().outputPath(`run-${scheme}-${id.slice(0, 8)}.png`),
          fullPage: true,
        });
      }
    }
  });
});
