import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import {
  appendJobLog,
  recordWorkerScriptEnd,
  recordWorkerScriptStart,
  WORKER_SCRIPT_TIMEOUT_SECS,
  WORKER_SCRIPTS_WORKSPACE,
  type WorkerGroupConfig,
  type WorkerScriptKind,
} from "@millrace/core";
import type { Pool } from "@millrace/db";
import { interpreterPaths, JOB_LANG, spawnJobProcess, type ExecuteOutcome } from "@millrace/runtime";

/**
 * Init and periodic scripts are the worker group's own bash scripts, set by superadmins. Each run
 * is recorded as a job of the `admins` workspace (as in Windmill, where superadmins see them),
 * kind `init_script` or `periodic_script`, with its log and result: by the worker itself in the
 * database, or by the server for an agent worker (see WorkerScriptRecorder).
 */
export { WORKER_SCRIPTS_WORKSPACE, type WorkerScriptKind };
const TIMEOUT_SECS = WORKER_SCRIPT_TIMEOUT_SECS;
const LOG_FLUSH_MS = 500;

/** Where a run is recorded: the database (a database worker) or the server (an agent). */
export interface WorkerScriptRecorder {
  /** Records the start; answers the run's job id. */
  start(kind: WorkerScriptKind, content: string): Promise<string>;
  appendLog(id: string, chunk: string): Promise<void>;
  end(id: string, outcome: ExecuteOutcome, pendingLog: string): Promise<void>;
}

export interface WorkerScriptDeps {
  recorder: WorkerScriptRecorder;
  jobDir: string;
  group: string;
  workerName: string;
  log(message: string): void;
}

/** A database worker's recorder: the job rows written directly. */
export function dbWorkerScriptRecorder(pool: Pool, group: string, workerName: string): WorkerScriptRecorder {
  return {
    start: (kind, content) => recordWorkerScriptStart(pool, { kind, group, workerName, content }),
    appendLog: (id, chunk) => appendJobLog(pool, id, chunk),
    end: (id, outcome, pendingLog) => recordWorkerScriptEnd(pool, id, outcome, pendingLog),
  };
}

/**
 * Runs the script as the worker's own user, outside the job sandbox: it is the group's setup
 * (installing tools on the machine), written by a superadmin, as Windmill's init scripts are. It
 * still gets a clean environment (no DATABASE_URL), a folder of its own and a timeout.
 */
