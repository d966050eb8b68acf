import { readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isLanguage } from "../languages.ts";
import { bunStartEnv } from "./bun-stub.ts";
import { JOB_LANG, jobPath, prlimitPath, resolvedInterpreters } from "./interpreters.ts";
import { prlimitArgs, resolveLimits, ulimitArgs } from "./limits.ts";
import type { JobLimits } from "./limits.ts";
import { executePostgresql } from "./postgresql.ts";
import { runProcess } from "./process.ts";
import type { RunResult } from "./process.ts";
import { finalDiskCheck, type DiskLimits, type DiskVerdict } from "./disk.ts";
import { createJobDir, jobDirRemoved, removeJobDirSoon } from "./job-dir.ts";
import {
  BWRAP_OWN_LEVELS,
  bwrapArgs,
  detectSandbox,
  FENCE_OWN_LEVELS,
  jobUser,
  processFence,
} from "./sandbox.ts";
import type { StartedProcess } from "./launcher.ts";
import type { WarmSandbox, WarmSandboxSpec } from "./warm-sandbox.ts";
import {
  ARGS_FILE,
  bunWrapperSource,
  denoWrapperSource,
  PYTHON_WRAPPER,
  pythonLiteral,
  pythonWrapperSource,
  RESULT_FILE,
  TS_WRAPPER,
} from "./wrappers.ts";
import type { WrapperResult } from "./wrappers.ts";
import type { ExecuteOutcome, ExecuteRequest } from "./request.ts";

export type { ExecuteOutcome, ExecuteRequest } from "./request.ts";

interface Plan {
  command: string;
  args: string[];
  /**
   * bash: the same run with its arguments read from BASH_ARGS_FILE instead of the command line,
   * for every start whose argv a process could see (`ps` on the host shows a sandbox's command
   * line too): arguments may be resolved secrets.
   */
  argsHidden?: { args: string[]; file: string };
  extraEnv?: Record<string, string>;
  /** bash: the user's optional ./result.json; others: the wrapper's envelope. */
  resultFile: string;
  wrapped: boolean;
}

const TAIL_LINES = 20;

const BASH_ARGS_FILE = ".millrace-args";
/**
 * `bash -c BASH_ARGS_LOADER main.sh` runs main.sh as `bash main.sh args…` would (same $0, `$@`,
 * exit status), with the arguments read from BASH_ARGS_FILE, so that they never appear on a
 * command line (the one trace: `c` in `$-`).
 */
const BASH_ARGS_LOADER = `mapfile -t -d '' _mr_a < ${BASH_ARGS_FILE}
set -- "\${_mr_a[@]}"
unset BASH_EXECUTION_STRING _mr_a
. "$0"`;

function failure(name: string, message: string, stack?: string): ExecuteOutcome {
  return { status: "failure", error: stack === undefined ? { name, message } : { name, message, stack } };
}

function shellArg(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "object") return JSON.stringify(value) ?? "";
  return String(value);
}

function writePythonWrapper(dir: string, req: ExecuteRequest): void {
  const literal = pythonLiteral(req.args);
  if (literal === undefined) {
    writeFileSync(path.join(dir, ARGS_FILE), JSON.stringify({ order: req.argOrder, args: req.args }));
  }
  writeFileSync(path.join(dir, PYTHON_WRAPPER), pythonWrapperSource(literal));
}

function plan(req: ExecuteRequest, dir: string): Plan {
  const bin = resolvedInterpreters();
  switch (req.language) {
    case "bash": {
      writeFileSync(path.join(dir, "main.sh"), req.content);
      const positional = req.argOrder.map((name) => shellArg(req.args[name]));
      return {
        command: bin.bash,
        args: ["main.sh", ...positional],
        argsHidden: {
          args: ["-c", BASH_ARGS_LOADER, "main.sh"],
          // NUL-terminated fields: a NUL cannot be part of an argument anyway.
          file: positional.map((arg) => `${arg.replaceAll("\0", "")}\0`).join(""),
        },
        resultFile: "result.json",
        wrapped: false,
      };
    }
    case "python3":
      writeFileSync(path.join(dir, "main.py"), req.content);
      writePythonWrapper(dir, req);
      return {
        command: bin.python3,
        args: ["-u", "-B", PYTHON_WRAPPER],
        resultFile: RESULT_FILE,
        wrapped: true,
      };
    case "bun":
      writeFileSync(path.join(dir, "main.ts"), req.content);
      writeFileSync(path.join(dir, TS_WRAPPER), bunWrapperSource(req.argOrder, req.args));
      if (req.nodeModulesDir) symlinkSync(req.nodeModulesDir, path.join(dir, "node_modules"));
      return { command: bin.bun, args: [TS_WRAPPER], resultFile: RESULT_FILE, wrapped: true };
    case "deno":
      writeFileSync(path.join(dir, "main.ts"), req.content);
      writeFileSync(path.join(dir, TS_WRAPPER), denoWrapperSource(req.argOrder, req.args));
      if (req.nodeModulesDir) symlinkSync(req.nodeModulesDir, path.join(dir, "node_modules"));
      return {
        command: bin.deno,
        args: [
          "run",
          "--allow-all",
          "--no-prompt",
          "--no-config",
          // Bare imports resolve from the linked node_modules instead of being refused.
          ...(req.nodeModulesDir ? ["--node-modules-dir=manual"] : []),
          TS_WRAPPER,
        ],
        // Per job (~5 ms more than a warm shared cache): a cache shared by jobs would let one
        // job plant modules for another. Prepared dependencies come with their own DENO_DIR.
        extraEnv: {
          ...(req.env.DENO_DIR ? {} : { DENO_DIR: path.join(dir, ".deno") }),
          DENO_NO_UPDATE_CHECK: "1",
        },
        resultFile: RESULT_FILE,
        wrapped: true,
      };
    case "postgresql":
      throw new Error("unreachable: postgresql is handled before planning");
  }
}

