// Issue 21: an accessibility check (axe-core, WCAG 2 A and AA rules) over every page, as an admin
// and as an operator: no serious or critical violation.
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { pageSettled, seedSite, signIn } from "../fixtures/site-pages.ts";

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
  test.describe.configure({ timeout: 480_000 });

  test("as an admin and as an operator: no serious or critical axe violation", async ({ page, request }) => {
    const site = await seedSite(request, "a11y");
    const problems: string[] = [];
    for (const [who, account] of [
      ["admin", site.admin],
      ["operator", site.operator],
    ] as const) {
      await page.context().clearCookies();
      await signIn(page, account.email, account.password);
      for (const url of [...site.instancePages, ...site.workspacePages]) {
        await page.goto(url);
        // Pages render on the client and poll: wait for their content, and until nothing loads.
        await pageSettled(page, url);
        for (const line of await violations(page)) problems.push(`${who} ${url}: ${line}`);
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
  });
});
