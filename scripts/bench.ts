// `npm run bench`: performance figures of a real standalone instance, each beside the raw
// pg-boss figure measured in the same run on the same database. Prints; asserts nothing.
import os from "node:os";
import { createPool } from "@millrace/db";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { dedicatedBench } from "./bench/dedicated.ts";
import { flowsBench, printFlowsBench } from "./bench/flows.ts";
import { jobCpuBench, printJobCpuBench } from "./bench/job-cpu.ts";
import { drillBench, printDrillBench } from "./bench/drill.ts";
import { startBenchInstance } from "./bench/instance.ts";
import { rawPgBossLatency } from "./bench/pgboss-raw.ts";
import { NOOP_WARM_UP_JOBS, pipelineRun, rawPgBossDrain } from "./bench/pipeline.ts";
import { runStateBench } from "./bench/run-state.ts";
import { scaleBench } from "./bench/scale.ts";
import { kedaBench, kedaBenchDatabase, printKedaBench } from "./bench/keda.ts";
import { languageBench, printLanguageBench } from "./bench/languages.ts";
import { metricsBench, printMetricsBench } from "./bench/metrics.ts";
import { pagesBench, printPagesBench } from "./bench/pages.ts";
import { ms, summary, withCpuPerRequest } from "./bench/stats.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RUNS = 200;
const WARMUP = 20;

// `npm run bench -- drill` runs only the git sync / restore figures (section 6), `-- pages` only the
// browser UI figures (section 7), `-- flows` only the flow figures (section 8), `-- metrics` only
// the cost of watching the fleet with a million queued jobs (section 9), `-- keda` only KEDA's
// query of a group's waiting jobs with a million queued (section 10), `-- scale` only the job table
// at a million queued and ten million completed jobs (section 11, scripts/bench/scale.ts), `-- cpu`
// only the CPU per plain job beside a bare sandbox's (section 12, scripts/bench/job-cpu.ts), `--
// run-state` only what a narrow table of the jobs' run state would save (section 13).
const only = process.argv[2];
if (only === "run-state") {
  console.log(
    `\nMillrace benchmark (run-state only) — ${os.cpus().length} cores, Node ${process.versions.node}`,
  );
  await runStateBench(root);
  process.exit(0);
}
if (only === "scale") {
  console.log(`\nMillrace benchmark (scale only) — ${os.cpus().length} cores, Node ${process.versions.node}`);
  await scaleBench(root);
  process.exit(0);
}
if (only === "keda") {
  console.log(`\nMillrace benchmark (keda only) — ${os.cpus().length} cores, Node ${process.versions.node}`);
  const database = await kedaBenchDatabase(root);
  try {
    printKedaBench(await kedaBench(database.url, "bench"), "10");
  } finally {
    await database.stop();
  }
  process.exit(0);
}
const instance = await startBenchInstance(root, {
  numWorkers: 1,
  port: Number(process.env.BENCH_PORT ?? 8140),
});
try {
  if (only === "drill") {
    console.log(
      `\nMillrace benchmark (drill only) — ${os.cpus().length} cores, Node ${process.versions.node}`,
    );
    printDrillBench(await drillBench(root, instance), "6");
    process.exitCode = 0;
  } else if (only === "pages") {
    console.log(
      `\nMillrace benchmark (pages only) — ${os.cpus().length} cores, Node ${process.versions.node}`,
    );
    printPagesBench(await pagesBench(instance), "7");
  } else if (only === "flows") {
    console.log(
      `\nMillrace benchmark (flows only) — ${os.cpus().length} cores, Node ${process.versions.node}`,
    );
    printFlowsBench(await flowsBench(instance), "8");
  } else if (only === "cpu") {
    console.log(`\nMillrace benchmark (cpu only) — ${os.cpus().length} cores, Node ${process.versions.node}`);
    const pool = createPool(instance.databaseUrl, { max: 2, applicationName: "bench-cpu" });
    try {
      printJobCpuBench(await jobCpuBench(instance, pool), "12");
    } finally {
      await pool.end();
    }
  } else if (only === "metrics") {
    console.log(
      `\nMillrace benchmark (metrics only) — ${os.cpus().length} cores, Node ${process.versions.node}`,
    );
    await benchWorkspace();
    printMetricsBench(await metricsBench(instance, "bench"), "9");
  } else await allBenches();
} finally {
  await instance.stop();
}

function api(p: string, body: unknown) {
  const headers = { Authorization: `Bearer ${instance.userToken}`, "content-type": "application/json" };
  return fetch(`${instance.baseUrl}/api${p}`, { method: "POST", headers, body: JSON.stringify(body) });
}