/** Thrown for a result file above the job's result cap: it is not even read. */
class ResultTooLarge extends Error {}

function readOptional(file: string, maxBytes = Infinity): string | undefined {
  try {
    // Most jobs write no such file: no exception (and its stack) for the common case.
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat) return undefined;
    if (stat.size > maxBytes) throw new ResultTooLarge(`${stat.size}`);
    return readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

function lastLines(text: string): string {
  return text.trimEnd().split("\n").slice(-TAIL_LINES).join("\n");
}

/** A process run, and whether it ran in the sandbox (which reports a signal N as exit code 128+N). */
type JobRun = RunResult & { sandboxed: boolean };

function exitSignalOf(run: JobRun): NodeJS.Signals | null {
  if (run.exitSignal) return run.exitSignal;
  if (!run.sandboxed || run.exitCode === null || run.exitCode <= 128) return null;
  const number = run.exitCode - 128;
  const name = Object.entries(os.constants.signals).find(([, n]) => n === number)?.[0];
  return (name as NodeJS.Signals | undefined) ?? null;
}

function exitFailure(run: JobRun, what: string): ExecuteOutcome {
  const signal = exitSignalOf(run);
  const status = signal ? `Terminated by signal ${signal}` : `ExitCode: ${run.exitCode}`;
  const tail = lastLines(run.outputTail);
  return failure("ExecutionErr", `${status}${what}${tail ? `, last log lines:\n${tail}` : ""}`);
}

function parseLastLine(stdout: string): unknown {
  const lines = stdout.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = (lines[i] as string).trim();
    if (line === "") continue;
    try {
      return JSON.parse(line);
    } catch {
      return line;
    }
  }
  return null;
}

/** The failure of a job whose result is larger than `maxBytes` (see ExecuteRequest.maxResultBytes). */
export function resultTooLarge(bytes: number, maxBytes: number): ExecuteOutcome {
  const mb = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MB`;
  return failure(
    "ResultTooLarge",
    `the job's result is ${mb(bytes)}, more than the ${mb(maxBytes)} a result may be (JOB_MAX_RESULT_MB); ` +
      `store large data elsewhere (a file, a resource) and return a reference`,
  );
}

function bashOutcome(run: JobRun, dir: string, resultFile: string, maxBytes: number): ExecuteOutcome {
  if (run.exitCode !== 0) return exitFailure(run, "");
  const written = readOptional(path.join(dir, resultFile), maxBytes);
  if (written === undefined) return { status: "success", result: parseLastLine(run.stdoutTail) };
  try {
    return { status: "success", result: JSON.parse(written) };
  } catch (err) {
    return failure("ExecutionErr", `result.json is not valid JSON: ${(err as Error).message}`);
  }
}

function wrappedOutcome(run: JobRun, dir: string, resultFile: string, maxBytes: number): ExecuteOutcome {
  const text = readOptional(path.join(dir, resultFile), maxBytes);
  if (text === undefined) return exitFailure(run, ", the script ended without returning a result");
  let envelope: WrapperResult;
  try {
    envelope = JSON.parse(text) as WrapperResult;
  } catch (err) {
    return failure("ExecutionErr", `unreadable result: ${(err as Error).message}`);
  }
  if (envelope.ok) return { status: "success", result: envelope.result ?? null };
  const e = envelope.error ?? {};
  return failure(
    typeof e.name === "string" && e.name ? e.name : "Error",
    typeof e.message === "string" ? e.message : String(e.message),
    typeof e.stack === "string" ? e.stack : undefined,
  );
}

