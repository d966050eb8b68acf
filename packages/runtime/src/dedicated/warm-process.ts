import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import type { ExecuteOutcome } from "../exec/execute.ts";
import { JOB_LANG, jobPath, resolvedInterpreters } from "../exec/interpreters.ts";
import { spawnJobProcess } from "../exec/output-pipes.ts";
import { MAX_LOG_BYTES, TRUNCATION_NOTE } from "../exec/process.ts";
import { FrameSplitter } from "./frames.ts";
import { BUN_RUNNER, DEDICATED_PY_RUNNER, DEDICATED_TS_RUNNER, PYTHON_RUNNER } from "./runners.ts";

export type WarmLanguage = "python3" | "bun";

export function isWarmLanguage(language: string): language is WarmLanguage {
  return language === "python3" || language === "bun";
}

export interface WarmProcessOptions {
  language: WarmLanguage;
  content: string;
  /** A folder of its own (recreated); removed when the process is closed. */
  dir: string;
  /** Variables of every job (dependencies: PYTHONPATH); per-job variables come with each job. */
  env: Record<string, string>;
  nodeModulesDir?: string;
  /** How long importing the script may take. */
  startTimeoutMs?: number;
}

export interface WarmJob {
  args: Record<string, unknown>;
  argOrder: string[];
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  onLog(chunk: string): void;
}

/** The job's outcome, with the time `main` took inside the process when it ran. */
export type WarmOutcome = ExecuteOutcome & { execMs?: number };

interface Answer {
  ready?: boolean;
  ok?: boolean;
  result?: unknown;
  error?: { name?: unknown; message?: unknown; stack?: unknown } | null;
  ms?: number;
}

interface Current {
  job: WarmJob;
  answer: Answer | null;
  stderrDone: boolean;
  bytes: number;
  truncated: boolean;
  tail: string;
  finish(outcome: WarmOutcome): void;
}

const TAIL_CHARS = 8 * 1024;
// After the answer, the stderr end frame normally follows within microseconds.
const STDERR_GRACE_MS = 500;

function failure(name: string, message: string, stack?: string): ExecuteOutcome {
  return { status: "failure", error: stack === undefined ? { name, message } : { name, message, stack } };
}

function errorOutcome(error: Answer["error"]): ExecuteOutcome {
  const e = error ?? {};
  return failure(
    typeof e.name === "string" && e.name ? e.name : "Error",
    typeof e.message === "string" ? e.message : String(e.message),
    typeof e.stack === "string" ? e.stack : undefined,
  );
}

/**
 * One long-lived interpreter that has imported a script and runs its `main` once per job, jobs
 * one after another (a dedicated worker). A job that times out, is canceled or crashes the
 * process kills it: the process is then `dead` and its owner starts a new one.
 */
export class WarmProcess {
  readonly language: WarmLanguage;
  private readonly child: ChildProcess;
  private readonly dir: string;
  private current: Current | null = null;
  private exited = false;
  /** Resolves once the process is gone and its last output was read (`onExit`). */
  private readonly gone: Promise<void>;
  private markGone!: () => void;
  private startupOutput = "";
  private onReady: ((answer: Answer) => void) | null = null;
  private onExitDuringStart: (() => void) | null = null;
  /** Set when importing the script failed: every job fails with it. */
  loadError: ExecuteOutcome | null = null;

  private constructor(options: WarmProcessOptions, nonce: string) {
    this.language = options.language;
    this.dir = options.dir;
    this.gone = new Promise((resolve) => (this.markGone = resolve));
    const bin = resolvedInterpreters();
    const [command, args] =
      options.language === "python3"
        ? [bin.python3, ["-u", "-B", DEDICATED_PY_RUNNER, nonce]]
        : [bin.bun, [DEDICATED_TS_RUNNER, nonce]];
    const env: Record<string, string> = {
      ...options.env,
      PATH: jobPath(),
      HOME: options.dir,
      TMPDIR: options.dir,
      LANG: JOB_LANG,
    };
    // Detached, its own process group: a kill takes anything the script started with it. Real
    // pipes as stdout and stderr, as a job run by itself gets (`> /dev/stderr` works).
    const spawned = spawnJobProcess(
      command,
      args,
      // The job's variables only: nothing of the worker's environment is inherited.
      { cwd: options.dir, env: env as NodeJS.ProcessEnv },
      { stdin: true },
    );
    this.child = spawned.child;
    const mark = `\x1e${nonce}`;
    const out = new FrameSplitter(
      mark,
      (text) => this.log(text),
      (payload) => this.message(payload),
    );
    const err = new FrameSplitter(
      mark,
      (text) => this.log(text),
      () => this.stderrEnd(),
    );
    const outDecoder = new StringDecoder("utf8");
    const errDecoder = new StringDecoder("utf8");
    spawned.stdout.on("data", (buf: Buffer) => out.push(outDecoder.write(buf)));
    spawned.stderr.on("data", (buf: Buffer) => err.push(errDecoder.write(buf)));
    this.child.stdin!.on("error", () => {});
    this.child.on("error", (error) => {
      this.startupOutput += `\n${error.message}`;
      this.onExit(null, null, error.message);
    });
    this.child.on("exit", (code, signal) => {
      // The pipes may still hold its last output: read it first (briefly: a process it started
      // outside its group could keep them open).
      void Promise.race([spawned.closed, new Promise((resolve) => setTimeout(resolve, 200))]).then(() => {
        out.flush();
        err.flush();
        this.onExit(code, signal);
      });
    });
  }

