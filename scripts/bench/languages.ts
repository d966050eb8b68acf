// Per-language submit-to-result of a trivial script through the whole pipeline (REST
// run_wait_result), beside the bare start of the same interpreter on an equivalent program,
// measured in the same run. `node scripts/bench/languages.ts` runs this section alone.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { detectSandbox, executeJob, interpreterPaths, ProcessLauncher } from "@millrace/runtime";
import { startBenchInstance, type BenchInstance } from "./instance.ts";
import { ms, summary, withCpuPerRequest } from "./stats.ts";

const RUNS = 30;
const BARE_START = fileURLToPath(new URL("./bare-start.ts", import.meta.url));
const WARMUP = 5;
// Target of issue 4 (2-core machine): submit-to-result minus bare start, p50.
const OVERHEAD_TARGET_MS = 15;
const TARGETED = new Set(["bash", "python3", "bun"]);
// Between two requests of the idle-worker series: long enough for the worker's background work of
// the previous job (setting the next sandbox up, removing the old folder) to be over.
const IDLE_PAUSE_MS = 150;

type Stats = ReturnType<typeof summary>;

interface Case {
  language: "bash" | "python3" | "bun" | "deno";
  /** Deployed to Millrace: returns its argument. */
  script: string;
  /** The same work for the bare interpreter: print the argument. */
  bareFile: string;
  bareSource: string;
  bareArgs(bin: Record<string, string>, file: string): [string, string[]];
}

const CASES: Case[] = [
  {
    language: "bash",
    script: 'msg="$1"\necho "$msg"\n',
    bareFile: "main.sh",
    bareSource: 'msg="$1"\necho "$msg"\n',
    bareArgs: (bin, file) => [bin.bash!, [file, "hello"]],
  },
  {
    language: "python3",
    script: "def main(msg: str):\n    return msg\n",
    bareFile: "main.py",
    bareSource: "def main(msg):\n    return msg\n\nprint(main('hello'))\n",
    bareArgs: (bin, file) => [bin.python3!, [file]],
  },
  {
    language: "bun",
    script: "export function main(msg: string) {\n  return msg;\n}\n",
    bareFile: "main.ts",
    bareSource: 'function main(msg: string) {\n  return msg;\n}\nconsole.log(main("hello"));\n',
    bareArgs: (bin, file) => [bin.bun!, [file]],
  },
  {
    language: "deno",
    script: "export function main(msg: string) {\n  return msg;\n}\n",
    bareFile: "main.ts",
    bareSource: 'function main(msg: string) {\n  return msg;\n}\nconsole.log(main("hello"));\n',
    bareArgs: (bin, file) => [bin.deno!, ["run", "--allow-all", "--no-prompt", "--no-config", file]],
  },
];

export interface LanguageRow {
  language: string;
  bare: Stats;
  /** Requests back to back: each job shares the 2 cores with the previous job's background work. */
  millrace: Stats;
  overheadP50: number;
  /** The machine's CPU per request back to back, every process included (ms). */
  cpuPerRequest: number;
  /** A request every IDLE_PAUSE_MS: what one job submitted to an idle worker sees. */
  idle: Stats;
  idleOverheadP50: number;
  /** executeJob alone (no HTTP, no database), in bubblewrap and without it. */
  runtime: { sandbox: Stats; none: Stats };
  /** The machine's CPU per executeJob in bubblewrap and without it (ms). */
  runtimeCpu: { sandbox: number; none: number };
}

async function bareStart(c: Case, dir: string): Promise<Stats> {
  const bin = interpreterPaths() as unknown as Record<string, string>;
  const file = path.join(dir, c.bareFile);
  writeFileSync(file, c.bareSource);
  // The environment a job gets, minus Millrace's own variables; Deno keeps a warm cache here.
  const env = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: dir,
    TMPDIR: dir,
    LANG: "C.UTF-8",
    DENO_DIR: path.join(dir, ".deno"),
    DENO_NO_UPDATE_CHECK: "1",
  };
  const [command, args] = c.bareArgs(bin, file);
  const output = execFileSync(
    process.execPath,
    [BARE_START, JSON.stringify({ command, args, env, cwd: dir, runs: RUNS, warmup: WARMUP })],
    { encoding: "utf8" },
  );
  const samples = JSON.parse(output) as number[];
  return summary(samples);
}

/** The runtime's share: executeJob through a process launcher as the worker runs it, with and without the sandbox. */
async function runtimeOnly(
  c: Case,
  workRoot: string,
  sandbox: boolean,
  launcher: ProcessLauncher,
): Promise<Stats> {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const started = performance.now();
    const outcome = await executeJob({
      jobId: `bench-${c.language}-${i}`,
      language: c.language,
      content: c.script,
      args: { msg: "hello" },
      argOrder: ["msg"],
      env: {},
      workRoot,
      timeoutMs: 30_000,
      sandbox,
      launcher,
      onLog: () => {},
    });
    const elapsed = performance.now() - started;
    if (outcome.status !== "success") throw new Error(`${c.language}: ${JSON.stringify(outcome)}`);
    if (i >= WARMUP) samples.push(elapsed);
  }
  return summary(samples);
}

