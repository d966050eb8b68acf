// CPU per plain job (issue 38 item 6): what the machine spends on a sandboxed `sleep 0.1` job
// submitted over HTTP, beside the same sleep in a bare bubblewrap sandbox, measured in the same
// run, in alternating rounds. Millrace's own share (web, worker, PostgreSQL, launcher) is the
// difference. `npm run bench -- cpu` runs this section alone; section 8 (flows) uses the same runs.
import { spawn } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import type pg from "pg";
import { startTestWorker } from "../../apps/worker/src/testing.ts";
import { bwrapArgs, detectSandbox, jobUser } from "../../packages/runtime/src/exec/sandbox.ts";
import type { BenchInstance } from "./instance.ts";
import { machineBusyMs, ms, treeCpuByProcess } from "./stats.ts";

export const SLEEP_MS = 100;
export const JOBS = 100;
export const SLOTS = 8;
// Each figure varies by several points from one round to the next on these VMs, and drifts over
// a run: the rounds of Millrace and of the bare runs alternate, and each figure is the median of
// its rounds.
export const REPEATS = 5;
const WARMUP_ROUNDS = 2;
// Issue 38's target: the machine's CPU per plain job at most this many times the bare sandbox's.
const TARGET_RATIO = 1.5;
const IDLE_GAP_MS = 150;

export interface CpuRun {
  seconds: number;
  rate: number;
  /**
   * The machine's busy CPU per job (ms), every process but the bench's own: for Millrace that is
   * the client submitting the jobs over HTTP and polling for their end, which is not part of the
   * platform (issue 38 counts server, worker, PostgreSQL and launcher); the bare runs have their
   * own spawner process, which counts.
   */
  cpuPerJob: number;
  /** What the bench's own process spent per job (ms), left out of cpuPerJob. */
  benchCpuPerJob: number;
  /** The CPU per job of this bench's own process tree (ms): what else runs on the machine is left out. */
  treeCpuPerJob: number;
  /** treeCpuPerJob by process (see treeCpuByProcess), largest first. */
  byProcess: [string, number][];
}

/** The run of median duration. */
export function medianRun<T extends { seconds: number }>(runs: T[]): T {
  return [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)]!;
}

/** The run of median CPU per job. */
function medianCpuRun(runs: CpuRun[]): CpuRun {
  return [...runs].sort((a, b) => a.cpuPerJob - b.cpuPerJob)[Math.floor(runs.length / 2)]!;
}

async function measured(jobs: number, run: () => Promise<void>): Promise<CpuRun> {
  await new Promise((resolve) => setTimeout(resolve, IDLE_GAP_MS));
  const machineBefore = machineBusyMs();
  const benchBefore = process.cpuUsage();
  const treeBefore = treeCpuByProcess();
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  const bench = process.cpuUsage(benchBefore);
  const benchCpuPerJob = (bench.user + bench.system) / 1000 / jobs;
  const cpuPerJob = (machineBusyMs() - machineBefore) / jobs - benchCpuPerJob;
  const byProcess = new Map<string, number>();
  for (const [label, ms] of treeCpuByProcess()) {
    const delta = (ms - (treeBefore.get(label) ?? 0)) / jobs;
    if (delta > 0) byProcess.set(label, delta);
  }
  const treeCpuPerJob = [...byProcess.values()].reduce((a, b) => a + b, 0);
  return {
    seconds,
    rate: jobs / seconds,
    cpuPerJob,
    benchCpuPerJob,
    treeCpuPerJob,
    byProcess: [...byProcess].sort((a, b) => b[1] - a[1]),
  };
}

/**
 * One round of the machine's own ceilings for a job: `JOBS` times `bash -c 'sleep …'`, `SLOTS`
 * at a time, each in a bare bubblewrap sandbox as a job's (null: no bwrap here) or as a bare
 * process, started by a small spawner process (bare-spawner.ts) with no worker, database or warm
 * sandbox. Whatever Millrace does per job comes on top of the first; nothing that starts a
 * process per job beats the second.
 */