  /** Writes the script and its runner to `dir`, starts the process and waits until it has imported the script. */
  static async start(options: WarmProcessOptions): Promise<WarmProcess> {
    rmSync(options.dir, { recursive: true, force: true });
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    if (options.language === "python3") {
      writeFileSync(path.join(options.dir, "main.py"), options.content);
      writeFileSync(path.join(options.dir, DEDICATED_PY_RUNNER), PYTHON_RUNNER);
    } else {
      writeFileSync(path.join(options.dir, "main.ts"), options.content);
      writeFileSync(path.join(options.dir, DEDICATED_TS_RUNNER), BUN_RUNNER);
    }
    if (options.nodeModulesDir) symlinkSync(options.nodeModulesDir, path.join(options.dir, "node_modules"));
    const proc = new WarmProcess(options, randomBytes(8).toString("hex"));
    await proc.ready(options.startTimeoutMs ?? 60_000);
    return proc;
  }

  get dead(): boolean {
    return this.exited;
  }

  get busy(): boolean {
    return this.current !== null;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private ready(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.kill();
        reject(new Error(`the script did not load within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.onReady = (answer) => {
        clearTimeout(timer);
        if (answer.error) this.loadError = errorOutcome(answer.error);
        resolve();
      };
      this.onExitDuringStart = () => {
        clearTimeout(timer);
        const output = this.startupOutput.trim().split("\n").slice(-20).join("\n");
        reject(new Error(`the process exited while loading the script${output ? `:\n${output}` : ""}`));
      };
    });
  }

  /** Runs one job; never throws. */
  run(job: WarmJob): Promise<WarmOutcome> {
    if (this.current) throw new Error("a warm process runs one job at a time");
    if (this.exited) return Promise.resolve(failure("ExecutionErr", "the dedicated process is not running"));
    if (job.signal?.aborted) return Promise.resolve({ status: "canceled" });
    return new Promise((resolve) => {
      let settled = false;
      const timer = setTimeout(() => {
        this.kill();
        finish(failure("TimeoutError", `Job exceeded the timeout of ${job.timeoutMs / 1000} seconds`));
      }, job.timeoutMs);
      const onAbort = () => {
        this.kill();
        finish({ status: "canceled" });
      };
      const finish = (outcome: WarmOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        job.signal?.removeEventListener("abort", onAbort);
        this.current = null;
        resolve(outcome);
      };
      job.signal?.addEventListener("abort", onAbort, { once: true });
      this.current = { job, answer: null, stderrDone: false, bytes: 0, truncated: false, tail: "", finish };
      this.child.stdin!.write(`${JSON.stringify({ args: job.args, order: job.argOrder, env: job.env })}\n`);
    });
  }

  /** Kills the process group (and with it anything the script started). */
  kill(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }

  /** Stops the process and removes its folder. */
  async close(): Promise<void> {
    if (!this.exited) {
      this.child.stdin!.end();
      this.kill();
      await this.gone;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private log(text: string): void {
    const current = this.current;
    if (!current) {
      if (this.onReady) this.startupOutput = (this.startupOutput + text).slice(-TAIL_CHARS);
      return;
    }
    current.tail = (current.tail + text).slice(-TAIL_CHARS);
    if (current.truncated) return;
    const bytes = Buffer.byteLength(text);
    if (current.bytes + bytes > MAX_LOG_BYTES) {
      current.truncated = true;
      this.emit(current, TRUNCATION_NOTE);
      return;
    }
    current.bytes += bytes;
    this.emit(current, text);
  }

  private emit(current: Current, text: string): void {
    try {
      current.job.onLog(text);
    } catch {
      // A failing log consumer must not break the process's protocol.
    }
  }

  private message(payload: string): void {
    let answer: Answer;
    try {
      answer = JSON.parse(payload) as Answer;
    } catch {
      return;
    }
    if (answer.ready) {
      const onReady = this.onReady;
      this.onReady = null;
      this.onExitDuringStart = null;
      onReady?.(answer);
      return;
    }
    const current = this.current;
    if (!current) return;
    current.answer = answer;
    if (current.stderrDone) this.settle(current);
    else setTimeout(() => this.current === current && this.settle(current), STDERR_GRACE_MS).unref();
  }

  private stderrEnd(): void {
    const current = this.current;
    if (!current) return;
    current.stderrDone = true;
    if (current.answer) this.settle(current);
  }

  private settle(current: Current): void {
    const answer = current.answer!;
    const outcome: WarmOutcome = answer.ok
      ? { status: "success", result: answer.result ?? null }
      : errorOutcome(answer.error);
    if (typeof answer.ms === "number") outcome.execMs = answer.ms;
    current.finish(outcome);
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, error?: string): void {
    if (this.exited) return;
    this.exited = true;
    this.markGone();
    this.kill();
    this.onExitDuringStart?.();
    this.onExitDuringStart = null;
    this.onReady = null;
    const current = this.current;
    if (!current) return;
    const status = error ?? (signal ? `terminated by signal ${signal}` : `exit code ${code}`);
    const tail = current.tail.trimEnd().split("\n").slice(-20).join("\n");
    current.finish(
      failure(
        "ExecutionErr",
        `the dedicated process ended while running the job (${status})${tail ? `, last log lines:\n${tail}` : ""}`,
      ),
    );
  }
}
