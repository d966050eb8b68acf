// `npm run bench -- scale` (issue 38 item 5): the job table at a million queued jobs (on 20 tags of
// 10 workspaces, none of them served) and ten million completed ones, each figure beside the same
// figure measured on the empty table in the same run:
// - submitting one job over REST, and bulk enqueue: enqueueJobs (1,000 different jobs per
//   statement) and add_batch_jobs over REST (1,000 copies per call, one caller and two);
// - a claim on a served tag (50,000 waiting on it in the full table);
// - the no-op pipeline against raw pg-boss's drain on the same database;
// - the Runs page's query (tRPC job.list), the jobs list API with filters, queue counts and the
//   Workers page's queries;
// - retention deleting expired jobs in batches while claims go on, and the table's size before,
//   after the deletion with a plain VACUUM, and after as many rows are written again;
// - the resident memory of a server and of a worker of 10 slots after each phase's work.
// Set SCALE_QUEUED and SCALE_COMPLETED for a smaller drill (e.g. 100000 and 1000000).
import fs from "node:fs";
import path from "node:path";
import {
  claimJobs,
  createApiToken,
  createUser,
  createWorkspace,
  deleteExpiredJobs,
  enqueueJobs,
  noopJob,
  principalOf,
  sampleFleet,
  startBoss,
} from "@millrace/core";
import { createDb, createPool, type Pool } from "@millrace/db";
import { startEmbeddedPostgres } from "@millrace/db/embedded";
import { migrateDeploy } from "@millrace/db/migrate";
import {
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from "../../apps/worker/src/testing.ts";
import { NOOP_WARM_UP_JOBS, pipelineRun, rawPgBossDrain } from "./pipeline.ts";
import { ms, percentile, settle, summary } from "./stats.ts";

const BATCH_CALLERS = 4;
const QUEUED = Number(process.env.SCALE_QUEUED ?? 1_000_000);
const COMPLETED = Number(process.env.SCALE_COMPLETED ?? 10_000_000);
const WORKSPACES = 10;
const TAGS = 20;
const KEY = "scale-bench-instance-key-0123456789abcdef";
const CLAIM_TAG = "scale-served";
const CLAIM_BACKLOG = 50_000;
// Rounds of the no-op pipeline and raw pg-boss's drain, alternating; each figure is the median.
const PIPELINE_ROUNDS = 5;
const RETENTION_WINDOW_MS = Number(process.env.SCALE_RETENTION_SECS ?? 60) * 1000;
const DAY_SECS = 86_400;

type Summary = ReturnType<typeof summary>;

// Raw pg-boss's drains, fetch batch x loops: the best is the pipeline's baseline.
const RAW_DRAINS = [
  { batchSize: 100, loops: 2 },
  { batchSize: 400, loops: 1 },
];

/** Raw pg-boss's best rate of 5,000 jobs over RAW_DRAINS, after `warmUp` jobs through each queue. */
async function bestRawDrain(databaseUrl: string, warmUp?: number): Promise<number> {
  const rates = [];
  for (const drain of RAW_DRAINS)
    rates.push((await rawPgBossDrain(databaseUrl, { count: 5000, warmUp, ...drain })).rate);
  return Math.max(...rates);
}

interface Phase {
  submit: Summary;
  bulkRate: number;
  /** add_batch_jobs over REST, 1,000 per call: one caller, and BATCH_CALLERS at once. */
  batchRate: number;
  batchRate2: number;
  claim: Summary;
  pipelineRate: number;
  drainRate: number;
  freshDrainRate: number;
  reads: Record<string, Summary>;
  serverRssMb: number;
  workerRssMb: number;
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function timed(runs: number, call: () => Promise<unknown>): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const started = performance.now();
    await call();
    if (i >= 3) samples.push(performance.now() - started);
  }
  return summary(samples);
}

