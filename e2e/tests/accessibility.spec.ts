// Issue 21: an accessibility check (axe-core, WCAG 2 A and AA rules) over every page, as an admin
// and as an operator: no serious or critical violation.
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { addMember, createAccount, deployScript } from "../fixtures/people.ts";
import { completedJob, createWorkspace, superadmin, uniqueWorkspace } from "./helpers.ts";

async function signIn(page: Page, email: string, password: string) {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Workspaces", exact: true })).toBeVisible();
}

/** Serious and critical violations of the page as it is now, one line each. */
async function violations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"])
    .analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .map((n) => n.target.join(" "))
          .slice(0, 3)
          .join(", ")}`,
    );
}

test.describe("accessibility of every page", () => {
  test.describe.configure({ timeout: 240_000 });

  test("as an admin and as an operator: no serious or critical axe violation", async ({ page, request }) => {
    const ws = uniqueWorkspace("a11y");
    await createWorkspace(request, ws);
    const admin = await createAccount(request, "a11y-admin", { superAdmin: true });
    const operator = await createAccount(request, "a11y-op");
    await addMember(request, ws, admin.email, "admin");
    await addMember(request, ws, operator.email, "operator");
    const script = `u/${admin.username}/a11y_hello`;
    await deployScript(request, ws, script, admin.headers, 'echo "hello"');
    const run = await request.post(`/api/w/${ws}/jobs/run/p/${script}`, { headers: superadmin, data: {} });
    const jobId = await run.text();
    await completedJob(request, ws, jobId);
    const scheduled = await request.post(`/api/w/${ws}/schedules/create`, {
      headers: admin.headers,
      data: {
        path: `u/${admin.username}/a11y_daily`,
        schedule: "0 0 3 * * *",
        script_path: script,
        args: {},
      },
    });
    expect(scheduled.status(), await scheduled.text()).toBeLessThan(300);

    const workspacePages = [
      "",
      "/scripts",
      `/scripts/get/${script}`,
      "/scripts/new",
      `/scripts/edit/${script}`,
      `/scripts/webhooks/${script}`,
      "/runs",
      `/runs/${jobId}`,
      "/schedules",
      "/schedules/new",
      "/variables",
      "/variables/new",
      "/resources",
      "/resources/new",
      "/resources/types",
      "/members",
      "/folders",
      "/audit",
      "/governance",
      "/workers",
      "/git-sync",
    ].map((p) => `/w/${ws}${p}`);
    const instancePages = [
      "/workspaces",
      "/account/tokens",
      "/admin/governance",
      "/admin/users",
      "/admin/restore",
    ];

    const problems: string[] = [];
    for (const [who, account] of [
      ["admin", admin],
      ["operator", operator],
    ] as const) {
      await page.context().clearCookies();
      await signIn(page, account.email, account.password);
      for (const url of [...instancePages, ...workspacePages]) {
        await page.goto(url);
        // Pages render on the client: wait for their content (a heading, or a message) first.
        await expect(page.locator("main h1, main .error, main p").first(), url).toBeVisible();
        // Pages poll, so the network is never idle: wait until nothing says it is loading.
        await expect(page.getByText(/^Loading/)).toHaveCount(0, { timeout: 10_000 });
        for (const line of await violations(page)) problems.push(`${who} ${url}: ${line}`);
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
  });
});
