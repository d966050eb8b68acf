// Section 7: the browser UI, measured in Chromium on the production build that `npm start` serves.
// - every main page: from navigation start until its content is shown and nothing is loading;
// - the workbench: from a click on Test until the bash script's result is on screen.
import type { Page } from "@playwright/test";
import type { BenchInstance } from "./instance.ts";
import { launchChromium, pageReady, signInBrowser } from "./browser.ts";
import { machineBusyMs, ms, summary } from "./stats.ts";

const PAGE_LOADS = 10;
const TEST_CLICKS = 30;
const WARMUP = 3;

export interface PageBench {
  pages: { name: string; url: string; load: ReturnType<typeof summary> }[];
  test: ReturnType<typeof summary>;
  testCpuPerClick: number;
}

export type Api = (p: string, body: unknown) => Promise<Response>;

/** What the pages show: a bash script with runs, a schedule, a variable and a resource. */
export async function seedBenchWorkspace(api: Api): Promise<void> {
  await api("/workspaces/create", { id: "bench", name: "Bench" });
  await api("/w/bench/scripts/create", {
    path: "u/bench/echo",
    language: "bash",
    summary: "echo its argument",
    content: 'msg="$1"\necho "$msg"\n',
  });
  for (let i = 0; i < 10; i++)
    await api("/w/bench/jobs/run_wait_result/p/u/bench/echo", { msg: `seed ${i}` });
  await api("/w/bench/schedules/create", {
    path: "u/bench/nightly",
    schedule: "0 0 3 * * *",
    script_path: "u/bench/echo",
    args: { msg: "nightly" },
  });
  await api("/w/bench/variables/create", {
    path: "u/bench/greeting",
    value: "hello",
    is_secret: false,
    description: "",
  });
}

export async function pagesBench(instance: BenchInstance): Promise<PageBench> {
  const headers = { Authorization: `Bearer ${instance.userToken}`, "content-type": "application/json" };
  const api: Api = (p, body) =>
    fetch(`${instance.baseUrl}/api${p}`, { method: "POST", headers, body: JSON.stringify(body) });
  await seedBenchWorkspace(api);
  const jobs = (await (
    await fetch(`${instance.baseUrl}/api/w/bench/jobs/list?per_page=1`, { headers })
  ).json()) as { id: string }[];
  const runId = jobs[0]?.id;

  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await signInBrowser(page, instance.baseUrl, "bench@example.com", "bench-password-1");
    const w = "/w/bench";
    const targets = [
      { name: "Workspace home", url: w },
      { name: "Scripts", url: `${w}/scripts` },
      { name: "Script page", url: `${w}/scripts/get/u/bench/echo` },
      { name: "Script editor", url: `${w}/scripts/edit/u/bench/echo` },
      { name: "Runs", url: `${w}/runs` },
      { name: "Run page", url: `${w}/runs/${runId}` },
      { name: "Schedules", url: `${w}/schedules` },
      { name: "Variables", url: `${w}/variables` },
      { name: "Resources", url: `${w}/resources` },
      { name: "Workers", url: `${w}/workers` },
      { name: "Audit log", url: `${w}/audit` },
      { name: "Workspaces", url: "/workspaces" },
    ];
    const pages: PageBench["pages"] = [];
    for (const target of targets) {
      const samples: number[] = [];
      for (let i = 0; i < WARMUP + PAGE_LOADS; i++) {
        const started = performance.now();
        await page.goto(`${instance.baseUrl}${target.url}`);
        await pageReady(page);
        if (i >= WARMUP) samples.push(performance.now() - started);
      }
      pages.push({ ...target, load: summary(samples) });
    }

    const { test, cpuPerClick } = await workbenchTest(
      page,
      `${instance.baseUrl}${w}/scripts/edit/u/bench/echo`,
    );
    return { pages, test, testCpuPerClick: cpuPerClick };
  } finally {
    await browser.close();
  }
}

/** Click on Test → the result of the edited (undeployed) bash script is on screen, timed in the page. */
async function workbenchTest(page: Page, url: string) {
  await page.goto(url);
  await pageReady(page);
  const testButton = page.getByTestId("workbench-test");
  await testButton.waitFor();
  const argument = page.getByLabel("msg", { exact: false }).first();
  const samples: number[] = [];
  const busyBefore = { value: 0 };
  for (let i = 0; i < WARMUP + TEST_CLICKS; i++) {
    if (i === WARMUP) busyBefore.value = machineBusyMs();
    const expected = `bench ${i} ${Date.now()}`;
    await argument.fill(expected);
    const elapsed = await page.evaluate(async (text) => {
      type El = { textContent: string | null; click(): void };
      const g = globalThis as unknown as {
        document: { querySelector(s: string): El | null; body: unknown };
        MutationObserver: new (cb: () => void) => {
          observe(n: unknown, o: unknown): void;
          disconnect(): void;
        };
        requestAnimationFrame(cb: () => void): void;
      };
      const shown = () =>
        g.document.querySelector('[data-testid="workbench-result"]')?.textContent?.includes(text);
      const started = performance.now();
      g.document.querySelector('[data-testid="workbench-test"]')!.click();
      await new Promise<void>((resolve) => {
        if (shown()) return resolve();
        const observer = new g.MutationObserver(() => {
          if (shown()) {
            observer.disconnect();
            resolve();
          }
        });
        observer.observe(g.document.body, { subtree: true, childList: true, characterData: true });
      });
      // The next frame: the result has been painted.
      await new Promise<void>((resolve) => g.requestAnimationFrame(() => resolve()));
      return performance.now() - started;
    }, expected);
    if (i >= WARMUP) samples.push(elapsed);
  }
  return { test: summary(samples), cpuPerClick: (machineBusyMs() - busyBefore.value) / TEST_CLICKS };
}

export function printPagesBench(bench: PageBench, section: string): void {
  console.log(
    `\n${section}. Browser UI in Chromium (production build, 1440x900), every main page and the workbench`,
  );
  for (const { name, url, load } of bench.pages) {
    console.log(
      `   ${name.padEnd(16)} load to interactive p50 ${ms(load.p50)}   p95 ${ms(load.p95)}   (n=${load.n}, ${url})`,
    );
  }
  const worst = Math.max(...bench.pages.map((p) => p.load.p50));
  console.log(`   slowest page p50 ${ms(worst)} (target <= 500 ms) -> ${worst <= 500 ? "met" : "NOT met"}`);
  console.log(
    `   Workbench: click on Test -> bash result shown p50 ${ms(bench.test.p50)}   p95 ${ms(bench.test.p95)}   ` +
      `(n=${bench.test.n}; the machine spent ${ms(bench.testCpuPerClick)} of CPU per click, every process) ` +
      `(target p50 <= 100 ms) -> ${bench.test.p50 <= 100 ? "met" : "NOT met"}`,
  );
}
