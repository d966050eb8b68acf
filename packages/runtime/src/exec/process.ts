import { writeFileSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { spawnHere, type ProcessLauncher, type StartedProcess } from "./launcher.ts";
import { watchDisk, type DiskLimits } from "./disk.ts";
import { sampleSession, sampleTree } from "./memory.ts";
import { onSampleTick, sampleDue, SAMPLE_TICK_MS } from "./sample-tick.ts";

export const MAX_LOG_BYTES = 2 * 1024 * 1024;
export const TRUNCATION_NOTE = "\n[output truncated at 2 MB]\n";
const MAX_TIMER_MS = 2 ** 31 - 1;
// After the main process exits, its leftovers are killed; this bounds the wait for pipes still held by
// anything that escaped the process group (setsid).
const PIPE_DRAIN_GRACE_MS = 1000;

export interface RunOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  onLog(chunk: string): void;
  /** Keep the end of stdout (up to MAX_LOG_BYTES characters), e.g. to read a bash result line. */
  keepStdout: boolean;
  /** Kill the process tree when its resident memory exceeds this many bytes. */
  memoryLimitBytes?: number | null;
  /** Kill the process tree when it reaches this many tasks (processes and threads). */
  maxTasks?: number | null;
  /** Kill the process tree once it has written more than this to stdout and stderr. */
  maxOutputBytes?: number | null;
  /** Kill the process tree when its folder outgrows its quota or holds a file at the size limit. */
  disk?: DiskLimits | null;
  /**
   * "tree": the process and its descendants (enough in a pid namespace, whose init adopts
   * orphans); "session": every process of its session, orphans included (without the sandbox).
   */
  sampleBy?: "tree" | "session";
  /**
   * With "tree": how many levels at the top of the tree are the sandbox's or the fence's own
   * processes (see BWRAP_OWN_LEVELS). The job cannot run there (an orphan is adopted by the pid
   * namespace's init, and sits one level below it), so the disk watch does not read their open
   * files.
   */
  sandboxLevels?: number;
  /** Run as this user (the worker must be root). */
  uid?: number;
  gid?: number;
  /** Start the process from this launcher rather than from the calling process. */
  launcher?: ProcessLauncher | null;
  /**
   * A process already started and just told to go (a job in a warm sandbox): run this one instead
   * of starting `command` (which, with `args`, `cwd`, `env` and the user, it was given otherwise).
   */
  started?: StartedProcess | null;
}

// How often the process tree is sampled (every tick of the worker's sampling timer, see
// sample-tick.ts); a fast allocator can overshoot the memory limit by what it allocates in this time
// before it is killed. A session sample scans all of /proc: every other tick.
const SESSION_SAMPLE_MS = 2 * SAMPLE_TICK_MS;

export interface RunResult {
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  timedOut: boolean;
  canceled: boolean;
  outOfMemory: boolean;
  processLimit: boolean;
  outputLimit: boolean;
  /** Killed: its folder held more than its disk quota (see watchDisk). */
  diskQuota: boolean;
  /** Killed: a file of its folder reached the file-size limit. */
  fileSizeLimit: boolean;
  /** Highest resident memory of the process tree seen while sampling (bytes). */
  memoryPeakBytes: number;
  spawnError?: Error;
  /** The last few KB of stdout and stderr, interleaved. */
  outputTail: string;
  /**
   * Resolves once nothing the job started runs any more: its process group (what the job left
   * running, its sandbox) has been killed a turn after the exit, or a kept sandbox's stub had
   * killed it before it reported the exit (StartedProcess.keepsGroup).
   */
  groupKilled: Promise<void>;
  stdoutTail: string;
}

class Tail {
  private text = "";
  private readonly cap: number;
  constructor(cap: number) {
    this.cap = cap;
  }
  push(chunk: string): void {
    this.text += chunk;
    if (this.text.length > this.cap * 2) this.text = this.text.slice(-this.cap);
  }
  value(): string {
    return this.text.length > this.cap ? this.text.slice(-this.cap) : this.text;
  }
}

class LogSink {
  private bytes = 0;
  private truncated = false;
  private readonly onLog: (chunk: string) => void;
  constructor(onLog: (chunk: string) => void) {
    this.onLog = onLog;
  }
  write(text: string, byteLength: number): void {
    if (this.truncated || text === "") return;
    if (this.bytes + byteLength <= MAX_LOG_BYTES) {
      this.bytes += byteLength;
      this.emit(text);
      return;
    }
    const head = Buffer.from(text, "utf8")
      .subarray(0, MAX_LOG_BYTES - this.bytes)
      .toString("utf8")
      .replace(/\uFFFD$/, "");
    this.truncated = true;
    this.bytes = MAX_LOG_BYTES;
    this.emit(head + TRUNCATION_NOTE);
  }
  private emit(text: string): void {
    try {
      this.onLog(text);
    } catch {
      // A failing log consumer must not take the job (or the worker's event loop) down with it.
    }
  }
}

/**
 * Runs one process in its own process group, so that a timeout or cancel can SIGKILL the whole tree
 * (`kill(-pid)`), and so that background children are reaped when the main process exits.
 */
