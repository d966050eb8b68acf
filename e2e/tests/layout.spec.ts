// Issue 21: every page at 1440, 1024 and 768 px wide: the page never scrolls sideways (wide
// tables scroll inside their own box), and the script editor keeps at least 300 px of height.
import { expect, test } from "@playwright/test";
import { pageSettled, seedSite, signIn } from "../fixtures/site-pages.ts";

const WIDTHS = [1440, 1024, 768];

type Measure = { scrollWidth: number; clientWidth: number; editorHeight: number | null };

test("every page at 1440, 1024 and 768 px: no horizontal scrolling, the editor at least 300 px tall", async ({
  page,
  request,
}) => {
  test.setTimeout(300_000);
  const site = await seedSite(request, "layout");
  const problems: string[] = [];
  for (const [who, account] of [
    ["admin", site.admin],
    ["operator", site.operator],
  ] as const) {
    await page.context().clearCookies();
    await page.setViewportSize({ width: 1440, height: 900 });
    await signIn(page, account.email, account.password);
    for (const url of [...site.instancePages, ...site.workspacePages]) {
      await page.goto(url);
      await pageSettled(page, url);
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        if (site.editorPages.includes(url) && who === "admin")
          await expect(page.locator(".monaco-editor").first()).toBeVisible();
        // Layout settles within a frame or two of a resize.
        await page.waitForTimeout(100);
        const measure: Measure = await page.evaluate(() => {
          const doc = (
            globalThis as unknown as {
              document: {
                documentElement: { scrollWidth: number; clientWidth: number };
                querySelector(s: string): { getBoundingClientRect(): { height: number } } | null;
              };
            }
          ).document;
          const editor = doc.querySelector(".monaco-editor");
          return {
            scrollWidth: doc.documentElement.scrollWidth,
            clientWidth: doc.documentElement.clientWidth,
            editorHeight: editor ? editor.getBoundingClientRect().height : null,
          };
        });
        if (measure.scrollWidth > measure.clientWidth)
          problems.push(
            `${who} ${url} at ${width} px: the page scrolls sideways (${measure.scrollWidth} > ${measure.clientWidth})`,
          );
        if (site.editorPages.includes(url) && who === "admin" && (measure.editorHeight ?? 0) < 300)
          problems.push(`${who} ${url} at ${width} px: the editor is ${measure.editorHeight} px tall`);
      }
      await page.setViewportSize({ width: 1440, height: 900 });
    }
  }
  expect(problems, problems.join("\n")).toEqual([]);
});
