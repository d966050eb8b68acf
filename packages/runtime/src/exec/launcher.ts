import { fork, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { fileURLToPath } from "node:url";
import {
  spawnRequested,
  writeControl,
  type LauncherReply,
  type LauncherRequest,
  type SpawnRequest,
} from "./launcher-protocol.ts";
import type { SpawnedJob } from "./output-pipes.ts";

export type { SpawnRequest };

interface JobProcessEvents {
  /** Output, `stdout` false for stderr. */
  data: [chunk: Buffer, stdout: boolean];
  error: [error: Error];
  exit: [code: number | null, signal: NodeJS.Signals | null];
  /** Exited and its pipes are closed (or released). */
  close: [];
}

/**
 * A job process, in a session of its own (so `kill(-pid)` reaches its whole group), started
 * either by this process or by a ProcessLauncher. Listeners attached right after the start see
 * every event: none is emitted synchronously.
 */
export class JobProcess extends EventEmitter<JobProcessEvents> {
  pid: number | undefined;
  /** The pid once the process started; undefined when it could not start ('error' follows). */
  readonly ready: Promise<number | undefined>;
  private resolveReady!: (pid: number | undefined) => void;
  private readonly release: () => void;
  private readonly control: (payload: string) => void;

  constructor(release: () => void, control: (payload: string) => void = () => {}) {
    super();
    this.release = release;
    this.control = control;
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
  }

  started(pid: number | undefined): void {
    this.pid = pid;
    this.resolveReady(pid);
  }

  /** Stops reading the pipes, e.g. when a process that escaped the group still holds them. */
  releasePipes(): void {
    this.release();
  }

  /** Writes the one message of a process spawned with `control` to its fd 3, and closes it. */
  sendControl(payload: string): void {
    this.control(payload);
  }
}

/** Starts a process from this process (a fork of it: cheap only while this process is small). */
export function spawnHere(request: SpawnRequest): JobProcess {
  let job: SpawnedJob | undefined;
  const proc = new JobProcess(
    () => {
      job?.stdout.destroy();
      job?.stderr.destroy();
    },
    (payload) => writeControl(job?.child, payload),
  );
  try {
    job = spawnRequested(request);
  } catch (error) {
    proc.started(undefined);
    setImmediate(() => {
      proc.emit("error", error instanceof Error ? error : new Error(String(error)));
      proc.emit("close");
    });
    return proc;
  }
  const { child } = job;
  proc.started(child.pid);
  job.stdout.on("data", (chunk: Buffer) => proc.emit("data", chunk, true));
  job.stderr.on("data", (chunk: Buffer) => proc.emit("data", chunk, false));
  child.on("error", (error) => proc.emit("error", error));
  child.on("exit", (code, signal) => proc.emit("exit", code, signal));
  void job.closed.then(() => proc.emit("close"));
  return proc;
}

// Resolved when first needed: the web app bundles this module (it never starts a launcher), and
// its bundler rewrites `new URL(…, import.meta.url)` into something that is not a file path.
const launcherProgram = () => fileURLToPath(new URL("./launcher-process.ts", import.meta.url));

/**
 * Starts job processes from a small helper process instead of the worker itself.
 *
 * Why: on Linux a spawn forks the calling process, and the fork costs more the more memory the
 * caller maps. The worker (Prisma, pg-boss, the TypeScript compiler) maps ~170 MB; on the 2-core
 * VMs this runs on, forking it took ~16 ms against ~9 ms from the ~50 MB launcher, for every job.
 * The launcher relays output over IPC (a few messages per job) and is restarted if it dies;
 * processes it was running at that moment are killed and reported as failed to start.
 */
export class ProcessLauncher {
  private child: ChildProcess | null = null;
  private nextId = 1;
  private readonly running = new Map<number, JobProcess>();
  private whenReady: Promise<void> | null = null;

  /**
   * Starts the launcher now rather than at the first job, and resolves once it is ready. A
   * worker calls this at start: the first job then pays nothing, and a stop signal arriving
   * before the launcher has set up its handlers cannot kill it.
   */
  async start(): Promise<void> {
    this.channel();
    await this.whenReady;
  }

  spawn(request: SpawnRequest): JobProcess {
    const channel = this.channel();
    const id = this.nextId++;
    const proc = new JobProcess(
      () => this.send(channel, { type: "release", id }),
      (payload) => this.send(channel, { type: "control", id, payload }),
    );
    this.running.set(id, proc);
    this.send(channel, { type: "spawn", id, ...request });
    return proc;
  }

  /** Stops the launcher; processes it started keep running (their sessions are their own). */
  async close(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    if (child.connected) child.disconnect();
    await exited;
  }

  private send(channel: ChildProcess, request: LauncherRequest): void {
    if (channel.connected) channel.send(request);
  }

  private channel(): ChildProcess {
    if (this.child?.connected) return this.child;
    const child = fork(launcherProgram(), [], {
      serialization: "advanced",
      // Its own process group: a signal for the worker's group (Ctrl-C, a stop) must not end it
      // while the worker lets its jobs finish. It exits when the worker disconnects or dies.
      detached: true,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      // Nothing of the worker's environment or flags: the launcher needs none of it.
      env: {} as NodeJS.ProcessEnv,
      execArgv: [],
    });
    let ready!: () => void;
    this.whenReady = new Promise((resolve) => (ready = resolve));
    child.on("message", (reply: LauncherReply) => (reply.type === "ready" ? ready() : this.dispatch(reply)));
    child.on("exit", () => {
      ready();
      if (this.child === child) this.child = null;
      const lost = [...this.running.values()];
      this.running.clear();
      for (const proc of lost) failLost(proc);
    });
    this.child = child;
    return child;
  }

  private dispatch(reply: LauncherReply): void {
    const proc = this.running.get(reply.id);
    if (!proc) return;
    switch (reply.type) {
      case "ready":
        break;
      case "spawned":
        proc.started(reply.pid);
        break;
      case "data":
        proc.emit(
          "data",
          Buffer.from(reply.chunk.buffer, reply.chunk.byteOffset, reply.chunk.byteLength),
          reply.fd === 1,
        );
        break;
      case "error":
        proc.started(proc.pid);
        proc.emit("error", Object.assign(new Error(reply.message), { code: reply.code }));
        break;
      case "exit":
        proc.emit("exit", reply.code, reply.signal);
        break;
      case "close":
        this.running.delete(reply.id);
        proc.emit("close");
        break;
    }
  }
}

/** The launcher died under a process: its output is gone, so the process must not go on. */
function failLost(proc: JobProcess): void {
  if (proc.pid !== undefined) {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  proc.started(proc.pid);
  proc.emit("error", new Error("the process launcher exited while the job ran"));
  proc.emit("close");
}
