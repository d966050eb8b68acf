// `npm run screenshots`: the main pages in the light and the dark theme, as PNG files in
// docs/screenshots/ (shown in docs/ui.md). A fresh instance on its own database, seeded the way
// the benchmark seeds it, so every refresh shows the same things.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, pageReady, signInBrowser } from "./bench/browser.ts";
import { startBenchInstance } from "./bench/instance.ts";
import { seedBenchWorkspace, type Api } from "./bench/pages.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outDir = path.join(root, "docs/screenshots");

const instance = await startBenchInstance(root, {
  numWorkers: 1,
  port: 8142,
  database: "millrace_screenshots",
});
try {
  const headers = { Authorization: `Bearer ${instance.userToken}`, "content-type": "application/json" };
  const api: Api = (p, body) =>
    fetch(`${instance.baseUrl}/api${p}`, { method: "POST", headers, body: JSON.stringify(body) });
  await seedBenchWorkspace(api);
  const failing = await api("/w/bench/jobs/run/preview", {
    language: "python3",
    content: 'def main():\n    raise ValueError("the report source is unreachable")\n',
    args: {},
  });
  const failingId = await failing.text();
  await new Promise((resolve) => setTimeout(resolve, 3000));

  const w = "/w/bench";
  const shots = [
    { name: "home", url: w },
    { name: "scripts", url: `${w}/scripts` },
    { name: "script-page", url: `${w}/scripts/get/u/bench/echo` },
    { name: "workbench", url: `${w}/scripts/edit/u/bench/echo` },
    { name: "runs", url: `${w}/runs` },
    { name: "run-failure", url: `${w}/runs/${failingId}` },
    { name: "schedules", url: `${w}/schedules` },
  ];
  fs.mkdirSync(outDir, { recursive: true });
  const browser = await launchChromium();
  try {
    for (const theme of ["light", "dark"] as const) {
      const context = await browser.newContext({
        viewport: { width: 1440, height: 900 },
        colorScheme: theme,
      });
      const page = await context.newPage();
      await signInBrowser(page, instance.baseUrl, "bench@example.com", "bench-password-1");
      for (const shot of shots) {
        await page.goto(`${instance.baseUrl}${shot.url}`);
        await pageReady(page);
        // Monaco and charts draw after the content arrives.
        await page.waitForTimeout(1200);
        const file = path.join(outDir, `${shot.name}-${theme}.png`);
        await page.screenshot({ path: file });
        console.log(`wrote ${path.relative(root, file)}`);
      }
      await context.close();
    }
  } finally {
    await browser.close();
  }
} finally {
  await instance.stop();
}