export async function bareRound(sandboxed: boolean): Promise<CpuRun | null> {
  const sandbox = detectSandbox();
  if (sandboxed && sandbox.kind !== "bubblewrap") return null;
  const dir = mkdtempSync(path.join(os.tmpdir(), "millrace-bench-bare-"));
  // As the worker starts a job: as the job user (nobody when the worker is root) in its folder.
  const user = jobUser();
  if (user) chownSync(dir, user.uid, user.gid);
  const command = ["/bin/bash", "-c", `sleep ${SLEEP_MS / 1000}`];
  const [file, ...args] =
    sandbox.kind === "bubblewrap" && sandboxed
      ? [
          sandbox.path,
          ...bwrapArgs({ jobDir: dir, network: true, executables: [], readOnlyPaths: [] }),
          ...command,
        ]
      : command;
  const spawner = spawn(
    process.execPath,
    [
      path.join(import.meta.dirname, "bare-spawner.ts"),
      JSON.stringify({ file, args, cwd: dir, ...(user ?? {}), jobs: JOBS, lanes: SLOTS }),
    ],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const lines = readline.createInterface({ input: spawner.stdout! })[Symbol.asyncIterator]();
  const next = async () => String((await lines.next()).value ?? "exited");
  try {
    if ((await next()) !== "ready") throw new Error("the bare spawner did not start");
    return await measured(JOBS, async () => {
      spawner.stdin!.write("go\n");
      const outcome = await next();
      if (outcome !== "done") throw new Error(`bare run: ${outcome}`);
    });
  } finally {
    spawner.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One round of `JOBS` plain jobs of a `sleep 0.1` bash script whose tag a worker of `SLOTS` slots
 * serves (`submit` sends one), each submitted over HTTP as soon as the previous submit answered,
 * measured until the last one is recorded (polled every `pollMs`).
 */
export async function plainRound(
  submit: () => Promise<string>,
  pool: pg.Pool,
  pollMs: number,
): Promise<CpuRun> {
  return measured(JOBS, async () => {
    const ids: string[] = [];
    for (let j = 0; j < JOBS; j++) ids.push(await submit());
    for (;;) {
      const { rows: left } = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM job WHERE id = ANY($1::uuid[]) AND status IN ('queued', 'running')",
        [ids],
      );
      if (left[0]!.n === 0) break;
      // A poll costs the database CPU that counts as the jobs': one every 100 ms (a few for the
      // whole run) adds at most 100 ms of idle time to the window instead. Section 8 polls
      // every 5 ms, its rate being what it compares.
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  });
}

/**
 * Unmeasured rounds of plain jobs, so that the rounds measured find the instance as a long-running
 * one is: a fresh server and worker spend their first ~200 jobs compiling their hot paths and
 * collecting what starting up left (rounds of 100 after a 16-job warm-up cost 12-14, then 11-12,
 * then 8.6-9.6 ms a job on one VM; the bench's own client, warming up too, showed the same curve).
 */
export async function warmUp(submit: () => Promise<string>, pool: pg.Pool, pollMs = 100): Promise<void> {
  for (let i = 0; i < WARMUP_ROUNDS; i++) await plainRound(submit, pool, pollMs);
}

export interface PlainAndBareRuns {
  plain: CpuRun;
  bareSandboxes: CpuRun | null;
  bareProcesses: CpuRun;
}

/**
 * REPEATS rounds each of plain jobs (see plainRound), bare sandboxes and bare processes (see
 * bareRound), alternating so that a drift of the VM's speed over the run weighs on all three
 * alike; each figure is the round of median CPU per job.
 */
export async function plainAndBareRuns(
  submit: () => Promise<string>,
  pool: pg.Pool,
  pollMs = 100,
): Promise<PlainAndBareRuns> {
  const plain: CpuRun[] = [];
  const sandboxes: CpuRun[] = [];
  const processes: CpuRun[] = [];
  for (let i = 0; i < REPEATS; i++) {
    plain.push(await plainRound(submit, pool, pollMs));
    const sandboxed = await bareRound(true);
    if (sandboxed) sandboxes.push(sandboxed);
    processes.push((await bareRound(false))!);
  }
  return {
    plain: medianCpuRun(plain),
    bareSandboxes: sandboxes.length ? medianCpuRun(sandboxes) : null,
    bareProcesses: medianCpuRun(processes),
  };
}

export interface JobCpuBench extends PlainAndBareRuns {
  /** With pg_stat_statements preloaded: the statements per plain job, by total time (else []). */
  statements?: StatementCost[];
}

/** Plain jobs on a worker of its own (`SLOTS` slots, sandboxed as configured), and the bare runs. */
export async function jobCpuBench(instance: BenchInstance, pool: pg.Pool): Promise<JobCpuBench> {
  const headers = { Authorization: `Bearer ${instance.userToken}`, "content-type": "application/json" };
  const api = (p: string, body: unknown) =>
    fetch(`${instance.baseUrl}/api${p}`, { method: "POST", headers, body: JSON.stringify(body) });
  await api("/workspaces/create", { id: "benchcpu", name: "Bench CPU" });
  const created = await api("/w/benchcpu/scripts/create", {
    path: "u/bench/sleep",
    language: "bash",
    summary: "sleep",
    content: `sleep ${SLEEP_MS / 1000}\n`,
    tag: "benchcpu",
  });
  if (!created.ok) throw new Error(`script: ${created.status} ${await created.text()}`);
  const worker = await startTestWorker(instance.databaseUrl, {
    WORKER_TAGS: "benchcpu",
    NUM_WORKERS: String(SLOTS),
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
  });
  try {
    const submit = async () => (await api("/w/benchcpu/jobs/run/p/u/bench/sleep", {})).text();
    await warmUp(submit, pool);
    const statements = await statementStats(pool);
    const runs = await plainAndBareRuns(submit, pool);
    return { ...runs, statements: await statements.perJob(JOBS * REPEATS) };
  } finally {
    await worker.stop();
  }
}

export interface StatementCost {
  query: string;
  callsPerJob: number;
  msPerJob: number;
}

/**
 * pg_stat_statements over the plain jobs, when the server preloads it (a profiling aid: `ALTER
 * SYSTEM SET shared_preload_libraries = 'pg_stat_statements'` on the bench's PostgreSQL).
 */
async function statementStats(pool: pg.Pool): Promise<{ perJob(jobs: number): Promise<StatementCost[]> }> {
  try {
    await pool.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    await pool.query("SELECT pg_stat_statements_reset()");
  } catch {
    return { perJob: async () => [] };
  }
  return {
    perJob: async (jobs) => {
      const { rows } = await pool.query<{ query: string; calls: string; ms: number }>(
        `SELECT query, calls, total_exec_time + total_plan_time AS ms FROM pg_stat_statements
          WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          ORDER BY calls DESC`,
      );
      return rows
        .filter(
          (row) =>
            !row.query.includes("pg_stat_statements") && !row.query.includes("FROM job WHERE id = ANY"),
        )
        .map((row) => ({
          query: row.query.replace(/\s+/g, " ").slice(0, 110),
          callsPerJob: Number(row.calls) / jobs,
          msPerJob: row.ms / jobs,
        }));
    },
  };
}

export function printJobCpuBench(result: JobCpuBench, section: string): void {
  const { plain, bareSandboxes, bareProcesses } = result;
  console.log(
    `\n${section}. CPU per plain job (\`sleep ${SLEEP_MS / 1000}\` in bash, ${JOBS} jobs on ${SLOTS} slots)`,
  );
  console.log(
    "   machine: every process's CPU but the bench's own (the HTTP client that submits the jobs), " +
      `median of ${REPEATS} alternating rounds`,
  );
  const row = (name: string, run: CpuRun) =>
    console.log(
      `   ${name.padEnd(44)} machine ${ms(run.cpuPerJob).padStart(9)}   own processes ${ms(run.treeCpuPerJob).padStart(9)}   ` +
        `${run.rate.toFixed(1)} jobs/s   (client, left out: ${ms(run.benchCpuPerJob)})`,
    );
  row("Millrace job (submitted over HTTP, sandboxed)", plain);
  for (const [label, perJob] of plain.byProcess.slice(0, 8)) {
    console.log(`     ${label.padEnd(60)} ${ms(perJob).padStart(9)}`);
  }
  if (result.statements?.length) {
    const calls = result.statements.reduce((sum, s) => sum + s.callsPerJob, 0);
    const time = result.statements.reduce((sum, s) => sum + s.msPerJob, 0);
    console.log(
      `     statements per job (pg_stat_statements): ${calls.toFixed(1)} taking ${ms(time)}; the most frequent:`,
    );
    for (const statement of result.statements.slice(0, 40)) {
      console.log(
        `       ${statement.callsPerJob.toFixed(2).padStart(6)} × ${ms(statement.msPerJob).padStart(8)}  ${statement.query}`,
      );
    }
  }
  if (bareSandboxes) row("bare bubblewrap sandbox (no Millrace)", bareSandboxes);
  row("bare process (no sandbox, no Millrace)", bareProcesses);
  const base = bareSandboxes ?? bareProcesses;
  const ratio = plain.cpuPerJob / base.cpuPerJob;
  const treeRatio = plain.treeCpuPerJob / base.treeCpuPerJob;
  console.log(
    `   Millrace / bare ${bareSandboxes ? "sandbox" : "process (no bwrap here)"}: ${ratio.toFixed(2)}× machine CPU, ` +
      `${treeRatio.toFixed(2)}× own processes' CPU (target ≤ ${TARGET_RATIO}×: ${ratio <= TARGET_RATIO ? "met" : "NOT met"}); ` +
      `Millrace's own share ${ms(plain.cpuPerJob - base.cpuPerJob)} per job`,
  );
}