export function runProcess(options: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    let markGroupKilled!: () => void;
    const groupKilled = new Promise<void>((done) => (markGroupKilled = done));
    const outputTail = new Tail(8 * 1024);
    const stdoutTail = options.keepStdout ? new Tail(MAX_LOG_BYTES) : null;
    const sink = new LogSink(options.onLog);
    const result: RunResult = {
      exitCode: null,
      exitSignal: null,
      timedOut: false,
      canceled: false,
      outOfMemory: false,
      processLimit: false,
      outputLimit: false,
      diskQuota: false,
      fileSizeLimit: false,
      memoryPeakBytes: 0,
      outputTail: "",
      stdoutTail: "",
      groupKilled,
    };
    const request = {
      command: options.command,
      args: options.args,
      cwd: options.cwd,
      env: options.env,
      ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.gid ?? options.uid }),
    };
    const child: StartedProcess =
      options.started ?? (options.launcher ? options.launcher.spawn(request) : spawnHere(request));

    let settled = false;
    let exited = false;
    let killRequested = false;
    let drainTimer: NodeJS.Timeout | undefined;
    let stopSampling: (() => void) | undefined;
    let diskWatch: { stop(): void } | undefined;
    // Before the pid is known (the launcher replies asynchronously) a kill is remembered and sent
    // as soon as it is.
    const killGroup = (): void => {
      killRequested = true;
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const timer = setTimeout(
      () => {
        result.timedOut = true;
        killGroup();
      },
      Number.isNaN(options.timeoutMs) ? MAX_TIMER_MS : Math.max(0, Math.min(options.timeoutMs, MAX_TIMER_MS)),
    );
    // detached: the child leads a new session whose id is its pid.
    const bySession = options.sampleBy === "session";
    void child.ready.then((pid) => {
      if (pid === undefined || settled) return;
      if (killRequested) killGroup();
      if (!child.preferredForOomKill) preferForOomKill(pid);
      // The job's processes as last sampled: the disk watch looks for deleted files they hold open.
      let pids: number[] = bySession || !options.sandboxLevels ? [pid] : [];
      let sessionDueAt = -Infinity;
      stopSampling = onSampleTick((now) => {
        if (bySession && !sampleDue(now, sessionDueAt)) return;
        sessionDueAt = now + SESSION_SAMPLE_MS;
        const found = diskWatch ? [] : undefined;
        const sample = bySession ? sampleSession(pid, found) : sampleTree(pid, found, options.sandboxLevels);
        if (found) pids = found;
        result.memoryPeakBytes = Math.max(result.memoryPeakBytes, sample.residentBytes);
        if (result.outOfMemory || result.processLimit) return;
        if (options.memoryLimitBytes && sample.residentBytes > options.memoryLimitBytes) {
          result.outOfMemory = true;
          killGroup();
        } else if (options.maxTasks && sample.tasks >= options.maxTasks) {
          result.processLimit = true;
          killGroup();
        }
      });
      // After the memory sampler: in a tick, the disk watch reads the processes it just found.
      if (options.disk) {
        diskWatch = watchDisk(
          options.disk,
          () => pids,
          (why) => {
            if (why === "quota") result.diskQuota = true;
            else result.fileSizeLimit = true;
            killGroup();
          },
        );
      }
    });
    const onAbort = (): void => {
      result.canceled = true;
      killGroup();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });

    const decoders = { out: new StringDecoder("utf8"), err: new StringDecoder("utf8") };
    let outputBytes = 0;
    const count = (bytes: number): void => {
      outputBytes += bytes;
      if (options.maxOutputBytes && outputBytes > options.maxOutputBytes && !result.outputLimit) {
        result.outputLimit = true;
        killGroup();
      }
    };
    const take = (text: string, bytes: number, isStdout: boolean): void => {
      if (text === "") return;
      outputTail.push(text);
      if (isStdout) stdoutTail?.push(text);
      sink.write(text, bytes);
    };
    child.on("data", (buf, isStdout) => {
      count(buf.length);
      take((isStdout ? decoders.out : decoders.err).write(buf), buf.length, isStdout);
    });

    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stopSampling?.();
      diskWatch?.stop();
      clearTimeout(drainTimer);
      options.signal?.removeEventListener("abort", onAbort);
      const restOut = decoders.out.end();
      const restErr = decoders.err.end();
      take(restOut, Buffer.byteLength(restOut), true);
      take(restErr, Buffer.byteLength(restErr), false);
      result.outputTail = outputTail.value();
      result.stdoutTail = stdoutTail?.value() ?? "";
      // Without an exit (it could not start) there is no group to kill.
      if (!exited) markGroupKilled();
      resolve(result);
    };
    child.on("error", (err) => {
      result.spawnError = err;
      if (!exited) finish();
    });
    child.on("exit", (code, signal) => {
      exited = true;
      result.exitCode = code;
      result.exitSignal = signal;
      // Leftovers are killed a turn later: the kill (of a sandbox's processes, whose teardown it
      // starts) must not hold up the end of the job, which is recorded first. A kept sandbox
      // stays: its stub killed what the job left before it reported the exit.
      if (child.keepsGroup) markGroupKilled();
      else
        setImmediate(() => {
          killGroup();
          markGroupKilled();
        });
      drainTimer = setTimeout(() => {
        child.releasePipes();
        finish();
      }, PIPE_DRAIN_GRACE_MS);
    });
    child.on("close", finish);
    if (options.signal?.aborted) onAbort();
  });
}

/**
 * Makes the kernel's OOM killer pick the job before the worker. Best effort: a child forked before
 * this write keeps the old score, the memory sampler still applies to it.
 */
export function preferForOomKill(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/oom_score_adj`, "1000");
  } catch {
    // Not Linux, or the process already exited.
  }
}