function formatSeconds(ms: number): string {
  return String(Math.round(ms) / 1000);
}

function limitFailure(
  run: JobRun,
  req: ExecuteRequest,
  limits: JobLimits,
  disk: DiskVerdict,
): ExecuteOutcome | null {
  if (run.outOfMemory) {
    return failure(
      "OutOfMemory",
      `Job ran out of memory: its processes used more than the ${req.memoryLimitMb} MB memory limit and were killed`,
    );
  }
  if (run.processLimit) {
    return failure(
      "ProcessLimitExceeded",
      `Job reached the limit of ${limits.maxProcesses} processes and threads (a fork bomb?) and was killed`,
    );
  }
  if (run.outputLimit) {
    return failure(
      "OutputLimitExceeded",
      `Job printed more than ${Math.round(limits.maxOutputBytes / 1024 / 1024)} MB of output and was killed`,
    );
  }
  // A process that ignores SIGXFSZ (python3 does) gets EFBIG and may go on: the file left at the
  // limit tells (see disk.ts).
  if (run.fileSizeLimit || disk === "fileSize" || exitSignalOf(run) === "SIGXFSZ") {
    return failure(
      "FileSizeLimitExceeded",
      `Job tried to write a file larger than ${Math.round(limits.maxFileBytes / 1024 / 1024)} MB, the file-size limit`,
    );
  }
  if (run.diskQuota || disk === "quota") {
    return failure(
      "DiskQuotaExceeded",
      `Job stored more than its disk quota of ${Math.round(limits.maxDiskBytes / 1024 / 1024)} MB in its folder`,
    );
  }
  if (run.timedOut) {
    return failure("TimeoutError", `Job exceeded the timeout of ${formatSeconds(req.timeoutMs)} seconds`);
  }
  const signal = exitSignalOf(run);
  if (signal === "SIGXCPU") {
    return failure(
      "CpuLimitExceeded",
      `Job exceeded its CPU time limit of ${limits.cpuSeconds} seconds per process and was killed`,
    );
  }
  return null;
}

interface Launch {
  command: string;
  args: string[];
  sandboxed: boolean;
  /** The top levels of its process tree that are the sandbox's or the fence's (RunOptions.sandboxLevels). */
  sandboxLevels: number;
  /** Its job in a warm sandbox, already told to go (command and args are then unused). */
  started?: StartedProcess;
}

/** The sandbox of a job: null when it runs without one. */
function sandboxSpec(req: ExecuteRequest): WarmSandboxSpec | null {
  const sandbox = req.sandbox === false ? null : detectSandbox();
  if (sandbox?.kind !== "bubblewrap") return null;
  const bin = resolvedInterpreters();
  return {
    network: req.network !== false,
    executables: [bin[req.language as keyof typeof bin], bin.node],
    readOnlyPaths: req.readOnlyPaths ?? [],
    ...(req.language === "bun" ? { startEnv: bunStartEnv(req.env) } : {}),
  };
}

/** The plan's arguments for a start whose command line others could see (see Plan.argsHidden). */
function hideArgs(p: Plan, dir: string): string[] {
  if (!p.argsHidden) return p.args;
  writeFileSync(path.join(dir, BASH_ARGS_FILE), p.argsHidden.file);
  return p.argsHidden.args;
}

/**
 * Wraps the interpreter in prlimit (limits) and, when available, bubblewrap (isolation); or
 * hands it to a warm sandbox, whose stub sets the same limits with `ulimit`.
 */
function launch(
  req: ExecuteRequest,
  p: Plan,
  dir: string,
  limits: JobLimits,
  spec: WarmSandboxSpec | null,
  warm: WarmSandbox | null,
  env: Record<string, string>,
): Launch {
  const args = hideArgs(p, dir);
  if (warm) {
    const started = warm.start(env, ulimitArgs(limits, true), [p.command, ...args]);
    if (started)
      return { command: p.command, args, sandboxed: true, sandboxLevels: BWRAP_OWN_LEVELS, started };
    warm.discard();
  }
  const prlimit = prlimitPath();
  const sandbox = spec ? detectSandbox() : null;
  if (spec && sandbox?.kind === "bubblewrap") {
    const inner = prlimit ? [prlimit, ...prlimitArgs(limits, true), "--"] : [];
    const sandboxArgs = bwrapArgs({
      ...spec,
      jobDir: dir,
      ...(req.sharedDir ? { writablePaths: [req.sharedDir] } : {}),
    });
    return {
      command: sandbox.path,
      args: [...sandboxArgs, ...inner, p.command, ...args],
      sandboxed: true,
      sandboxLevels: BWRAP_OWN_LEVELS,
    };
  }
  // Without a user namespace RLIMIT_NPROC counts every process of the uid: only meaningful when jobs
  // run as their own (unprivileged) user, not as the worker's.
  const nproc = jobUser() !== null;
  const fence = processFence();
  const [command, ...rest] = [
    ...(fence ?? []),
    ...(prlimit ? [prlimit, ...prlimitArgs(limits, nproc), "--"] : []),
    p.command,
    ...args,
  ];
  // In the fence, as in the sandbox, a signal N comes back as exit code 128+N.
  return {
    command: command!,
    args: rest,
    sandboxed: fence !== null,
    sandboxLevels: fence === null ? 0 : FENCE_OWN_LEVELS,
  };
}