function runOnHost(
  deps: WorkerScriptDeps,
  id: string,
  content: string,
  signal: AbortSignal | undefined,
  onLog: (chunk: string) => void,
): Promise<ExecuteOutcome> {
  const dir = path.join(path.resolve(deps.jobDir), `.worker-script-${id}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const env: Record<string, string> = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: dir,
    LANG: JOB_LANG,
    WM_WORKER_GROUP: deps.group,
    WM_WORKER_NAME: deps.workerName,
    WM_JOB_ID: id,
  };
  return new Promise((resolve) => {
    let stdout = "";
    let tail = "";
    // Pipes, not sockets, as stdout and stderr: `echo … > /dev/stderr` works as in a job.
    const {
      child,
      stdout: out,
      stderr: err,
      closed,
    } = spawnJobProcess(interpreterPaths().bash, ["-c", content], {
      cwd: dir,
      env: env as NodeJS.ProcessEnv,
    });
    const kill = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    };
    let timedOut = false;
    const timer = setTimeout(() => ((timedOut = true), kill()), TIMEOUT_SECS * 1000);
    signal?.addEventListener("abort", kill, { once: true });
    const take = (buf: Buffer, isStdout: boolean) => {
      const text = buf.toString();
      if (isStdout) stdout = (stdout + text).slice(-64 * 1024);
      tail = (tail + text).slice(-8 * 1024);
      onLog(text);
    };
    out.on("data", (buf: Buffer) => take(buf, true));
    err.on("data", (buf: Buffer) => take(buf, false));
    const finish = (outcome: ExecuteOutcome) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", kill);
      rmSync(dir, { recursive: true, force: true });
      resolve(outcome);
    };
    child.on("error", (error) =>
      finish({ status: "failure", error: { name: "ExecutionErr", message: error.message } }),
    );
    let code: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    child.on("exit", (exitCode, signalName) => {
      code = exitCode;
      exitSignal = signalName;
    });
    void closed.then(() => {
      if (code === null && exitSignal === null) return; // could not start: the error event said so
      kill();
      if (signal?.aborted) return finish({ status: "canceled" });
      if (timedOut) {
        return finish({
          status: "failure",
          error: { name: "TimeoutError", message: `exceeded ${TIMEOUT_SECS} s` },
        });
      }
      if (code !== 0) {
        const status = exitSignal ? `Terminated by signal ${exitSignal}` : `ExitCode: ${code}`;
        const lines = tail.trimEnd().split("\n").slice(-20).join("\n");
        return finish({
          status: "failure",
          error: { name: "ExecutionErr", message: `${status}, last log lines:\n${lines}` },
        });
      }
      const last = stdout.trimEnd().split("\n").pop() ?? "";
      finish({ status: "success", result: last });
    });
  });
}

/**
 * Runs one init or periodic script to the end and records it. Never throws: a failing script,
 * or a database error while recording it, is logged and the worker carries on (as Windmill's).
 */
export async function runWorkerScript(
  deps: WorkerScriptDeps,
  kind: WorkerScriptKind,
  content: string,
  signal?: AbortSignal,
): Promise<ExecuteOutcome> {
  const what = kind === "init_script" ? "init script" : "periodic script";
  let id: string;
  try {
    id = await deps.recorder.start(kind, content);
  } catch (error) {
    // Not run unrecorded: the group's setup must be visible to superadmins.
    deps.log(`${what} not run: could not record it: ${(error as Error).message}`);
    return { status: "failure", error: { name: "WorkerError", message: (error as Error).message } };
  }
  let pending = "";
  let flushing: Promise<void> = Promise.resolve();
  const flush = () => {
    const chunk = pending;
    pending = "";
    if (chunk) flushing = flushing.then(() => deps.recorder.appendLog(id, chunk).catch(() => {}));
  };
  const timer = setInterval(flush, LOG_FLUSH_MS);
  let outcome: ExecuteOutcome;
  try {
    outcome = await runOnHost(deps, id, content, signal, (chunk) => {
      pending += chunk;
    });
  } catch (error) {
    outcome = { status: "failure", error: { name: "WorkerError", message: (error as Error).message } };
  } finally {
    clearInterval(timer);
  }
  await flushing;
  const summary = outcome.status === "failure" ? `failed: ${outcome.error.message}` : outcome.status;
  deps.log(`${what} ${summary} (job ${id})`);
  await deps.recorder
    .end(id, outcome, pending)
    .catch((error: Error) => deps.log(`could not record the ${what} (job ${id}): ${error.message}`));
  return outcome;
}

/**
 * Runs the group's periodic script every `periodic_script_interval_seconds`, never two at once,
 * following config changes without a restart.
 */
export class PeriodicScript {
  private readonly deps: WorkerScriptDeps;
  private timer: NodeJS.Timeout | null = null;
  private current: { content: string; intervalSecs: number } | null = null;
  private running: Promise<unknown> | null = null;
  private readonly controller = new AbortController();

  constructor(deps: WorkerScriptDeps) {
    this.deps = deps;
  }

  configure(config: WorkerGroupConfig | null): void {
    const content = config?.periodic_script_bash;
    const intervalSecs = config?.periodic_script_interval_seconds;
    const next = content && intervalSecs ? { content, intervalSecs } : null;
    if (next?.content === this.current?.content && next?.intervalSecs === this.current?.intervalSecs) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.current = next;
    if (!next || this.controller.signal.aborted) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = runWorkerScript(
        this.deps,
        "periodic_script",
        next.content,
        this.controller.signal,
      ).finally(() => (this.running = null));
    }, next.intervalSecs * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.controller.abort("shutdown");
    await this.running;
  }
}