async function relationMb(pool: Pool): Promise<{ table: number; indexes: number; dead: number }> {
  const { rows } = await pool.query<{ table: string; indexes: string; dead: string }>(
    `SELECT pg_table_size('public.job') AS table, pg_indexes_size('public.job') AS indexes,
            (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'public.job'::regclass) AS dead`,
  );
  const mb = (bytes: string) => Number(bytes) / 1024 / 1024;
  return { table: mb(rows[0]!.table), indexes: mb(rows[0]!.indexes), dead: Number(rows[0]!.dead) };
}

/**
 * `count` finished jobs spread over the last 30 days (a fiftieth failed, a tenth with a log). Their
 * ids are UUIDv7s of their creation time, as Millrace's own (newJobId): random ids would put every
 * new job's primary key entry among the fill's instead of after them.
 */
export async function insertCompleted(pool: Pool, count: number, log: (line: string) => void): Promise<void> {
  const chunk = 1_000_000;
  for (let from = 0; from < count; from += chunk) {
    const to = Math.min(count, from + chunk);
    const started = performance.now();
    await pool.query(
      `WITH made AS (
         INSERT INTO job (id, workspace_id, kind, script_path, language, args, tag, status, result,
                          created_by, permissioned_as, created_at, scheduled_for, started_at,
                          completed_at, worker_name, trigger_kind)
         SELECT uuidv7(-age), 'ws' || (n % ${WORKSPACES}), 'script', 'f/bench/s' || (n % 50), 'bash',
                '{"x": 1}', 'scale-tag-' || (n % ${TAGS}),
                (CASE WHEN n % 50 = 0 THEN 'failure' ELSE 'success' END)::job_status, '"ok"',
                'bench', 'u/bench', t, t, t, t + interval '1 second', 'wk-bench', 'api'
           FROM (SELECT n, age, (now() AT TIME ZONE 'UTC') - age AS t
                   FROM (SELECT n, (n::float8 / $1 * 30 * ${DAY_SECS}) * interval '1 second' AS age
                           FROM generate_series($2::int, $3::int - 1) AS n) AS aged) AS spread
         RETURNING id)
       INSERT INTO job_log (job_id, logs)
       SELECT id, 'line 1' || chr(10) || 'line 2' || chr(10) FROM made WHERE random() < 0.1`,
      [count, from, to],
    );
    log(
      `  ${to.toLocaleString("en")} completed jobs (${((performance.now() - started) / 1000).toFixed(0)} s)`,
    );
  }
}

/** `count` jobs queued on tags no worker serves. */
export async function insertQueued(pool: Pool, count: number): Promise<void> {
  await pool.query(
    // A backlog that built up over time: one job a millisecond (a single statement would give
    // them all one created_at, which no real backlog has).
    `INSERT INTO job (id, workspace_id, kind, language, content, tag, created_by, permissioned_as, created_at, scheduled_for)
     SELECT uuidv7(-(n * interval '1 millisecond')), 'ws' || (n % ${WORKSPACES}), 'script', 'bash', 'echo',
            'scale-tag-' || (n % ${TAGS}), 'bench', 'u/bench', t, t
       FROM (SELECT n, (now() AT TIME ZONE 'UTC') - n * interval '1 millisecond' AS t
               FROM generate_series(1, $1::int) AS n) AS spread`,
    [count],
  );
}

