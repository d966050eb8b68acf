import { fork, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { closeSync, writeSync } from "node:fs";
import net from "node:net";
import { fileURLToPath } from "node:url";
import {
  spawnRequested,
  type LauncherReply,
  type LauncherRequest,
  type SpawnRequest,
} from "./launcher-protocol.ts";
import { dropHeldFifos, holdFifo, type HeldFifo, type SpawnedJob } from "./output-pipes.ts";

export type { SpawnRequest };

export interface JobProcessEvents {
  /** Output, `stdout` false for stderr. */
  data: [chunk: Buffer, stdout: boolean];
  error: [error: Error];
  exit: [code: number | null, signal: NodeJS.Signals | null];
  /** Exited and its pipes are closed (or released). */
  close: [];
  /** A line its status pipe carried (a warm sandbox's stub reports each job's end there). */
  status: [line: string];
}

/**
 * FIFOs held here for a process its launcher starts: its stdin (a warm sandbox's stub reads its
 * jobs there), stdout and stderr and, for a warm sandbox's bash stub, the status pipe where the
 * stub reports each job's end.
 */
interface HeldPipes {
  control: HeldFifo;
  stdout: HeldFifo;
  stderr: HeldFifo;
  status: HeldFifo | null;
}

/** Hold a process's pipes here rather than have the launcher relay them (see `spawn`). */
export interface PipesHere {
  /** Also a status pipe on its fd 4 (a warm sandbox's bash stub). */
  status: boolean;
}

function holdPipes(here: PipesHere | undefined): HeldPipes | null {
  if (!here) return null;
  const held: HeldFifo[] = [];
  for (const end of ["write", "read", "read", ...(here.status ? ["read" as const] : [])] as const) {
    const fifo = holdFifo(end);
    if (!fifo) {
      dropHeldFifos(held);
      return null;
    }
    held.push(fifo);
  }
  return { control: held[0]!, stdout: held[1]!, stderr: held[2]!, status: held[3] ?? null };
}

function heldFifos(held: HeldPipes): HeldFifo[] {
  return [held.control, held.stdout, held.stderr, ...(held.status ? [held.status] : [])];
}

function pipePaths(held: HeldPipes | null): Pick<SpawnRequest, "pipes"> {
  if (!held) return {};
  return {
    pipes: {
      control: held.control.path,
      stdout: held.stdout.path,
      stderr: held.stderr.path,
      ...(held.status ? { status: held.status.path } : {}),
    },
  };
}

/**
 * What runProcess runs: a process (or, for a sandbox kept for several jobs, one job in it, see
 * warm-sandbox.ts) whose process group `kill(-pid)` ends. Listeners attached right after the
 * start see every event: none is emitted synchronously.
 */
export interface StartedProcess extends EventEmitter<JobProcessEvents> {
  pid: number | undefined;
  /** The pid once the process started; undefined when it could not start ('error' follows). */
  readonly ready: Promise<number | undefined>;
  /**
   * True once it exited leaving nothing of its own running in its group, which stays for other
   * jobs (a kept sandbox): the group must not be killed after the exit.
   */
  readonly keepsGroup: boolean;
  /** Its processes are already the OOM killer's first pick (a kept sandbox's, see warm-sandbox.ts). */
  readonly preferredForOomKill?: boolean;
  /** Stops reading the pipes, e.g. when a process that escaped the group still holds them. */
  releasePipes(): void;
}

/**
 * A job process, in a session of its own (so `kill(-pid)` reaches its whole group), started
 * either by this process or by a ProcessLauncher.
 *
 * Its owner reports its start, output, exit and close. When its pipes are read here instead
 * (`held`), the process is closed once they reached EOF and its exit is known.
 */
export class JobProcess extends EventEmitter<JobProcessEvents> implements StartedProcess {
  pid: number | undefined;
  readonly keepsGroup = false;
  /** The pid once the process started; undefined when it could not start ('error' follows). */
  readonly ready: Promise<number | undefined>;
  private resolveReady!: (pid: number | undefined) => void;
  private readonly release: () => void;
  /** The write end of the process's stdin (held here) while it is open. */
  private controlFd: number | null = null;
  private held: HeldPipes | null;
  private readonly readsHere: boolean;
  /** Readers of held pipes not yet at their end. */
  private readonly readers = new Set<net.Socket>();
  private statusReader: net.Socket | null = null;
  private exitReported = false;
  private ownerClosed = false;
  private closeReported = false;

  constructor(release: () => void, held: HeldPipes | null = null) {
    super();
    this.release = release;
    this.held = held;
    this.readsHere = held !== null;
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
  }

  started(pid: number | undefined): void {
    this.pid = pid;
    const held = this.held;
    this.held = null;
    if (held && pid === undefined) dropHeldFifos(heldFifos(held));
    else if (held) this.readHeld(held);
    this.resolveReady(pid);
  }

  /** The owner's report of the process's exit; only the first report counts. */
  exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exitReported) return;
    this.exitReported = true;
    this.emit("exit", code, signal);
    this.closeIfDone();
  }

  /** The owner's report that the process is gone (or never started) and its pipes closed. */
  closed(): void {
    this.ownerClosed = true;
    this.closeIfDone();
  }

  /** Stops reading the pipes, e.g. when a process that escaped the group still holds them. */
  releasePipes(): void {
    for (const reader of this.readers) reader.destroy();
    this.release();
  }

  /**
   * Writes the one message of a process whose pipes are held here to its stdin, and closes it:
   * the EOF ends its read.
   */
  sendControl(payload: string): void {
    const fd = this.controlFd;
    this.controlFd = null;
    if (fd === null) return;
    const writer = new net.Socket({ fd, readable: false, writable: true });
    writer.on("error", () => {});
    // Destroyed (closed) once written: `end` would shut a FIFO down as if it were a socket.
    writer.write(payload, () => writer.destroy());
  }

  /**
   * Writes a short line (at most PIPE_BUF bytes, so written whole or not at all) to the stdin of
   * a process whose pipes are held here, at once, leaving it open. Throws when it cannot (the
   * pipe is full or closed).
   */
  writeControl(line: string): void {
    if (this.controlFd === null) throw new Error("the process's stdin is closed");
    writeSync(this.controlFd, line);
  }

  private closeIfDone(): void {
    if (this.closeReported || this.readers.size > 0) return;
    if (!this.ownerClosed && !(this.readsHere && this.exitReported)) return;
    this.closeReported = true;
    this.statusReader?.destroy();
    if (this.controlFd !== null) closeSync(this.controlFd);
    this.controlFd = null;
    this.emit("close");
  }

  // Wrapped only now that the process holds the write ends: before, a read would see EOF.
  private readHeld(held: HeldPipes): void {
    this.controlFd = held.control.fd;
    const read = (fifo: HeldFifo, isStdout: boolean) => {
      const reader = new net.Socket({ fd: fifo.fd, readable: true, writable: false });
      this.readers.add(reader);
      reader.on("data", (chunk: Buffer) => this.emit("data", chunk, isStdout));
      reader.on("error", () => {});
      reader.once("close", () => this.readerDone(reader));
      return reader;
    };
    read(held.stdout, true);
    read(held.stderr, false);
    if (!held.status) return;
    // One event per line, read to its end like the outputs (a line written just before the
    // process exited is not lost). The writer is the stub alone: a job's processes never hold it.
    const status = new net.Socket({ fd: held.status.fd, readable: true, writable: false });
    this.statusReader = status;
    this.readers.add(status);
    status.once("close", () => this.readerDone(status));
    let text = "";
    status.on("error", () => {});
    status.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      let end: number;
      while ((end = text.indexOf("\n")) >= 0) {
        const line = text.slice(0, end);
        text = text.slice(end + 1);
        this.emit("status", line);
      }
    });
  }

  private readerDone(reader: net.Socket): void {
    if (this.readers.delete(reader)) this.closeIfDone();
  }
}