async function submitToResult(
  instance: BenchInstance,
  c: Case,
): Promise<{ backToBack: Stats; cpuPerRequest: number; idle: Stats }> {
  const headers = { Authorization: `Bearer ${instance.userToken}`, "content-type": "application/json" };
  const api = (p: string, body: unknown) =>
    fetch(`${instance.baseUrl}/api${p}`, { method: "POST", headers, body: JSON.stringify(body) });
  const scriptPath = `u/bench/lang_${c.language}`;
  const created = await api("/w/bench/scripts/create", {
    path: scriptPath,
    language: c.language,
    summary: `trivial ${c.language}`,
    content: c.script,
  });
  if (!created.ok) throw new Error(`could not deploy ${scriptPath}: ${await created.text()}`);
  const series = async (pauseMs: number): Promise<Stats> => {
    const samples: number[] = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      const started = performance.now();
      const response = await api(`/w/bench/jobs/run_wait_result/p/${scriptPath}`, { msg: `hello ${i}` });
      const result = await response.json();
      const elapsed = performance.now() - started;
      if (result !== `hello ${i}`)
        throw new Error(`${c.language}: unexpected result ${JSON.stringify(result)}`);
      if (i >= WARMUP) samples.push(elapsed);
    }
    return summary(samples);
  };
  const { result: backToBack, cpuPerRequest } = await withCpuPerRequest(WARMUP + RUNS, () => series(0));
  return { backToBack, cpuPerRequest, idle: await series(IDLE_PAUSE_MS) };
}

/** Needs the instance's `bench` workspace (scripts/bench.ts creates it). */
export async function languageBench(instance: BenchInstance): Promise<LanguageRow[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "millrace-bench-bare-"));
  // Jobs of a root worker run as nobody: their work root must be reachable.
  chmodSync(dir, 0o711);
  const launcher = new ProcessLauncher();
  await launcher.start();
  try {
    const rows: LanguageRow[] = [];
    for (const c of CASES) {
      const caseDir = path.join(dir, c.language);
      mkdirSync(caseDir);
      const bare = await bareStart(c, caseDir);
      const { backToBack: millrace, cpuPerRequest, idle } = await submitToResult(instance, c);
      const runtime = (sandbox: boolean) =>
        withCpuPerRequest(WARMUP + RUNS, () => runtimeOnly(c, path.join(caseDir, "jobs"), sandbox, launcher));
      const sandboxed = await runtime(true);
      const unsandboxed = await runtime(false);
      rows.push({
        language: c.language,
        bare,
        millrace,
        overheadP50: millrace.p50 - bare.p50,
        cpuPerRequest,
        idle,
        idleOverheadP50: idle.p50 - bare.p50,
        runtime: { sandbox: sandboxed.result, none: unsandboxed.result },
        runtimeCpu: { sandbox: sandboxed.cpuPerRequest, none: unsandboxed.cpuPerRequest },
      });
    }
    return rows;
  } finally {
    await launcher.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printLanguageBench(rows: LanguageRow[], section: string): void {
  const sandbox = detectSandbox();
  const where =
    sandbox.kind === "bubblewrap"
      ? `in bubblewrap ${sandbox.version}`
      : `without a sandbox (${sandbox.reason})`;
  console.log(
    `\n${section}. Per language: submit-to-result of a trivial script (POST run_wait_result, jobs ${where}) ` +
      `beside the bare interpreter start, ${RUNS} runs each`,
  );
  const cores = os.cpus().length;
  console.log(
    `   ready worker: a request every ${IDLE_PAUSE_MS} ms, the worker idle when it comes (the target); ` +
      "back to back: each request as soon as the previous answered",
  );
  console.log(
    `   back to back is CPU-bound: "floor" is the machine's CPU per request (every process) over ${cores} cores, ` +
      "the least mean time per request when requests follow each other",
  );
  console.log(
    "   language   bare start p50 | ready worker: Millrace p50  overhead p50 | back to back: Millrace p50    p95  overhead p50  CPU/request  floor",
  );
  const verdict = (overhead: number) => (overhead <= OVERHEAD_TARGET_MS ? "met" : "NOT met");
  for (const row of rows) {
    const target = TARGETED.has(row.language)
      ? `  (target overhead <= ${OVERHEAD_TARGET_MS} ms: ${verdict(row.idleOverheadP50)}; back to back ${verdict(row.overheadP50)})`
      : "";
    console.log(
      `   ${row.language.padEnd(9)}  ${ms(row.bare.p50).padStart(14)} | ` +
        `${ms(row.idle.p50).padStart(25)} ${ms(row.idleOverheadP50).padStart(13)} | ` +
        `${ms(row.millrace.p50).padStart(26)} ${ms(row.millrace.p95).padStart(8)} ${ms(row.overheadP50).padStart(13)} ` +
        `${ms(row.cpuPerRequest).padStart(12)} ${ms(row.cpuPerRequest / cores).padStart(8)}${target}`,
    );
  }
  console.log(
    "   executeJob alone (no HTTP, no database, a cold sandbox per job, via the process launcher): p50 and machine CPU per job",
  );
  for (const row of rows) {
    console.log(
      `   ${row.language.padEnd(9)}  in bubblewrap p50 ${ms(row.runtime.sandbox.p50)}, CPU ${ms(row.runtimeCpu.sandbox)}; ` +
        `without a sandbox p50 ${ms(row.runtime.none.p50)}, CPU ${ms(row.runtimeCpu.none)}`,
    );
  }
}

if (import.meta.main) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const instance = await startBenchInstance(root, { numWorkers: 1, port: 8140 });
  try {
    const headers = { Authorization: `Bearer ${instance.userToken}`, "content-type": "application/json" };
    await fetch(`${instance.baseUrl}/api/workspaces/create`, {
      method: "POST",
      headers,
      body: JSON.stringify({ id: "bench", name: "Bench" }),
    });
    printLanguageBench(await languageBench(instance), "4");
  } finally {
    await instance.stop();
  }
}
