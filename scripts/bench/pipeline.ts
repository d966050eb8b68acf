import { enqueueJobs, noopJob, startBoss } from "@millrace/core";
import { createPool } from "@millrace/db";
import { PgBoss } from "pg-boss";
import { startTestWorker } from "../../apps/worker/src/testing.ts";

/**
 * The whole Millrace pipeline on `count` jobs of a fresh tag: enqueued first (our rows and their
 * pg-boss jobs, measured separately), then drained by `processes` worker processes of `slots`
 * slots each (claim through pg-boss, run, record the outcome and settle pg-boss), from the first
 * job started to the last completed, as jobs per second.
 */
export async function pipelineRun(
  databaseUrl: string,
  options: {
    count: number;
    slots: number;
    processes?: number;
    tag: string;
    args: Record<string, unknown>;
    bash?: string;
  },
): Promise<{ seconds: number; rate: number; enqueueRate: number }> {
  const pool = createPool(databaseUrl, { max: 4, applicationName: "millrace-bench" });
  const boss = await startBoss(databaseUrl, "worker");
  const inputs = Array.from({ length: options.count }, () => ({
    ...noopJob("bench", options.tag, options.args, "bench"),
    ...(options.bash ? { kind: "script" as const, content: options.bash } : {}),
  }));
  const enqueueStarted = performance.now();
  for (let i = 0; i < inputs.length; i += 1000) await enqueueJobs(pool, boss, inputs.slice(i, i + 1000));
  const enqueueRate = options.count / ((performance.now() - enqueueStarted) / 1000);
  const workers = await Promise.all(
    Array.from({ length: options.processes ?? 1 }, () =>
      startTestWorker(databaseUrl, { WORKER_TAGS: options.tag, NUM_WORKERS: String(options.slots) }),
    ),
  );
  try {
    // Polled through the queue's partial index: a count over the whole job table every 100 ms
    // cost PostgreSQL ~5 % of the CPU it spent on the drain being measured.
    for (;;) {
      const { rows } = await pool.query<{ left: number }>(
        `SELECT count(*)::int AS left FROM job WHERE status IN ('queued', 'running') AND tag = $1`,
        [options.tag],
      );
      if (process.env.BENCH_VERBOSE) console.log(`  ${rows[0]!.left} of ${options.count} left`);
      if (rows[0]!.left === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { rows } = await pool.query<{ done: number; first: Date; last: Date }>(
      `SELECT count(*)::int AS done, min(started_at) AS first, max(completed_at) AS last
         FROM job WHERE tag = $1 AND status = 'success'`,
      [options.tag],
    );
    const { done, first, last } = rows[0]!;
    if (done !== options.count)
      throw new Error(`${options.count - done} of ${options.count} jobs did not succeed`);
    const seconds = (last.getTime() - first.getTime()) / 1000;
    return { seconds, rate: options.count / seconds, enqueueRate };
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await boss.stop({ graceful: false, timeout: 2000 });
    await pool.end();
  }
}

/** pg-boss alone on the same database: insert `count` jobs, then drain them as fast as it can. */
export async function rawPgBossDrain(
  databaseUrl: string,
  options: { count: number; batchSize: number; loops: number },
): Promise<{ seconds: number; rate: number }> {
  const boss = new PgBoss({ connectionString: databaseUrl, supervise: false, schedule: false, max: 6 });
  boss.on("error", () => {});
  await boss.start();
  const queue = `bench_drain_${Date.now()}`;
  // A table of its own, as each Millrace tag's queue has (see ensureQueue): the shared table
  // carries every other queue's jobs, and a drain there slowed ~6x after the latency section.
  await boss.createQueue(queue, { partition: true });
  for (let i = 0; i < options.count; i += 1000) {
    await boss.insert(
      queue,
      Array.from({ length: Math.min(1000, options.count - i) }, (_, j) => ({ data: { i: i + j } })),
    );
  }
  const started = performance.now();
  let drained = 0;
  const loop = async () => {
    for (;;) {
      const jobs = await boss.fetch(queue, { batchSize: options.batchSize });
      if (jobs.length === 0) return;
      await boss.complete(
        queue,
        jobs.map((job) => job.id),
      );
      drained += jobs.length;
    }
  };
  await Promise.all(Array.from({ length: options.loops }, loop));
  const seconds = (performance.now() - started) / 1000;
  await boss.stop({ graceful: false, timeout: 2000 });
  return { seconds, rate: drained / seconds };
}
