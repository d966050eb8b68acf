// Real pipes for a job's stdout and stderr. Imports nothing but node: modules: the process
// launcher uses it, and stays small on purpose (see launcher-process.ts).
//
// Why: Node's `stdio: "pipe"` gives a child a socketpair, and a socket cannot be opened again by
// path, so `echo oops > /dev/stderr` (a common way to log in bash) failed in every job with "No
// such device or address", where Windmill's workers give their jobs pipes. Node cannot make a
// pipe, so FIFOs are made ahead, in batches (one `mkfifo` for many), in a private folder; each is
// opened (read end first, so that opening the write end does not block) and unlinked at once.
// The folder is removed when the process exits, and named after it (see owned-folders.ts) so that
// the next process to make one removes those of processes killed before they could.
import { execFile, execFileSync, spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import {
  accessSync,
  closeSync,
  constants,
  mkdtempSync,
  chmodSync,
  openSync,
  renameSync,
  rmSync,
  statfsSync,
  unlinkSync,
} from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { ownerTag, removeStaleFolders } from "./owned-folders.ts";

// A job takes up to four FIFOs, and a worker of 8 slots starts a few dozen jobs a second: the stock
// is refilled well ahead, since running dry means a mkfifo that blocks the event loop.
const BATCH = 256;
const PIPES_PREFIX = "millrace-pipes-";
const NEIGHBOURS_PREFIX = "millrace-fifo-homes-";
const LOW_WATER = 128;
const TMPFS_MAGIC = 0x01021994;
// Read and write for everyone: a job running as another user must be able to open its own
// stdout again (/dev/stdout is /proc/self/fd/1). Only the fds lead to them: the folder is 0700 and
// each FIFO is unlinked as soon as it is opened.
const FIFO_MODE = "666";
// mkfifo needs nothing of this process's environment. Typed as ProcessEnv because Next's types
// (the web app type-checks this package too) make NODE_ENV a required key.
const NO_ENV = {} as NodeJS.ProcessEnv;

interface OutputPipe {
  reader: net.Socket;
  /** The write end, for the child's stdio; closed here once the child is spawned. */
  writeFd: number;
}

class FifoStock {
  private dir: string | null = null;
  private counter = 0;
  private readonly names: string[] = [];
  private refilling = false;
  private unavailable = false;

  /** A fresh pipe, or null when no FIFO can be made here (the caller falls back to a socketpair). */
  take(): OutputPipe | null {
    const name = this.name();
    if (name === null) return null;
    try {
      const readFd = openSync(name, constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        const writeFd = openSync(name, constants.O_WRONLY);
        return { reader: new net.Socket({ fd: readFd, readable: true, writable: false }), writeFd };
      } catch (error) {
        closeSync(readFd);
        throw error;
      }
    } catch {
      return null;
    } finally {
      unlinkQuietly(name);
    }
  }

  /**
   * A FIFO of which this process holds one end only (non-blocking): another process opens the
   * other by its path (see `SpawnRequest.pipes`), then unlinks it. A write end is opened while a
   * read end is briefly held (opening it alone would fail), so that the other side's read blocks
   * until this side writes and closes.
   */
  hold(end: "read" | "write"): HeldFifo | null {
    const name = this.name();
    if (name === null) return null;
    const flags = constants.O_NONBLOCK;
    let reader: number | null = null;
    try {
      reader = openSync(name, constants.O_RDONLY | flags);
      if (end === "read") return { path: name, fd: reader };
      const writer = openSync(name, constants.O_WRONLY | flags);
      closeSync(reader);
      return { path: name, fd: writer };
    } catch {
      if (reader !== null) closeSync(reader);
      unlinkQuietly(name);
      return null;
    }
  }

  /** Moves a fresh FIFO (mode 666) to `target`, on the stock's filesystem (see `neighbours`). */
  move(target: string): boolean {
    const name = this.name();
    if (name === null) return false;
    try {
      renameSync(name, target);
      return true;
    } catch {
      unlinkQuietly(name);
      return false;
    }
  }

  private neighboursDir: string | null = null;

  /**
   * A folder beside the stock (so on its filesystem: a FIFO moves there by a rename), which others
   * may traverse but not list (0711): what its caller makes inside says who may read it.
   */
  neighbours(): string | null {
    if (this.neighboursDir || this.name() === null) return this.neighboursDir;
    const base = path.dirname(this.dir!);
    try {
      const dir = mkdtempSync(path.join(base, `${NEIGHBOURS_PREFIX}${ownerTag()}-`));
      chmodSync(dir, 0o711);
      process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
      this.neighboursDir = dir;
    } catch {
      return null;
    }
    return this.neighboursDir;
  }

  private name(): string | null {
    if (this.unavailable) return null;
    if (this.names.length === 0) {
      try {
        const names = this.nextNames();
        execFileSync("mkfifo", mkfifoArgs(names), { env: NO_ENV, stdio: "ignore" });
        this.names.push(...names);
      } catch {
        this.unavailable = true;
        return null;
      }
    }
    if (this.names.length < LOW_WATER) this.refill();
    return this.names.pop()!;
  }

  private nextNames(): string[] {
    if (!this.dir) {
      const base = fifoBase();
      removeStaleFolders(base, PIPES_PREFIX);
      removeStaleFolders(base, NEIGHBOURS_PREFIX);
      const dir = mkdtempSync(path.join(base, `${PIPES_PREFIX}${ownerTag()}-`));
      process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
      this.dir = dir;
    }
    return Array.from({ length: BATCH }, () => path.join(this.dir!, String(this.counter++)));
  }

  private refill(): void {
    if (this.refilling) return;
    this.refilling = true;
    const names = this.nextNames();
    execFile("mkfifo", mkfifoArgs(names), { env: NO_ENV }, (error: Error | null) => {
      this.refilling = false;
      if (!error) this.names.unshift(...names);
    });
  }
}

/**
 * Where the FIFOs' folder goes: /dev/shm when it is a tmpfs this process may write to and TMPDIR
 * names no other place, else the temporary folder. A FIFO holds no data, but on a disk filesystem
 * making and unlinking one journals an inode (~0.2 ms of kernel time on ext4 here, four per job);
 * on a tmpfs it costs a twentieth of that.
 */
function fifoBase(): string {
  // os.tmpdir() is /tmp unless TMPDIR (or TMP, TEMP) names another folder.
  if (os.tmpdir() === "/tmp") {
    try {
      if (statfsSync("/dev/shm").type === TMPFS_MAGIC) {
        accessSync("/dev/shm", constants.W_OK | constants.X_OK);
        return "/dev/shm";
      }
    } catch {
      // no /dev/shm here, or not ours to write
    }
  }
  return os.tmpdir();
}

function unlinkQuietly(name: string): void {
  try {
    unlinkSync(name);
  } catch {
    // already gone
  }
}

function mkfifoArgs(names: string[]): string[] {
  return ["-m", FIFO_MODE, "--", ...names];
}

const fifos = new FifoStock();

/** One end of a FIFO whose other end another process opens by `path`. */
export interface HeldFifo {
  path: string;
  /**
   * Opened non-blocking. A read end is wrapped in a socket only once a writer has it open (until
   * then a read sees EOF).
   */
  fd: number;
}

/**
 * A FIFO to read here what a process started elsewhere writes, or to write what it reads; null
 * when none can be made.
 */
export function holdFifo(end: "read" | "write"): HeldFifo | null {
  return fifos.hold(end);
}

/**
 * A folder for folders that receive FIFOs by `moveFifo` (a kept sandbox's control folder, see
 * warm-sandbox.ts): on the FIFOs' filesystem, 0711, removed when this process exits. Null when
 * no FIFO can be made here.
 */
export function fifoNeighbours(): string | null {
  return fifos.neighbours();
}

/** Makes a FIFO (mode 666) at `target`, a path under fifoNeighbours(); false when none could be. */
export function moveFifo(target: string): boolean {
  return fifos.move(target);
}

/** Closes held ends and unlinks their FIFOs (a spawn that did not happen). */
export function dropHeldFifos(held: HeldFifo[]): void {
  for (const fifo of held) {
    unlinkQuietly(fifo.path);
    try {
      closeSync(fifo.fd);
    } catch {
      // already closed
    }
  }
}

/**
 * FIFOs (by path) whose other ends another process holds, to give a job process: its stdin
 * (`control`: a warm sandbox's stub reads its job there), stdout, stderr and, for a warm
 * sandbox's bash stub, fd 4 (where it reports its script's exit status, see warm-sandbox.ts).
 * Nothing of them is relayed by the process that spawns it.
 */
export interface ChildPipePaths {
  control: string;
  stdout: string;
  stderr: string;
  status?: string;
}

/**
 * Opens the ends of FIFOs whose other ends another process holds (the child's stdin, stdout,
 * stderr and fd 4), and unlinks them. Non-blocking, so that a reader already gone fails the open
 * (ENXIO) instead of hanging this process; libuv makes a child's fds 0–2 blocking again, and fd 4
 * takes one short write.
 */
function openChildPipes(paths: ChildPipePaths): number[] {
  const ends: [string, number][] = [
    [paths.control, constants.O_RDONLY],
    [paths.stdout, constants.O_WRONLY],
    [paths.stderr, constants.O_WRONLY],
    ...(paths.status ? [[paths.status, constants.O_WRONLY] as [string, number]] : []),
  ];
  const fds: number[] = [];
  try {
    for (const [name, flags] of ends) {
      fds.push(openSync(name, flags | constants.O_NONBLOCK));
      unlinkQuietly(name);
    }
    return fds;
  } catch (error) {
    for (const fd of fds) closeSync(fd);
    throw error;
  }
}

function takePair(): { out: OutputPipe; err: OutputPipe } | null {
  const out = fifos.take();
  const err = out ? fifos.take() : null;
  if (out && err) return { out, err };
  if (out) {
    out.reader.destroy();
    closeSync(out.writeFd);
  }
  return null;
}

export interface SpawnedJob {
  child: ChildProcess;
  /** Null when the output goes to FIFOs another process reads (`pipes`). */
  stdout: Readable | null;
  stderr: Readable | null;
  /** Resolves once the process exited (or could not start) and the outputs read here are closed. */
  closed: Promise<void>;
}

export interface JobProcessIo {
  /** A socketpair as stdin (a dedicated worker's process takes its jobs there); else nothing. */
  stdin?: boolean;
  /** These FIFOs, whose other ends another process holds, instead of pipes read here. */
  pipes?: ChildPipePaths;
}

/**
 * Spawns a job process, detached, with real pipes as stdout and stderr (socketpairs where FIFOs
 * cannot be made). Throws as `spawn` does.
 */
export function spawnJobProcess(
  command: string,
  args: string[],
  options: Omit<SpawnOptions, "stdio" | "detached">,
  io?: JobProcessIo & { pipes?: undefined },
): SpawnedJob & { stdout: Readable; stderr: Readable };
export function spawnJobProcess(
  command: string,
  args: string[],
  options: Omit<SpawnOptions, "stdio" | "detached">,
  io: JobProcessIo,
): SpawnedJob;
export function spawnJobProcess(
  command: string,
  args: string[],
  options: Omit<SpawnOptions, "stdio" | "detached">,
  io: JobProcessIo = {},
): SpawnedJob {
  const given = io.pipes ? openChildPipes(io.pipes) : null;
  const piped = given ? null : takePair();
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      ...options,
      detached: true,
      stdio: given
        ? [given[0]!, given[1]!, given[2]!, "ignore", ...(given[3] === undefined ? [] : [given[3]])]
        : [
            io.stdin ? "pipe" : "ignore",
            piped ? piped.out.writeFd : "pipe",
            piped ? piped.err.writeFd : "pipe",
          ],
    });
  } catch (error) {
    piped?.out.reader.destroy();
    piped?.err.reader.destroy();
    throw error;
  } finally {
    // The child holds the write ends now: the readers see EOF once it, and whatever it started,
    // closed them.
    if (piped) {
      closeSync(piped.out.writeFd);
      closeSync(piped.err.writeFd);
    }
    for (const fd of given ?? []) closeSync(fd);
  }
  const stdout = given ? null : piped ? piped.out.reader : child.stdout!;
  const stderr = given ? null : piped ? piped.err.reader : child.stderr!;
  // A read error ends the stream like EOF does; the job's exit still settles it.
  stdout?.on("error", () => {});
  stderr?.on("error", () => {});
  const ended = (stream: Readable | null) =>
    new Promise<void>((resolve) => {
      if (!stream || stream.destroyed) return resolve();
      stream.once("close", () => resolve());
    });
  const closed = Promise.all([
    new Promise<void>((resolve) => child.once("close", () => resolve())),
    ended(stdout),
    ended(stderr),
  ]).then(() => {});
  return { child, stdout, stderr, closed };
}