export async function executeJob(req: ExecuteRequest): Promise<ExecuteOutcome> {
  if (req.signal?.aborted) return { status: "canceled" };
  // Whatever a job row says (a restored or hand-edited row, a newer server's language), the
  // worker fails that job with the reason and goes on: nothing below may see an unknown language.
  if (!isLanguage(req.language))
    return failure("UnsupportedLanguage", `this worker cannot run ${JSON.stringify(req.language)} code`);
  if (typeof req.content !== "string") return failure("ExecutionErr", "the job has no code to run");
  if (req.language === "postgresql") return executePostgresql(req);
  const spec = sandboxSpec(req);
  const warm = spec && !req.sharedDir ? (req.warmSandboxes?.take(spec, req.reuseKey ?? null) ?? null) : null;
  if (!warm) await jobDirRemoved(path.join(path.resolve(req.workRoot), req.jobId));
  const dir = warm?.dir ?? createJobDir(req.workRoot, req.jobId);
  let groupKilled: Promise<void> | undefined;
  try {
    let p: Plan;
    try {
      p = plan(req, dir);
      if (req.sharedDir) symlinkSync(req.sharedDir, path.join(dir, "shared"));
    } catch (err) {
      warm?.discard();
      return failure("ExecutionErr", `could not prepare the job folder: ${(err as Error).message}`);
    }
    const limits = resolveLimits(req.limits, req.timeoutMs);
    // Only what the job was given: the worker's own environment (database URLs, tokens) never leaks.
    const PATH = [...(req.pathPrefix ?? []), jobPath()].join(":");
    const env = { ...req.env, ...p.extraEnv, PATH, HOME: dir, TMPDIR: dir, LANG: JOB_LANG };
    const how = launch(req, p, dir, limits, spec, warm, env);
    const user = jobUser();
    const disk: DiskLimits = { dir, maxBytes: limits.maxDiskBytes, maxFileBytes: limits.maxFileBytes };
    const startedAt = performance.now();
    const processRun = await runProcess({
      command: how.command,
      args: how.args,
      cwd: dir,
      env,
      timeoutMs: req.timeoutMs,
      signal: req.signal,
      onLog: req.onLog,
      keepStdout: !p.wrapped,
      memoryLimitBytes: req.memoryLimitMb ? req.memoryLimitMb * 1024 * 1024 : null,
      maxTasks: limits.maxProcesses,
      sampleBy: how.sandboxed ? "tree" : "session",
      sandboxLevels: how.sandboxLevels,
      maxOutputBytes: limits.maxOutputBytes,
      disk,
      launcher: req.launcher ?? null,
      started: how.started ?? null,
      ...(user ?? {}),
    });
    const run: JobRun = { ...processRun, sandboxed: how.sandboxed };
    groupKilled = run.groupKilled;
    if (run.canceled) return { status: "canceled" };
    const limited = limitFailure(
      run,
      req,
      limits,
      run.spawnError ? null : finalDiskCheck(disk, performance.now() - startedAt),
    );
    if (limited) return limited;
    if (run.spawnError) {
      return failure("ExecutionErr", `could not start ${p.command}: ${run.spawnError.message}`);
    }
    const maxBytes = req.maxResultBytes ?? Infinity;
    try {
      return p.wrapped
        ? wrappedOutcome(run, dir, p.resultFile, maxBytes)
        : bashOutcome(run, dir, p.resultFile, maxBytes);
    } catch (error) {
      if (error instanceof ResultTooLarge) return resultTooLarge(Number(error.message), maxBytes);
      throw error;
    }
  } finally {
    // The folder goes once the job's processes are killed: what the job left running must not
    // write into a folder being removed. A kept sandbox's is emptied for its next job instead.
    if (warm) warm.finish(groupKilled ?? Promise.resolve());
    else removeJobDirSoon(dir, groupKilled);
    // The next job of this kind finds its sandbox ready (set up while this one is recorded).
    if (spec) req.warmSandboxes?.replenish(spec);
  }
}
