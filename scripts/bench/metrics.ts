// Section 9: what watching the fleet costs with a million queued jobs. The leader's sample (one
// grouped pass over the queued and running jobs, every FLEET_SAMPLE_SECS) and a server's scrape
// (reads the latest sample, whatever the job table holds), timed in this process against the
// bench instance's database with the same code the server runs.
import { metricsExposition, registerFleetMetrics, sampleFleet, watchDatabasePool } from "@millrace/core";
import { createPool } from "@millrace/db";
import type { BenchInstance } from "./instance.ts";
import { ms, summary } from "./stats.ts";

const QUEUED_JOBS = 1_000_000;
const TAGS = 20;
const RUNS = 20;

export interface MetricsBench {
  queued: number;
  insertSecs: number;
  sample: ReturnType<typeof summary>;
  scrape: ReturnType<typeof summary>;
  scrapeBytes: number;
  sampleEmpty: ReturnType<typeof summary>;
}

async function timed(runs: number, run: () => Promise<unknown>) {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return summary(samples);
}

export async function metricsBench(instance: BenchInstance, workspace: string): Promise<MetricsBench> {
  const pool = createPool(instance.databaseUrl, { max: 4, applicationName: "millrace-bench-metrics" });
  try {
    const sampleEmpty = await timed(RUNS, () => sampleFleet(pool));
    // Rows only, on tags no worker serves (no pg-boss dispatch): a backlog nobody drains. A tenth
    // is due later, as scheduled runs would be.
    const started = performance.now();
    await pool.query(
      `INSERT INTO job (id, workspace_id, kind, language, content, tag, created_by, permissioned_as, scheduled_for)
       SELECT gen_random_uuid(), $1, 'script', 'bash', 'echo', 'bench-backlog-' || (n % $2), 'bench', 'u/bench',
              CASE WHEN n % 10 = 0 THEN now() + interval '1 hour' ELSE now() - (n % 600) * interval '1 second' END
         FROM generate_series(1, $3) AS n`,
      [workspace, TAGS, QUEUED_JOBS],
    );
    await pool.query("ANALYZE job");
    const insertSecs = (performance.now() - started) / 1000;
    const sample = await timed(RUNS, () => sampleFleet(pool));
    registerFleetMetrics(pool);
    watchDatabasePool(pool);
    let scrapeBytes = 0;
    // Scrapes are spaced past the gauges' 2 s cache, so that every one of them reads the sample.
    const scrapes: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const begun = performance.now();
      scrapeBytes = (await metricsExposition()).body.length;
      scrapes.push(performance.now() - begun);
    }
    const scrape = summary(scrapes);
    return { queued: QUEUED_JOBS, insertSecs, sample, scrape, scrapeBytes, sampleEmpty };
  } finally {
    await pool.query("DELETE FROM job WHERE tag LIKE 'bench-backlog-%'").catch(() => {});
    await pool.end();
  }
}

export function printMetricsBench(bench: MetricsBench, section: string): void {
  console.log(
    `\n${section}. Watching the fleet with ${bench.queued.toLocaleString("en")} queued jobs (${TAGS} tags)`,
  );
  console.log(`   backlog inserted in ${bench.insertSecs.toFixed(1)} s`);
  console.log(
    `   leader's fleet sample (queues per tag, worker groups; once per FLEET_SAMPLE_SECS for the whole instance): ` +
      `p50 ${ms(bench.sample.p50)} p95 ${ms(bench.sample.p95)}; with an empty queue p50 ${ms(bench.sampleEmpty.p50)}`,
  );
  console.log(
    `   a server's scrape (/metrics body, ${(bench.scrapeBytes / 1024).toFixed(0)} KiB, reads the latest sample): ` +
      `p50 ${ms(bench.scrape.p50)} p95 ${ms(bench.scrape.p95)}`,
  );
}
