import AxeBuilder from "@axe-core/playwright";
import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { E2E_ADMIN } from "../instance.ts";
import { completedJob, createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

// Issue 21, item 4: the run form follows the shape of `main`'s arguments. The form is the one of
// "Edit and run" on a run page (the same ArgsForm as the script page and the schedule form).

const workspace = uniqueWorkspace("runforms");
const DB_A = { host: "db-a.example", user: "app", dbname: "shop" };
const DB_B = { host: "db-b.example", user: "report", dbname: "stats", port: 6432 };

const SCRIPTS = {
  pgTs: {
    path: "u/e2e_admin/pg_ts",
    language: "bun",
    content: "export async function main(db: RT.Postgresql) {\n  return db;\n}\n",
  },
  pgPy: {
    path: "u/e2e_admin/pg_py",
    language: "python3",
    content: "postgresql = dict\n\n\ndef main(db: postgresql):\n    return db\n",
  },
  smtp: {
    path: "u/e2e_admin/smtp_ts",
    language: "bun",
    content: 'export async function main(mail?: RT.Smtp) {\n  return "ok";\n}\n',
  },
  shapes: {
    path: "u/e2e_admin/shapes",
    language: "bun",
    content: [
      "export async function main(",
      "  when: Date,",
      '  level: "low" | "high",',
      "  target: { host: string; port: number },",
      "  tags: string[],",
      "  extra: any,",
      "  count: number = 3,",
      "  enabled: boolean = false,",
      ") {",
      "  return { when, level, target, tags, extra, count, enabled };",
      "}",
      "",
    ].join("\n"),
  },
};

async function signIn(page: Page): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(E2E_ADMIN.email);
  await page.getByLabel("Password").fill(E2E_ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
}

// Jobs that read resources run as a real user (the instance's secret is no user), so the scripts,
// resources and first runs are the e2e admin's.
let admin: Record<string, string> = superadmin;

async function run(request: APIRequestContext, path: string, args: Record<string, unknown>): Promise<string> {
  const response = await request.post(`/api/w/${workspace}/jobs/run/p/${path}`, {
    headers: admin,
    data: args,
  });
  expect(response.status(), await response.text()).toBe(201);
  return response.text();
}

/** Opens the run page of `id`, then its "Edit and run" form. */
async function editAndRun(page: Page, id: string) {
  await page.goto(`/w/${workspace}/runs/${id}`);
  await page.getByRole("button", { name: "Edit and run" }).click();
  const form = page.getByTestId("edit-and-run");
  await expect(form.getByTestId("args-form")).toBeVisible();
  return form;
}

/** Submits the "Edit and run" form and returns the new job's id (the page moves to its run). */
async function submit(page: Page, previous: string): Promise<string> {
  await page.getByTestId("edit-and-run").getByRole("button", { name: "Run", exact: true }).click();
  await expect(page).not.toHaveURL(new RegExp(`/runs/${previous}$`));
  await expect(page).toHaveURL(new RegExp(`/w/${workspace}/runs/[0-9a-f-]{36}$`));
  return page.url().split("/").at(-1) as string;
}

test.describe("run forms", () => {
  test.beforeAll(async ({ request }) => {
    await createWorkspace(request, workspace);
    const login = await request.post("/api/auth/login", { data: E2E_ADMIN });
    expect(login.status(), await login.text()).toBe(200);
    admin = { Authorization: `Bearer ${await login.text()}` };
    for (const script of Object.values(SCRIPTS)) {
      const created = await request.post(`/api/w/${workspace}/scripts/create`, {
        headers: admin,
        data: { ...script, summary: "" },
      });
      expect(created.status(), await created.text()).toBe(201);
    }
    for (const [path, resource_type, value] of [
      ["u/e2e_admin/db_a", "postgresql", DB_A],
      ["u/e2e_admin/db_b", "postgresql", DB_B],
      ["u/e2e_admin/shop_mysql", "mysql", { host: "mysql.example", user: "m", database: "m" }],
    ] as const) {
      const created = await request.post(`/api/w/${workspace}/resources/create`, {
        headers: admin,
        data: { path, resource_type, value },
      });
      expect(created.status(), await created.text()).toBe(201);
    }
  });

  for (const key of ["pgTs", "pgPy"] as const) {
    test(`a resource picker lists the workspace's postgresql resources (${SCRIPTS[key].language}) and the job gets the value`, async ({
      page,
      request,
    }) => {
      const script = SCRIPTS[key];
      const first = await run(request, script.path, { db: "$res:u/e2e_admin/db_a" });
      expect((await completedJob(request, workspace, first)).result).toEqual(DB_A);
      await signIn(page);
      const form = await editAndRun(page, first);
      const picker = form.getByLabel(/^db\b/);
      await expect(picker).toHaveValue("$res:u/e2e_admin/db_a");
      // Only resources of the argument's type, by path.
      await expect(picker.locator("option")).toHaveText([
        "Choose a resource…",
        "u/e2e_admin/db_a",
        "u/e2e_admin/db_b",
      ]);
      await picker.selectOption({ label: "u/e2e_admin/db_b" });
      const id = await submit(page, first);
      const job = await completedJob(request, workspace, id);
      expect(job.args).toEqual({ db: "$res:u/e2e_admin/db_b" });
      expect(job.result).toEqual(DB_B);
      await expect(page.getByTestId("job-status")).toHaveText("success");
    });
  }

  test("with no resource of the type, the picker says so and links to creating one", async ({
    page,
    request,
  }) => {
    const first = await run(request, SCRIPTS.smtp.path, {});
    await signIn(page);
    const form = await editAndRun(page, first);
    await expect(form.getByTestId("no-resources")).toContainText("No smtp resource in this workspace yet.");
    await expect(form.getByRole("link", { name: "Create a smtp resource" })).toHaveAttribute(
      "href",
      `/w/${workspace}/resources/new`,
    );
  });

  test("date-time, enum, object, list and JSON fields produce the right arguments", async ({
    page,
    request,
  }) => {
    const first = await run(request, SCRIPTS.shapes.path, {
      when: "2026-01-02T03:04:05.000Z",
      level: "low",
      target: { host: "a.example", port: 1 },
      tags: ["one"],
      extra: { keep: true },
    });
    await completedJob(request, workspace, first);
    await signIn(page);
    const form = await editAndRun(page, first);

    // Labels, required marks and defaults.
    await expect(form.locator("label", { hasText: "count" })).toContainText("number");
    await expect(form.getByLabel(/^count\b/)).toHaveValue("3");
    await expect(form.locator("label", { hasText: /^when/ })).toContainText("(required)");

    // Date-time: a native picker in local time, an ISO 8601 string in the arguments.
    const when = form.getByLabel(/^when\b/);
    await expect(when).toHaveAttribute("type", "datetime-local");
    await when.fill("2026-03-04T05:06");
    const expectedWhen = await page.evaluate(() => new Date("2026-03-04T05:06").toISOString());

    // Enum: a select of its values.
    const level = form.getByLabel(/^level\b/);
    await expect(level.locator("option")).toHaveText(["low", "high"]);
    await level.selectOption("high");

    // Object with known properties: one field each.
    await form.getByLabel(/^host\b/).fill("b.example");
    await form.getByLabel(/^port\b/).fill("5433");

    // List: rows added and removed, items typed.
    await expect(form.getByLabel(/^tags item 1\b/)).toHaveValue("one");
    await form.getByRole("button", { name: "Add tags item" }).click();
    await form.getByLabel(/^tags item 2\b/).fill("two");
    await form.getByRole("button", { name: "Add tags item" }).click();
    await form.getByLabel(/^tags item 3\b/).fill("three");
    await form.getByRole("button", { name: "Remove tags item 1" }).click();
    await expect(form.getByLabel(/^tags item 1\b/)).toHaveValue("two");

    // Boolean: a switch.
    await form.getByRole("switch", { name: /enabled/ }).check();

    // JSON fallback: invalid JSON is explained at the field, by name.
    const extra = form.getByLabel(/^extra\b/);
    await extra.fill('{"broken": ');
    await expect(form.getByText(/^extra is not valid JSON/)).toBeVisible();
    await extra.fill('{"n": [1, 2]}');
    await expect(form.getByText(/^extra is not valid JSON/)).toHaveCount(0);

    const id = await submit(page, first);
    const job = await completedJob(request, workspace, id);
    expect(job.args).toEqual({
      when: expectedWhen,
      level: "high",
      target: { host: "b.example", port: 5433 },
      tags: ["two", "three"],
      extra: { n: [1, 2] },
      count: 3,
      enabled: true,
    });
    expect(job.result.level).toBe("high");
  });

  test("an object can be edited as JSON too, and the server's refusal is shown at the field", async ({
    page,
    request,
  }) => {
    const first = await run(request, SCRIPTS.shapes.path, {
      when: "2026-01-02T03:04:05.000Z",
      level: "low",
      target: { host: "a.example", port: 1 },
      tags: [],
      extra: 1,
    });
    await completedJob(request, workspace, first);
    await signIn(page);
    const form = await editAndRun(page, first);
    await form.getByRole("button", { name: "Edit target as JSON" }).click();
    const target = form.getByLabel(/^target\b/);
    await expect(target).toHaveValue(/"host": "a.example"/);
    await target.fill('{"host": "c.example"}');
    await page.getByTestId("edit-and-run").getByRole("button", { name: "Run", exact: true }).click();
    // `port` is required: the server refuses, and the form says so at `target`.
    await expect(form.locator('[data-arg="target"] .field-error')).toContainText("port");
    await expect(page).toHaveURL(new RegExp(`/runs/${first}$`));
  });

  test("the form is accessible and fits 768 px, in light and dark", async ({ page, request }) => {
    const first = await run(request, SCRIPTS.shapes.path, {
      when: "2026-01-02T03:04:05.000Z",
      level: "low",
      target: { host: "a.example", port: 1 },
      tags: ["one", "two"],
      extra: { keep: true },
    });
    await completedJob(request, workspace, first);
    const db = await run(request, SCRIPTS.pgTs.path, { db: "$res:u/e2e_admin/db_a" });
    await completedJob(request, workspace, db);
    await page.setViewportSize({ width: 768, height: 900 });
    await signIn(page);
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const id of [first, db]) {
        const form = await editAndRun(page, id);
        await expect(form.getByTestId("args-form")).toBeVisible();
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
          path: test.info().outputPath(`form-${scheme}-${id.slice(0, 8)}.png`),
          fullPage: true,
        });
      }
    }
  });
});