/** Starts a process from this process (a fork of it: cheap only while this process is small). */
export function spawnHere(request: SpawnRequest, pipesHere?: PipesHere): JobProcess {
  let job: SpawnedJob | undefined;
  const held = holdPipes(pipesHere);
  const proc = new JobProcess(() => {
    job?.stdout?.destroy();
    job?.stderr?.destroy();
  }, held);
  try {
    job = spawnRequested({ ...request, ...pipePaths(held) });
  } catch (error) {
    proc.started(undefined);
    setImmediate(() => {
      proc.emit("error", error instanceof Error ? error : new Error(String(error)));
      proc.closed();
    });
    return proc;
  }
  const { child } = job;
  proc.started(child.pid);
  job.stdout?.on("data", (chunk: Buffer) => proc.emit("data", chunk, true));
  job.stderr?.on("data", (chunk: Buffer) => proc.emit("data", chunk, false));
  child.on("error", (error) => proc.emit("error", error));
  child.on("exit", (code, signal) => proc.exited(code, signal));
  void job.closed.then(() => proc.closed());
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

  /**
   * `pipesHere`: this process holds the process's stdin, stdout and stderr itself (FIFOs whose
   * other ends the launcher opens for the child) instead of the launcher relaying them: one hop
   * less for its input, each output message and the end of a job. For warm sandboxes, whose jobs
   * are the ones on the fast path; their stubs read their job on stdin (see `sendControl`).
   */
  spawn(request: SpawnRequest, pipesHere?: PipesHere): JobProcess {
    const channel = this.channel();
    const id = this.nextId++;
    const held = holdPipes(pipesHere);
    const proc = new JobProcess(() => this.send(channel, { type: "release", id }), held);
    this.running.set(id, proc);
    this.send(channel, { type: "spawn", id, ...request, ...pipePaths(held) });
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
        proc.exited(reply.code, reply.signal);
        break;
      case "close":
        this.running.delete(reply.id);
        proc.closed();
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
  proc.closed();
}