export async function scaleBench(root: string, log: (line: string) => void = console.log): Promise<void> {
  const dir = path.join(root, ".data/bench-scale-pg");
  fs.rmSync(dir, { recursive: true, force: true });
  const database = await startEmbeddedPostgres(dir, {
    port: Number(process.env.BENCH_SCALE_PG_PORT ?? 5498),
  });
  let server: TestServer | undefined;
  let worker: TestWorker | undefined;
  const pool = createPool(database.url, { max: 4, applicationName: "millrace-bench-scale" });
  const boss = await (async () => {
    await migrateDeploy(database.url);
    return startBoss(database.url, "worker");
  })();
  try {
    const ctx = { pool, db: createDb(pool) };
    const user = await createUser(ctx, { email: "scale@example.com", password: "scale-password-1" });
    await pool.query('UPDATE "user" SET is_super_admin = true WHERE id = $1', [user.id]);
    for (let i = 0; i < WORKSPACES; i++)
      await createWorkspace(ctx as never, principalOf(user), { id: `ws${i}`, name: `ws${i}` });
    const token = await createApiToken(ctx, principalOf(user), { label: "scale" });
    const username = principalOf(user).username;
    server = await startTestServer({ DATABASE_URL: database.url, MILLRACE_SECRET_KEY: KEY });
    worker = await startTestWorker(database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: server.url,
      WORKER_TAGS: "scale-memory",
      NUM_WORKERS: "10",
    });
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const get = async (route: string) => {
      const response = await fetch(`${server!.url}${route}`, { headers });
      if (response.status !== 200)
        throw new Error(`GET ${route}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    };
    const trpc = (procedure: string, input?: unknown) =>
      get(
        `/api/trpc/${procedure}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`,
      );
    const reads: Record<string, () => Promise<void>> = {
      "Runs page (tRPC job.list)": () => trpc("job.list", { workspace: "ws3" }),
      "jobs/list": () => get("/api/w/ws3/jobs/list?per_page=30"),
      "jobs/list?success=true": () => get("/api/w/ws3/jobs/list?success=true&per_page=30"),
      "jobs/list?script_path_exact=…": () =>
        get("/api/w/ws3/jobs/list?script_path_exact=f/bench/s7&per_page=30"),
      "jobs/list?running=false&tag": () =>
        get("/api/w/ws3/jobs/list?running=false&tag=scale-tag-3&per_page=30"),
      "jobs/list?created_after": () =>
        get(
          `/api/w/ws3/jobs/list?created_after=${new Date(Date.now() - 3600_000).toISOString()}&per_page=30`,
        ),
      "workers/queue_counts": () => get("/api/workers/queue_counts"),
      "Workers page (tRPC worker.list)": () => trpc("worker.list"),
      "Workers page (tRPC worker.queueStats)": () => trpc("worker.queueStats"),
    };

    const measure = async (label: string, claimBacklog: number): Promise<Phase> => {
      log(`\n${label}: measuring`);
      const submit = await timed(100, async () => {
        const response = await fetch(`${server!.url}/api/w/ws0/jobs/run/preview`, {
          method: "POST",
          headers,
          body: JSON.stringify({ language: "bash", content: "echo hi", args: {}, tag: "scale-submit" }),
        });
        if (response.status !== 201) throw new Error(`submit: ${response.status} ${await response.text()}`);
        await response.text();
      });
      const bulkCount = 20_000;
      const bulkStarted = performance.now();
      for (let i = 0; i < bulkCount; i += 1000)
        await enqueueJobs(
          pool,
          boss,
          Array.from({ length: 1000 }, () => noopJob("ws1", "scale-bulk", {}, username)),
        );
      const bulkRate = bulkCount / ((performance.now() - bulkStarted) / 1000);
      // Windmill's add_batch_jobs: 1,000 copies of a job per call, from one caller and from
      // BATCH_CALLERS at once, as a load generator's clients call it: one caller leaves PostgreSQL
      // idle while each call's answer and commit travel, several keep both cores busy.
      const batchCalls = async (calls: number) => {
        for (let i = 0; i < calls; i++) {
          const response = await fetch(`${server!.url}/api/w/ws1/jobs/add_batch_jobs/1000`, {
            method: "POST",
            headers,
            body: JSON.stringify({ kind: "noop", tag: "scale-bulk" }),
          });
          if (response.status !== 200)
            throw new Error(`add_batch_jobs: ${response.status} ${await response.text()}`);
          await response.arrayBuffer();
        }
      };
      let started = performance.now();
      await batchCalls(20);
      const batchRate = 20_000 / ((performance.now() - started) / 1000);
      started = performance.now();
      await Promise.all(Array.from({ length: BATCH_CALLERS }, () => batchCalls(20)));
      const batchRate2 = (BATCH_CALLERS * 20_000) / ((performance.now() - started) / 1000);
      // Claims on a served tag, one job at a time as a free slot asks, with `claimBacklog` waiting.
      for (let i = 0; i < claimBacklog; i += 1000)
        await enqueueJobs(
          pool,
          boss,
          Array.from({ length: Math.min(1000, claimBacklog - i) }, () =>
            noopJob("ws2", CLAIM_TAG, {}, username),
          ),
        );
      const claim = await timed(200, async () => {
        const claimed = await claimJobs(pool, boss, CLAIM_TAG, ["wk-bench-claimer"]);
        if (claimed.length !== 1) throw new Error(`claimed ${claimed.length} jobs`);
      });
      await pool.query(
        `UPDATE job SET status = 'success', completed_at = now() AT TIME ZONE 'UTC' WHERE tag = $1 AND status = 'running'`,
        [CLAIM_TAG],
      );
      // Alternating rounds, each figure the median of its PIPELINE_ROUNDS: one round of each varied
      // by a fifth (a 5,000-job drain lasts ~0.2 s) from run to run on these VMs, which decided the
      // ratio's verdict. Raw pg-boss's
      // figure in a round is its best drain, as in section 2: fetching 100 at a time on two
      // connections, or 400 at a time as the pipeline's worker claims (which was faster on some
      // VMs: 1.6-1.9x at 20,000 jobs, each fetch costing more the more jobs are queued). It is
      // measured after as many jobs through its queue as the pipeline's warm-up (rawPgBossDrain
      // says why); its drain on a fresh queue, the baseline until then, is printed beside it.
      const pipelineRates: number[] = [];
      const pipelineCpu: number[] = [];
      const drainRates: number[] = [];
      const freshDrainRates: number[] = [];
      for (let round = 0; round < PIPELINE_ROUNDS; round++) {
        const run = await pipelineRun(database.url, {
          count: 5000,
          slots: 400,
          tag: `scale-noop-${label.length}-${round}`,
          args: {},
          warmUp: NOOP_WARM_UP_JOBS,
        });
        pipelineRates.push(run.rate);
        pipelineCpu.push(run.machineCpuUsPerJob);
        drainRates.push(await bestRawDrain(database.url, NOOP_WARM_UP_JOBS));
        freshDrainRates.push(await bestRawDrain(database.url));
      }
      log(
        `  no-op rounds: pipeline ${pipelineRates.map((rate) => rate.toFixed(0)).join(", ")} jobs/s ` +
          `(machine CPU ${pipelineCpu.map((us) => us.toFixed(0)).join(", ")} µs per job); ` +
          `raw pg-boss ${drainRates.map((rate) => rate.toFixed(0)).join(", ")} jobs/s ` +
          `(on a fresh queue ${freshDrainRates.map((rate) => rate.toFixed(0)).join(", ")})`,
      );
      const pipeline = { rate: percentile(pipelineRates, 50) };
      const drain = { rate: percentile(drainRates, 50) };
      // What the leader does every FLEET_SAMPLE_SECS (the bench's server runs no leader): the
      // pages read its sample once the queue is large (fleet/sample.ts).
      const readFigures: Record<string, Summary> = {
        "the leader's fleet sample (per interval)": await timed(5, () => sampleFleet(pool)),
      };
      for (const [name, read] of Object.entries(reads)) readFigures[name] = await timed(20, read);
      // The worker's memory after running jobs of this phase.
      await enqueueJobs(
        pool,
        boss,
        Array.from({ length: 2000 }, () => noopJob("ws0", "scale-memory", {}, username)),
      );
      for (;;) {
        const { rows } = await pool.query<{ left: number }>(
          "SELECT count(*)::int AS left FROM job WHERE tag = 'scale-memory' AND status IN ('queued', 'running')",
        );
        if (rows[0]!.left === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      return {
        submit,
        bulkRate,
        batchRate,
        batchRate2,
        claim,
        pipelineRate: pipeline.rate,
        drainRate: drain.rate,
        freshDrainRate: percentile(freshDrainRates, 50),
        reads: readFigures,
        serverRssMb: rssMb(server!.pid),
        workerRssMb: rssMb(worker!.process.pid!),
      };
    };

    const empty = await measure("empty table", 300);

    log(
      `\nfilling: ${COMPLETED.toLocaleString("en")} completed and ${QUEUED.toLocaleString("en")} queued jobs`,
    );
    const fillStarted = performance.now();
    await insertCompleted(pool, COMPLETED, log);
    await insertQueued(pool, QUEUED);
    // A table of that size that grew over time has been vacuumed and frozen as it grew. Loaded at
    // once, it is not, and autovacuum's first passes over its 11 million rows (a minute or more
    // of a core, seen ending in the middle of the full table's figures) would be measured with
    // them: the fill is frozen and written out first, and the figures wait for autovacuum.
    await pool.query("VACUUM (FREEZE, ANALYZE) job");
    await pool.query("VACUUM (FREEZE, ANALYZE) job_log");
    await pool.query("CHECKPOINT");
    const fillSecs = (performance.now() - fillStarted) / 1000;
    const settled = await settle({
      quietSecs: 5,
      busy: async () => {
        const { rows } = await pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'",
        );
        return rows[0]!.n > 0;
      },
    });
    log(
      `  the machine settled in ${settled.waitedSecs.toFixed(0)} s ` +
        `(${(settled.firstBusyShare * 100).toFixed(0)} % busy in the first second)`,
    );
    const { rows: counts } = await pool.query<{ status: string; n: number }>(
      "SELECT status::text, count(*)::int AS n FROM job GROUP BY status ORDER BY status",
    );
    log(
      `  filled in ${fillSecs.toFixed(0)} s: ${counts.map((c) => `${c.status} ${c.n.toLocaleString("en")}`).join(", ")}`,
    );

    const fullStarted = new Date();
    const full = await measure("full table", CLAIM_BACKLOG);
    // Whether autovacuum still came to the job table while the full table was measured.
    const { rows: autovacuum } = await pool.query<{ vacuumed: boolean; analyzed: boolean }>(
      `SELECT coalesce(last_autovacuum > $1, false) AS vacuumed, coalesce(last_autoanalyze > $1, false) AS analyzed
         FROM pg_stat_user_tables WHERE relid = 'public.job'::regclass`,
      [fullStarted],
    );
    if (autovacuum[0]?.vacuumed || autovacuum[0]?.analyzed)
      log(
        `  (autovacuum ${autovacuum[0].vacuumed ? "vacuumed" : "analyzed"} the job table during these figures)`,
      );

    // Retention: jobs completed more than 15 days ago (half the completed ones) are expired. It
    // deletes in batches for a window while a free slot claims one job at a time, as workers do.
    log(`\nretention: deleting the expired half of the completed jobs for ${RETENTION_WINDOW_MS / 1000} s`);
    const sizeBefore = await relationMb(pool);
    for (let i = 0; i < 40_000; i += 1000)
      await enqueueJobs(
        pool,
        boss,
        Array.from({ length: 1000 }, () => noopJob("ws2", CLAIM_TAG, {}, username)),
      );
    const quietClaims = await timed(100, () => claimJobs(pool, boss, CLAIM_TAG, ["wk-bench-claimer"]));
    // As long a window without retention, claimed the same way: the longest claim of a machine
    // that does other work beside (the bench itself, other processes), to read the one below by.
    const quietSamples: number[] = [];
    const quietUntil = performance.now() + RETENTION_WINDOW_MS;
    while (performance.now() < quietUntil) {
      const started = performance.now();
      await claimJobs(pool, boss, CLAIM_TAG, ["wk-bench-claimer"]);
      quietSamples.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const quietMax = Math.max(...quietSamples);
    const abort = new AbortController();
    const retentionPool = createPool(database.url, { max: 1, applicationName: "millrace-bench-retention" });
    const retentionStarted = performance.now();
    const deleting = deleteExpiredJobs(retentionPool, {
      retentionSecs: 15 * DAY_SECS,
      signal: abort.signal,
    });
    const timer = setTimeout(() => abort.abort(), RETENTION_WINDOW_MS);
    const duringSamples: number[] = [];
    let finished = false;
    void deleting.finally(() => (finished = true));
    while (!finished && duringSamples.length < 18_000) {
      const started = performance.now();
      await claimJobs(pool, boss, CLAIM_TAG, ["wk-bench-claimer"]);
      duringSamples.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const deleted = await deleting;
    clearTimeout(timer);
    const retentionSecs = (performance.now() - retentionStarted) / 1000;
    await retentionPool.end();
    const during = summary(duringSamples);
    const duringMax = Math.max(...duringSamples);
    const sizeAfterDelete = await relationMb(pool);
    await pool.query("VACUUM job");
    await pool.query("VACUUM job_log");
    const sizeAfterVacuum = await relationMb(pool);
    // As many rows again: a vacuumed table reuses the space, it does not grow.
    await insertCompleted(pool, deleted, () => {});
    const sizeAfterRefill = await relationMb(pool);

    // The report.
    const row = (name: string, a: string, b: string, ratio: string, target: string) =>
      log(`   ${name.padEnd(48)} ${a.padStart(14)} ${b.padStart(14)} ${ratio.padStart(7)}   ${target}`);
    const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
    log(
      `\n11. The job table at scale: ${QUEUED.toLocaleString("en")} queued (20 tags, 10 workspaces, none served), ` +
        `${COMPLETED.toLocaleString("en")} completed`,
    );
    row("", "empty table", "full table", "ratio", "target");
    const ratio = (a: number, b: number) => `${(b / a).toFixed(2)}x`;
    row(
      "submit over REST, p50",
      ms(empty.submit.p50),
      ms(full.submit.p50),
      ratio(empty.submit.p50, full.submit.p50),
      `<= 2x: ${verdict(full.submit.p50 <= 2 * empty.submit.p50)}`,
    );
    row(
      "submit over REST, p95",
      ms(empty.submit.p95),
      ms(full.submit.p95),
      ratio(empty.submit.p95, full.submit.p95),
      "",
    );
    row(
      "enqueueJobs (1,000 different jobs a statement)",
      `${empty.bulkRate.toFixed(0)} jobs/s`,
      `${full.bulkRate.toFixed(0)} jobs/s`,
      ratio(empty.bulkRate, full.bulkRate),
      "",
    );
    row(
      "add_batch_jobs (REST, 1,000 a call), 1 caller",
      `${empty.batchRate.toFixed(0)} jobs/s`,
      `${full.batchRate.toFixed(0)} jobs/s`,
      ratio(empty.batchRate, full.batchRate),
      "",
    );
    row(
      `add_batch_jobs (REST, 1,000 a call), ${BATCH_CALLERS} callers`,
      `${empty.batchRate2.toFixed(0)} jobs/s`,
      `${full.batchRate2.toFixed(0)} jobs/s`,
      ratio(empty.batchRate2, full.batchRate2),
      `>= 20,000 jobs/s: ${verdict(full.batchRate2 >= 20_000)}`,
    );
    row(
      `claim on a served tag, p50 (${CLAIM_BACKLOG.toLocaleString("en")} waiting)`,
      ms(empty.claim.p50),
      ms(full.claim.p50),
      ratio(empty.claim.p50, full.claim.p50),
      `<= 2x: ${verdict(full.claim.p50 <= 2 * empty.claim.p50)}`,
    );
    row(
      "claim on a served tag, p95",
      ms(empty.claim.p95),
      ms(full.claim.p95),
      ratio(empty.claim.p95, full.claim.p95),
      `<= 2x: ${verdict(full.claim.p95 <= 2 * empty.claim.p95)}`,
    );
    row(
      "no-op pipeline (5,000 jobs, 400 slots)",
      `${empty.pipelineRate.toFixed(0)} jobs/s`,
      `${full.pipelineRate.toFixed(0)} jobs/s`,
      ratio(empty.pipelineRate, full.pipelineRate),
      "",
    );
    row(
      "raw pg-boss drain, best of 100x2 and 400x1 (after 20,000 through its queue)",
      `${empty.drainRate.toFixed(0)} jobs/s`,
      `${full.drainRate.toFixed(0)} jobs/s`,
      ratio(empty.drainRate, full.drainRate),
      "",
    );
    row(
      "pipeline / raw drain",
      `${((100 * empty.pipelineRate) / empty.drainRate).toFixed(0)} %`,
      `${((100 * full.pipelineRate) / full.drainRate).toFixed(0)} %`,
      "",
      `>= 50 % on the full table: ${verdict(full.pipelineRate >= 0.5 * full.drainRate)}`,
    );
    row(
      "raw pg-boss drain on a fresh queue (the baseline until 2026-11-30)",
      `${empty.freshDrainRate.toFixed(0)} jobs/s`,
      `${full.freshDrainRate.toFixed(0)} jobs/s`,
      ratio(empty.freshDrainRate, full.freshDrainRate),
      "",
    );
    row(
      "pipeline / fresh-queue drain",
      `${((100 * empty.pipelineRate) / empty.freshDrainRate).toFixed(0)} %`,
      `${((100 * full.pipelineRate) / full.freshDrainRate).toFixed(0)} %`,
      "",
      "",
    );
    for (const name of Object.keys(empty.reads)) {
      const a = empty.reads[name]!;
      const b = full.reads[name]!;
      const page = !name.startsWith("the leader");
      row(
        `${name}, p95`,
        ms(a.p95),
        ms(b.p95),
        ratio(a.p95, b.p95),
        page ? `<= 500 ms: ${verdict(b.p95 <= 500)}` : "",
      );
    }
    row(
      "server memory (RSS)",
      `${empty.serverRssMb.toFixed(0)} MB`,
      `${full.serverRssMb.toFixed(0)} MB`,
      ratio(empty.serverRssMb, full.serverRssMb),
      "flat",
    );
    row(
      "worker memory per slot (RSS / 10)",
      `${(empty.workerRssMb / 10).toFixed(1)} MB`,
      `${(full.workerRssMb / 10).toFixed(1)} MB`,
      ratio(empty.workerRssMb, full.workerRssMb),
      "flat",
    );
    log(
      `\n   retention: ${deleted.toLocaleString("en")} expired jobs deleted in ${retentionSecs.toFixed(0)} s ` +
        `(${(deleted / retentionSecs).toFixed(0)} jobs/s, batches of at most 1,000 sized to take 20 ms, a pause at least as long after each)`,
    );
    log(
      `   claims meanwhile: p50 ${ms(during.p50)}, p95 ${ms(during.p95)}, max ${ms(duringMax)} ` +
        `(without retention: p50 ${ms(quietClaims.p50)}, p95 ${ms(quietClaims.p95)}, max ${ms(quietMax)} over as long a window); ` +
        `longest pause over the quiet p50: ${ms(duringMax - quietClaims.p50)} — ` +
        `target <= 50 ms: ${verdict(duringMax - quietClaims.p50 <= 50)}`,
    );
    const size = (s: { table: number; indexes: number; dead: number }) =>
      `table ${s.table.toFixed(0)} MB + indexes ${s.indexes.toFixed(0)} MB (${s.dead.toLocaleString("en")} dead rows)`;
    log(`   size before:                   ${size(sizeBefore)}`);
    log(`   after the deletion:            ${size(sizeAfterDelete)}`);
    log(`   after VACUUM:                  ${size(sizeAfterVacuum)}`);
    log(`   after as many rows written again: ${size(sizeAfterRefill)}`);
  } finally {
    await worker?.stop();
    await server?.stop();
    await boss.stop({ graceful: false, timeout: 2000 }).catch(() => {});
    await pool.end();
    await database.stop();
  }
}
