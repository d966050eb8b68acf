// Developer tool: the bench's page figure (section 7) for two builds at once (this checkout and
// another, e.g. a worktree of main), loads interleaved so that the machine's load hits both alike.
// node scripts/bench/ab-pages.ts /path/to/other/checkout [page filter]
import path from "node:path";
import type { CDPSession, Page } from "@playwright/test";
import { startBenchInstance, type BenchInstance } from "./instance.ts";
import { launchChromium, pageReady, signInBrowser } from "./browser.ts";
import { seedBenchWorkspace, type Api } from "./pages.ts";

const root = path.resolve(import.meta.dirname, "../..");
const other = path.resolve(process.argv[2]!);
const filter = process.argv[3] ?? "";
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const a = await startBenchInstance(root, { numWorkers: 1, port: 8190, database: "millrace_bench_a" });
let b: BenchInstance | null = null;
try {
  b = await startBenchInstance(other, {
    numWorkers: 1,
    port: 8191,
    database: "millrace_bench_b",
    adminUrl: a.adminUrl,
  });
  const browser = await launchChromium();
  const sides: { name: string; inst: BenchInstance; page: Page; cdp: CDPSession; runId?: string }[] = [];
  const taskMs = async (cdp: CDPSession) => {
    const { metrics } = (await cdp.send("Performance.getMetrics")) as {
      metrics: { name: string; value: number }[];
    };
    return (metrics.find((m) => m.name === "TaskDuration")?.value ?? 0) * 1000;
  };
  for (const [name, inst] of [
    ["new", a],
    ["base", b],
  ] as const) {
    const headers = { Authorization: `Bearer ${inst.userToken}`, "content-type": "application/json" };
    const api: Api = (p, body) =>
      fetch(`${inst.baseUrl}/api${p}`, { method: "POST", headers, body: JSON.stringify(body) });
    await seedBenchWorkspace(api);
    const jobs = (await (
      await fetch(`${inst.baseUrl}/api/w/bench/jobs/list?per_page=1`, { headers })
    ).json()) as { id: string }[];
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await signInBrowser(page, inst.baseUrl, "bench@example.com", "bench-password-1");
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    sides.push({ name, inst, page, cdp, runId: jobs[0]?.id });
  }
  const w = "/w/bench";
  const targets: [string, (runId?: string) => string][] = [
    ["home", () => w],
    ["scripts", () => `${w}/scripts`],
    ["script page", () => `${w}/scripts/get/u/bench/echo`],
    ["editor", () => `${w}/scripts/edit/u/bench/echo`],
    ["runs", () => `${w}/runs`],
    ["run", (id) => `${w}/runs/${id}`],
    ["resources", () => `${w}/resources`],
    ["audit", () => `${w}/audit`],
  ];
  for (const [name, url] of targets.filter(([n]) => n.includes(filter))) {
    const samples: Record<string, number[]> = { new: [], base: [] };
    const cpu: Record<string, number[]> = { new: [], base: [] };
    for (let i = 0; i < 13; i++) {
      for (const side of i % 2 ? sides : [...sides].reverse()) {
        const t0 = performance.now();
        await side.page.goto(`${side.inst.baseUrl}${url(side.runId)}`);
        await pageReady(side.page);
        if (i >= 3) samples[side.name]!.push(performance.now() - t0);
        if (i >= 3) cpu[side.name]!.push(await taskMs(side.cdp));
      }
    }
    const n = med(samples.new!),
      o = med(samples.base!);
    console.log(
      `${name.padEnd(12)} new ${n.toFixed(0).padStart(5)}   base ${o.toFixed(0).padStart(5)}   ratio ${(n / o).toFixed(2)}   main-thread cpu new ${med(cpu.new!).toFixed(0)} base ${med(cpu.base!).toFixed(0)}`,
    );
  }
  await browser.close();
} finally {
  await b?.stop();
  await a.stop();
}