async function benchWorkspace(): Promise<void> {
  await api("/workspaces/create", { id: "bench", name: "Bench" });
}

async function allBenches(): Promise<void> {
  await benchWorkspace();
  await api("/w/bench/scripts/create", {
    path: "u/bench/echo",
    language: "bash",
    summary: "echo its argument",
    content: 'msg="$1"\necho "$msg"\n',
  });

  // Back to back (each request as soon as the previous answered: the previous job's background
  // work, its replacement sandbox, shares the 2 cores with the next request) and one at a time
  // with the instance idle in between (the latency of a lone request).
  const echoSamples = async (runs: number, gapMs: number) => {
    const samples: number[] = [];
    for (let i = 0; i < WARMUP + runs; i++) {
      const started = performance.now();
      const response = await api("/w/bench/jobs/run_wait_result/p/u/bench/echo", { msg: `hello ${i}` });
      const result = await response.json();
      const elapsed = performance.now() - started;
      if (result !== `hello ${i}`) throw new Error(`unexpected result ${JSON.stringify(result)}`);
      if (i >= WARMUP) samples.push(elapsed);
      if (gapMs) await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    return summary(samples);
  };
  const { result: bash, cpuPerRequest: bashCpu } = await withCpuPerRequest(WARMUP + RUNS, () =>
    echoSamples(RUNS, 0),
  );
  const IDLE_GAP_MS = 150;
  const bashIdle = await echoSamples(RUNS / 2, IDLE_GAP_MS);
  const cores = os.cpus().length;
  // Polling waits ~0.5 s per sample: 20 samples tell its p50 just as well.
  const raw = await rawPgBossLatency(instance.databaseUrl, { polling: 20, notify: RUNS });

  console.log(
    `\nMillrace benchmark — ${cores} cores, Node ${process.versions.node}, ${new Date().toISOString()}`,
  );
  console.log(
    "\n1. Submit-to-result, bash script echoing its argument, POST run_wait_result (HTTP round trip)",
  );
  console.log(
    `   Millrace, back to back        p50 ${ms(bash.p50)}   p95 ${ms(bash.p95)}   mean ${ms(bash.mean)}   (n=${bash.n})`,
  );
  console.log(
    `     CPU-bound: the machine spent ${ms(bashCpu)} of CPU per request (every process: client, web, ` +
      `PostgreSQL, worker, the job's sandbox); over ${cores} cores, requests that follow each other cannot take less than ` +
      `${ms(bashCpu / cores)} each on average`,
  );
  console.log(
    `   Millrace, ${IDLE_GAP_MS} ms between requests p50 ${ms(bashIdle.p50)}   p95 ${ms(bashIdle.p95)}   mean ${ms(bashIdle.mean)}   (n=${bashIdle.n})`,
  );
  console.log("   raw pg-boss send→handler start, same database:");
  console.log(
    `     work() polling at 0.5 s   p50 ${ms(raw.polling.p50)}   p95 ${ms(raw.polling.p95)}   (n=${raw.polling.n})`,
  );
  console.log(
    `     work() with LISTEN/NOTIFY p50 ${ms(raw.notify.p50)}   p95 ${ms(raw.notify.p95)}   (n=${raw.notify.n})`,
  );
  console.log(
    `   ratio Millrace p50 / raw pg-boss p50: ${(bash.p50 / raw.polling.p50).toFixed(2)} (polling), ` +
      `${(bash.p50 / raw.notify.p50).toFixed(2)} (notify)`,
  );
  const verdict = (p50: number) => (p50 <= 20 ? "met" : "NOT met");
  console.log(
    `   targets: bash p50 < 50 ms (issue 2), <= 20 ms (issue 3), a request to a ready worker (one at a time) ` +
      `-> ${verdict(bashIdle.p50)}; back to back (saturated, bound by CPU per request above): ${verdict(bash.p50)}`,
  );

  const NOOP_JOBS = 5000;
  // The pipeline runs before and after the raw drains, and the best of each is compared: this VM
  // drifts between a fast and a slow state within minutes, and either order alone favours one side.
  const pipelineOnce = (tag: string) =>
    pipelineRun(instance.databaseUrl, {
      count: NOOP_JOBS,
      slots: 400,
      tag,
      args: {},
      warmUp: NOOP_WARM_UP_JOBS,
    });
  const pipelines = [await pipelineOnce("bench-noop-1")];
  const drainRuns = [
    { batchSize: 1, loops: 1 },
    { batchSize: 50, loops: 1 },
    { batchSize: 50, loops: 2 },
    { batchSize: 100, loops: 2 },
    { batchSize: 200, loops: 4 },
  ];
  const drains = [];
  for (const run of drainRuns)
    drains.push({
      ...run,
      ...(await rawPgBossDrain(instance.databaseUrl, {
        count: NOOP_JOBS,
        warmUp: NOOP_WARM_UP_JOBS,
        ...run,
      })),
    });
  pipelines.push(await pipelineOnce("bench-noop-2"));
  const best = drains.reduce((a, b) => (b.rate > a.rate ? b : a));
  const pipeline = pipelines.reduce((a, b) => (b.rate > a.rate ? b : a));
  console.log(
    `\n2. No-op job throughput: ${NOOP_JOBS} queued jobs drained by one worker process with 400 slots`,
  );
  for (const [i, run] of pipelines.entries()) {
    console.log(
      `   Millrace pipeline (claim via pg-boss + run + record), ${i === 0 ? "before" : "after"} the raw drains: ` +
        `${run.rate.toFixed(0)} jobs/s (${run.seconds.toFixed(2)} s); enqueue (rows + pg-boss jobs): ${run.enqueueRate.toFixed(0)} jobs/s`,
    );
  }
  for (const d of drains) {
    console.log(
      `   raw pg-boss drain, fetch batch ${d.batchSize} x ${d.loops} loop(s), after ${NOOP_WARM_UP_JOBS.toLocaleString("en")} through its queue: ${d.rate.toFixed(0)} jobs/s`,
    );
  }
  const share = pipeline.rate / best.rate;
  console.log(
    `   best Millrace / best raw pg-boss: ${(share * 100).toFixed(0)} % (target >= 50 %) -> ${share >= 0.5 ? "met" : "NOT met"}`,
  );

  const SLEEP_JOBS = 400;
  const sleepNative = await pipelineRun(instance.databaseUrl, {
    count: SLEEP_JOBS,
    slots: 8,
    tag: "bench-sleep",
    args: { sleep_ms: 100 },
  });
  console.log(
    `\n3. Worker efficiency, 8 slots, ${SLEEP_JOBS} jobs that sleep 100 ms (theoretical 80 jobs/s)`,
  );
  const efficiency = sleepNative.rate / 80;
  console.log(
    `   noop jobs sleeping 100 ms: ${sleepNative.rate.toFixed(1)} jobs/s = ${(efficiency * 100).toFixed(1)} % ` +
      `(target >= 97 %) -> ${efficiency >= 0.97 ? "met" : "NOT met"}`,
  );
  const sleepBash = await pipelineRun(instance.databaseUrl, {
    count: SLEEP_JOBS,
    slots: 8,
    tag: "bench-sleep-bash",
    args: {},
    bash: "sleep 0.1",
  });
  console.log(
    `   bash scripts running \`sleep 0.1\` (adds a bash and a sleep process per job): ` +
      `${sleepBash.rate.toFixed(1)} jobs/s = ${((sleepBash.rate / 80) * 100).toFixed(1)} %`,
  );

  printLanguageBench(await languageBench(instance), "4");

  console.log(
    "\n5. Dedicated worker (DEDICATED_WORKER, warm process), trivial script returning its argument",
  );
  for (const language of ["bun", "python3"] as const) {
    const d = await dedicatedBench(instance, language, RUNS);
    console.log(
      `   ${language}: submit-to-result (run_wait_result, HTTP) p50 ${ms(d.submitToResult.p50)} p95 ${ms(d.submitToResult.p95)}; ` +
        `worker claim-to-completion p50 ${ms(d.workerTime.p50)} p95 ${ms(d.workerTime.p95)}; ` +
        `in-process round trip p50 ${d.warmRoundTrip.p50.toFixed(2)} ms`,
    );
    console.log(
      `   ${language}: dedicated worker overhead per job p50 ${ms(d.overheadP50)} (target <= 3 ms) -> ${d.overheadP50 <= 3 ? "met" : "NOT met"}`,
    );
  }
  printDrillBench(await drillBench(root, instance), "6");
  printPagesBench(await pagesBench(instance), "7");
  const flows = await flowsBench(instance);
  printFlowsBench(flows, "8");
  // Section 8's plain jobs and bare runs are section 12's figures.
  printJobCpuBench(
    { plain: flows.plainJobs, bareSandboxes: flows.bareSandboxes, bareProcesses: flows.bareProcesses },
    "12",
  );
  printMetricsBench(await metricsBench(instance, "bench"), "9");
  printKedaBench(await kedaBench(instance.databaseUrl, "bench"), "10");
}
