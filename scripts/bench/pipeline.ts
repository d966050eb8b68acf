import { enqueueJobs, noopJob, startBoss } from "@millrace/core";
import { createPool, type Pool } from "@millrace/db";
import { PgBoss } from "pg-boss";
import { startTestWorker } from "../../apps/worker/src/testing.ts";
import { machineBusyMs } from "./stats.ts";

// The measured jobs become due together this long after their enqueue started, so that a running
// worker finds them all queued (an enqueue of thousands takes about a second on 2 cores).
const DUE_AFTER_MS = 4000;

/**
 * The whole Millrace pipeline on `count` jobs of a fresh tag, drained by `processes` running
 * worker processes of `slots` slots each (claim through pg-boss, run, record the outcome), from
 * the first job started to the last completed, as jobs per second; and the rate at which they
 * were enqueued (our rows and their pg-boss jobs).
 *
 * The workers are running before the jobs come, and have each run about `warmUp` jobs on the tag
 * first (by default two claims' worth): a long-running worker's database connections have read the
 * tables and planned the statements, as raw pg-boss's have by the time it drains the jobs it
 * inserted. (A worker started on a full queue spent ~100 ms more on its first claim, a sixth of a
 * 5,000-job drain.) A no-op drain also needs the worker's JavaScript compiled: after 800 jobs,
 * V8's background threads still spent 8-12 µs per measured job compiling and collecting; after
 * 20,000, 3-6 µs (a worker's other threads, /proc/<pid>/task, 20,000-job drains on the full
 * scale table). The measured jobs are deferred to one moment so that the drain does not race
 * their enqueue.
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
    warmUp?: number;
  },
): Promise<{ seconds: number; rate: number; enqueueRate: number; machineCpuUsPerJob: number }> {
  const pool = createPool(databaseUrl, { max: 4, applicationName: "millrace-bench" });
  const boss = await startBoss(databaseUrl, "worker");
  const jobs = (count: number, scheduledFor: Date | null) =>
    Array.from({ length: count }, () => ({
      ...noopJob("bench", options.tag, options.args, "bench"),
      ...(options.bash ? { kind: "script" as const, content: options.bash } : {}),
      scheduledFor,
    }));
  const enqueue = async (inputs: ReturnType<typeof jobs>) => {
    for (let i = 0; i < inputs.length; i += 1000) await enqueueJobs(pool, boss, inputs.slice(i, i + 1000));
  };
  const processes = options.processes ?? 1;
  const workers = await Promise.all(
    Array.from({ length: processes }, () =>
      startTestWorker(databaseUrl, {
        WORKER_TAGS: options.tag,
        NUM_WORKERS: String(options.slots),
        // For profiling, as for the bench instance (instance.ts).
        ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
      }),
    ),
  );
  try {
    await enqueue(jobs((options.warmUp ?? 2 * options.slots) * processes, null));
    await waitUntilDrained(pool, options.tag);
    const warmedUp = new Date();
    const enqueueStarted = performance.now();
    await enqueue(jobs(options.count, new Date(Date.now() + DUE_AFTER_MS)));
    const enqueueMs = performance.now() - enqueueStarted;
    if (enqueueMs > DUE_AFTER_MS)
      throw new Error(`enqueue took ${enqueueMs.toFixed(0)} ms: raise DUE_AFTER_MS`);
    // The machine's CPU from just before the jobs are due until they are drained (whatever else
    // ran meanwhile included): a slow drain either spent more CPU per job or waited.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, DUE_AFTER_MS - enqueueMs - 100)));
    const busyBefore = machineBusyMs();
    await waitUntilDrained(pool, options.tag);
    const busyMs = machineBusyMs() - busyBefore;
    const { rows } = await pool.query<{ done: number; first: Date; last: Date }>(
      `SELECT count(*)::int AS done, min(started_at) AS first, max(completed_at) AS last
         FROM job WHERE tag = $1 AND status = 'success' AND created_at > $2`,
      [options.tag, warmedUp],
    );
    const { done, first, last } = rows[0]!;
    if (done !== options.count)
      throw new Error(`${options.count - done} of ${options.count} jobs did not succeed`);
    const seconds = (last.getTime() - first.getTime()) / 1000;
    return {
      seconds,
      rate: options.count / seconds,
      enqueueRate: options.count / (enqueueMs / 1000),
      machineCpuUsPerJob: (busyMs * 1000) / options.count,
    };
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await boss.stop({ graceful: false, timeout: 2000 });
    await pool.end();
  }
}

// Polled through the queue's partial index, and only whether any job is left: a count over the
// whole job table every 100 ms cost PostgreSQL ~5 % of the CPU it spent on the drain being
// measured, and a count of the tag's queued and running jobs still 7-8 % (it visits every entry
// of the tag, each job's queued and running ones, dead or not), where raw pg-boss's drain, its
// baseline, is measured without any such poll. EXISTS stops at the first job left.
async function waitUntilDrained(pool: Pool, tag: string): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ left: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM job WHERE status IN ('queued', 'running') AND tag = $1) AS left`,
      [tag],
    );
    if (process.env.BENCH_VERBOSE) console.log(`  jobs left: ${rows[0]!.left}`);
    if (!rows[0]!.left) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Jobs a no-op drain's worker runs before the measured ones (see pipelineRun). */
export const NOOP_WARM_UP_JOBS = 20_000;

/**
 * pg-boss alone on the same database: insert `count` jobs, then drain them as fast as it can. With
 * `warmUp`, as many jobs as the pipeline's warm-up ran are first inserted and drained through the
 * same queue, so that both are measured on a queue that has just served that many: pg-boss keeps a
 * completed job in its queue's table (for a week by default), and a fresh queue is a state no
 * queue in use is in (a 5,000-job drain after 20,000 ran at ~45k jobs/s where a fresh queue's
 * ran at ~52k, on the scale bench's full table). The pipeline's own queue holds none of its used
 * dispatches (claims delete them), only their dead row versions.
 */
export async function rawPgBossDrain(
  databaseUrl: string,
  options: { count: number; batchSize: number; loops: number; warmUp?: number },
): Promise<{ seconds: number; rate: number }> {
  const boss = new PgBoss({ connectionString: databaseUrl, supervise: false, schedule: false, max: 6 });
  boss.on("error", () => {});
  await boss.start();
  const queue = `bench_drain_${Date.now()}`;
  // A table of its own, as each Millrace tag's queue has (see ensureQueue): the shared table
  // carries every other queue's jobs, and a drain there slowed ~6x after the latency section.
  await boss.createQueue(queue, { partition: true });
  const insert = async (count: number) => {
    for (let i = 0; i < count; i += 1000) {
      await boss.insert(
        queue,
        Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({ data: { i: i + j } })),
      );
    }
  };
  const drain = async () => {
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
    return drained;
  };
  if (options.warmUp) {
    await insert(options.warmUp);
    await drain();
  }
  await insert(options.count);
  const started = performance.now();
  const drained = await drain();
  const seconds = (performance.now() - started) / 1000;
  await boss.stop({ graceful: false, timeout: 2000 });
  return { seconds, rate: drained / seconds };
}
