import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import path from "node:path";
import { JOB_LANG, resolvedInterpreters } from "./interpreters.ts";
import { createJobDir, removeJobDir, removeJobDirSoon } from "./job-dir.ts";
import { ownerTag, removeStaleFolders } from "./owned-folders.ts";
import { bunStub, bunStubCanRun } from "./bun-stub.ts";
import { pythonStub } from "./python-stub.ts";
import {
  spawnHere,
  type JobProcess,
  type JobProcessEvents,
  type ProcessLauncher,
  type StartedProcess,
} from "./launcher.ts";
import { fifoNeighbours, moveFifo } from "./output-pipes.ts";
import { childrenOf } from "./memory.ts";
import { preferForOomKill } from "./process.ts";
import {
  BWRAP_OWN_LEVELS,
  bwrapArgs,
  jobUser,
  SANDBOX_CONTROL_DIR,
  sandboxScaffolding,
  type SandboxOptions,
} from "./sandbox.ts";

/**
 * What a sandbox is made of, its job folder aside: jobs with the same spec can share a pool.
 * `startEnv`: the variables its first process starts with, for interpreters that read some only
 * at their start (bun, see bun-stub.ts).
 */
export type WarmSandboxSpec = Omit<SandboxOptions, "jobDir"> & { startEnv?: Record<string, string> };

/**
 * The first process of a bash stub's sandbox: a bash that runs the sandbox's jobs one after the
 * other, each in a child of its own. For each line on its stdin (a FIFO the worker writes: the
 * job's number) it reads the job from its control folder (SANDBOX_CONTROL_DIR, bound read-only:
 * `job` holds NUL-terminated fields, `mode, count, env…, count, ulimit…, argv…`, a file since
 * bash reads a pipe one byte per system call), and forks the job: stdin /dev/null, stdout and
 * stderr the FIFOs `out` and `err` the worker reads, the limits set by `ulimit`, then an exec of
 * the command with exactly the job's environment. The stub was started with an empty
 * environment: exporting the job's variables, after unsetting the few bash set for itself,
 * leaves exactly the job's. Mode `clean` (see `needsCleanExec`) execs with `env -i`, which takes
 * any variable; so does a variable `export` refuses. The stub loads the jobs' locale once, as it
 * starts (an unexported LANG, unset in the child before the job's variables): bash loads a locale
 * whenever LANG is set, ~0.3–0.7 ms here unless the process loaded it before.
 *
 * When the child is done, nothing of the job may stay for the next one: every other process of
 * the pid namespace is killed (`kill -9 -1` spares only the caller and the namespace's init) and
 * awaited; /tmp, /dev/shm and /dev/mqueue are emptied, and must then be empty; no System V IPC
 * object may be left. Then it reports `<number> <exit status> <clean>` on fd 247, a status pipe
 * the worker reads, and waits for the next job. A sandbox reported unclean is not used again,
 * nor is one whose job was killed (the worker kills its whole process group then). /dev is
 * read-only; the job folder is emptied by the worker.
 *
 * The stub runs from an execute-only copy of bash (SANDBOX_CONTROL_DIR/millrace-stub): the
 * kernel marks a process that execs a file it may not read as not dumpable, so a job, running
 * as the same user, can neither ptrace it nor read its memory, environment or fds under /proc.
 * It cannot plant code in the stub to watch the next job.
 */
const stubScript = (env: string, scaffolding: Map<string, Set<string>>) => {
  // Per writable tmpfs folder (and folder bwrap made there, see sandboxScaffolding): its own
  // entries must be there, and it must stay usable; anything else in it is the job's.
  const tidy = [...scaffolding]
    .map(([dir, entries]) => `  _mr_tidy ${[dir, ...entries].map(shellQuote).join(" ")} || _mr_k=0`)
    .join("\n");
  return `set -f
shopt -s nullglob dotglob
_mr_tidy() {
  local d=$1 e x o
  shift
  [[ -d $d && -r $d && -w $d && -x $d ]] || return 1
  for e; do [[ -e $d/$e ]] || return 1; done
  for x in "$d"/*; do
    o=
    for e; do [[ $x == "$d/$e" ]] && o=1 && break; done
    [[ $o ]] || _mr_rm+=("$x")
  done
}
_mr_c=${SANDBOX_CONTROL_DIR}
LANG=${JOB_LANG}
exec 247>&4 4>&- 249<>"$_mr_c/idle"
while read -r _mr_n; do
  mapfile -t -d '' _mr_f < "$_mr_c/job" || exit 1
  (
    exec </dev/null >"$_mr_c/out" 2>"$_mr_c/err" 247>&- 249>&- || exit 126
    _mr_m=\${_mr_f[0]}
    _mr_e=\${_mr_f[1]}
    _mr_i=$((_mr_e + 2))
    _mr_u=\${_mr_f[_mr_i]}
    for _mr_s in "\${_mr_f[@]:_mr_i+1:_mr_u}"; do ulimit $_mr_s || exit 126; done
    _mr_a=("\${_mr_f[@]:_mr_i+1+_mr_u}")
    unset OLDPWD SHLVL _ LANG
    [[ $_mr_m != clean ]] && export "\${_mr_f[@]:2:_mr_e}" 2>/dev/null && exec "\${_mr_a[@]}"
    exec ${env} -i "PWD=$PWD" "\${_mr_f[@]:2:_mr_e}" "\${_mr_a[@]}"
  )
  _mr_s=$?
  _mr_k=1
  set +f
  for ((_mr_i = 0; _mr_i < 500; _mr_i++)); do
    _mr_p=(/proc/[0-9]*)
    ((\${#_mr_p[@]} <= 2)) && break
    kill -9 -1 2>/dev/null
    read -r -t 0.002 -u 249
  done
  ((\${#_mr_p[@]} <= 2)) || _mr_k=0
  _mr_rm=()
${tidy}
  if ((\${#_mr_rm[@]})); then
    command -p rm -rf -- "\${_mr_rm[@]}" 2>/dev/null
    _mr_rm=()
${tidy}
    ((\${#_mr_rm[@]})) && _mr_k=0
  fi
  set -f
  for _mr_q in shm msg sem; do
    _mr_l=()
    mapfile -n 2 _mr_l < /proc/sysvipc/$_mr_q
    ((\${#_mr_l[@]} > 1)) && _mr_k=0
  done
  builtin printf '%s %d %d\\n' "$_mr_n" "$_mr_s" "$_mr_k" >&247
done
`;
};

/** A word bash reads back as `text`. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

const ENV_CANDIDATES = ["/usr/bin/env", "/bin/env"];
// The stub's execute-only bash, in each control folder.
const STUB_NAME = "millrace-stub";
let stubBinary: string | null = null;
// A waiting sandbox's folder: `warm-<owner>-<uuid>` (see owned-folders.ts).
const WARM_PREFIX = "warm-";

// How long a replacement sandbox waits after a job ended (see replenish): while another one is
// ready, and when none is.
const REPLENISH_QUIET_MS = 50;
const REPLENISH_EMPTY_MS = 25;

// Names the stub's bash must not take with `export`: not identifiers, names bash reads when it
// starts or holds read-only (a fresh process gets them from its environment instead), and the
// stub's own (`_mr_…`).
const SHELL_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SHELL_RESERVED = /^(_mr_.*|BASH.*|ENV|IFS|POSIXLY_CORRECT|SHELLOPTS|PS4|SHLVL|PWD|EUID|PPID|UID)$/;

/** A variable that only `env -i` passes to the job unchanged. */
export function needsCleanExec(name: string): boolean {
  return !SHELL_IDENTIFIER.test(name) || SHELL_RESERVED.test(name);
}

// A kept sandbox serves at most this many jobs and waits at most this long for the next one:
// whatever a stub or its sandbox gathers over its jobs stays bounded, and an idle one gives its
// memory (~6 MB: bwrap twice, the stub) back.
const MAX_JOBS_PER_SANDBOX = 1000;
const KEPT_IDLE_MS = 30_000;

interface Warm {
  dir: string;
  process: JobProcess;
  dead: boolean;
  /** A bun stub's environment at its start (null: a bash or python3 stub). */
  bunEnv: Record<string, string> | null;
  /** A bash stub's control folder (host path), bound at SANDBOX_CONTROL_DIR; null for the others. */
  control: string | null;
  /** A bash stub's output FIFOs, read here. */
  outputs: SandboxOutputs | null;
  /** Jobs handed to it so far. */
  jobs: number;
  /** A bash stub's job now running. */
  current: SandboxJob | null;
  /** What its jobs share (ExecuteRequest.reuseKey), once it ran one; null: it serves one job only. */
  reuseKey: string | null;
  idleTimer: NodeJS.Timeout | null;
  /** When it was last kept (performance.now()). */
  keptAt: number;
  /** Its processes (bwrap's two, the stub) were made the OOM killer's first pick. */
  preferredForOomKill: boolean;
  /** Taken for a job, until `finish`: its folder is the job's, removed by `finish`. */
  inUse: boolean;
}

/** A sandbox taken from the pool: its folder is the job's; `start` hands it the job. */
export interface WarmSandbox {
  dir: string;
  /**
   * Starts the job: null when it cannot (a field holds a NUL, a bun stub cannot become this job),
   * and the job must run cold.
   */
  start(env: Record<string, string>, ulimits: string[], argv: string[]): StartedProcess | null;
  /** Ends it unused (the job could not be prepared). */
  discard(): void;
  /**
   * The job is over and its outcome read. A bash stub's sandbox whose stub reported the job
   * clean waits, its folder emptied, for the next job of the same reuse key; any other goes,
   * its folder once `groupKilled` resolves.
   */
  finish(groupKilled: Promise<void>): void;
}

/**
 * One job in a bash stub's sandbox, as runProcess runs it: its output comes from the sandbox's
 * FIFOs (see SandboxOutputs), its exit from the stub's report (or from the sandbox's, if the
 * sandbox died), and killing its process group kills the sandbox.
 */
class SandboxJob extends EventEmitter<JobProcessEvents> implements StartedProcess {
  readonly number: number;
  readonly pid: number;
  readonly ready: Promise<number>;
  readonly preferredForOomKill: boolean;
  keepsGroup = false;
  private exitReported = false;

  constructor(number: number, pid: number, preferredForOomKill: boolean) {
    super();
    this.number = number;
    this.pid = pid;
    this.preferredForOomKill = preferredForOomKill;
    this.ready = Promise.resolve(pid);
  }

  /** The stub's report: the job's child exited with `code`; `clean`: nothing of the job is left. */
  reported(code: number, clean: boolean): void {
    this.keepsGroup = clean;
    this.exited(code, null);
  }

  /**
   * The job is over (reported, or its sandbox died): every writer it had is gone, so what it
   * wrote is all in the FIFOs' buffers, read by then (see SandboxOutputs.drain).
   */
  exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exitReported) return;
    this.exitReported = true;
    this.emit("exit", code, signal);
    this.emit("close");
  }

  releasePipes(): void {}
}

/**
 * A bash stub's `out` and `err` FIFOs, read here for the sandbox's whole life: their read ends,
 * and a write end held here so that they never see an EOF between jobs. The stub reports a job
 * only once nothing of it is left to write there: what it wrote is in the pipes by then, and
 * `drain` reads it to the end before the job's exit is told (one reader per sandbox, not two
 * per job: ~0.1 ms a job of opens and sockets).
 */
class SandboxOutputs {
  private readonly ends: { fd: number; keeper: number; reader: net.Socket; isStdout: boolean }[] = [];
  private readonly chunk = Buffer.allocUnsafe(65536);

  private readonly onData: (chunk: Buffer, isStdout: boolean) => void;

  constructor(control: string, onData: (chunk: Buffer, isStdout: boolean) => void) {
    this.onData = onData;
    try {
      for (const isStdout of [true, false]) {
        const fifo = path.join(control, isStdout ? "out" : "err");
        const fd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
        let keeper: number;
        try {
          keeper = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
        } catch (error) {
          closeSync(fd);
          throw error;
        }
        const reader = new net.Socket({ fd, readable: true, writable: false });
        reader.on("data", (chunk: Buffer) => onData(chunk, isStdout));
        reader.on("error", () => {});
        this.ends.push({ fd, keeper, reader, isStdout });
      }
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** Reads what the pipes hold now, to their end. */
  drain(): void {
    for (const { fd, isStdout } of this.ends) {
      for (;;) {
        let n: number;
        try {
          n = readSync(fd, this.chunk);
        } catch {
          break; // EAGAIN: read to its end
        }
        if (n === 0) break;
        this.onData(Buffer.from(this.chunk.subarray(0, n)), isStdout);
      }
    }
  }

  close(): void {
    for (const { reader, keeper } of this.ends.splice(0)) {
      reader.destroy();
      closeSync(keeper);
    }
  }
}

/**
 * Sandboxes made ahead of their jobs. Setting up a bubblewrap sandbox (namespaces, a dozen
 * mounts, its init) costs ~5–7 ms of CPU on a 2-core VM, and tearing it down ~3 ms more; a warm
 * one is already set up and waits, its folder empty, for the job's files and command line.
 *
 * Pools are per spec (network, bound executables and read-only paths), filled after a job of
 * that spec ran, up to `perSpec` sandboxes, for the `maxSpecs` most recently used specs. A job
 * whose spec has no warm sandbox runs cold, as before.
 *
 * A bash stub's sandbox is kept after a job its stub reported clean (see the stub), for the next
 * job of the same spec and reuse key: the worker gives one key to the jobs of one workspace, user
 * and code only, so a job can only ever share a sandbox with runs of the same code under the
 * same identity. Up to `maxKept` sandboxes wait so, each at most KEPT_IDLE_MS; python3 and bun
 * stubs become their job, and serve one job each.
 */
export class WarmSandboxes {
  private readonly pools = new Map<string, Warm[]>();
  /** Kept sandboxes waiting, by spec and reuse key, least recently used first. */
  private readonly kept = new Map<string, Warm[]>();
  private keptCount = 0;
  private readonly specs = new Map<string, WarmSandboxSpec>();
  private readonly starting = new Map<string, number>();
  private closed = false;
  private readonly env = ENV_CANDIDATES.find((candidate) => existsSync(candidate));
  private readonly options: {
    workRoot: string;
    bwrap: string;
    launcher: ProcessLauncher | null;
    perSpec: number;
    maxSpecs: number;
    maxKept: number;
  };

  constructor(options: {
    workRoot: string;
    bwrap: string;
    launcher: ProcessLauncher | null;
    perSpec?: number;
    maxSpecs?: number;
    maxKept?: number;
  }) {
    this.options = { perSpec: 3, maxSpecs: 4, maxKept: 16, ...options };
    // Folders of the waiting sandboxes of a worker that was killed (kill -9) before it removed them.
    removeStaleFolders(path.resolve(options.workRoot), WARM_PREFIX, removeJobDir);
  }

  private static key(spec: WarmSandboxSpec): string {
    return JSON.stringify([
      spec.network,
      [...spec.executables].sort(),
      [...spec.readOnlyPaths].sort(),
      Object.entries(spec.startEnv ?? {}).sort(),
    ]);
  }

  /**
   * A warm sandbox of this spec, or null (run cold, and call `replenish` after). With a
   * `reuseKey`, one kept from an earlier job of that key first.
   */
  take(spec: WarmSandboxSpec, reuseKey: string | null = null): WarmSandbox | null {
    if (this.closed || !this.env) return null;
    const key = WarmSandboxes.key(spec);
    let warm = reuseKey === null ? undefined : this.takeKept(`${key}\n${reuseKey}`);
    if (!warm) {
      const pool = this.pools.get(key);
      while ((warm = pool?.shift()) && (warm.dead || warm.process.pid === undefined)) this.dispose(warm);
    }
    if (!warm) return null;
    const taken = warm;
    taken.inUse = true;
    if (taken.control && reuseKey !== null) taken.reuseKey = `${key}\n${reuseKey}`;
    // A python3 or bun stub becomes the job's process: the pool lets go of it.
    if (!taken.control) taken.process.removeAllListeners();
    return {
      dir: taken.dir,
      start: (env, ulimits, argv) => {
        if (taken.bunEnv && !bunStubCanRun(resolvedInterpreters().bun, taken.bunEnv, env, argv)) return null;
        const entries = Object.entries(env).map(([name, value]) => `${name}=${value}`);
        const fields = [
          Object.keys(env).some(needsCleanExec) ? "clean" : "exec",
          String(entries.length),
          ...entries,
          String(ulimits.length),
          ...ulimits,
          ...argv,
        ];
        if (fields.some((field) => field.includes("\0"))) return null;
        const payload = fields.map((field) => `${field}\0`).join("");
        taken.jobs++;
        if (!taken.control) {
          taken.process.sendControl(payload);
          return taken.process;
        }
        return this.startInStub(taken, payload);
      },
      discard: () => this.dispose(taken),
      finish: (groupKilled) => this.finish(taken, groupKilled),
    };
  }

  /** Hands a job to a bash stub: its fields into the control folder, then its number on the stub's stdin. */
  private startInStub(warm: Warm, payload: string): SandboxJob | null {
    try {
      // Readable by the job user (its own fields): the folder keeps everyone else out.
      writeFileSync(path.join(warm.control!, "job"), payload, { mode: 0o644 });
      warm.process.writeControl(`${warm.jobs}\n`);
    } catch {
      return null;
    }
    const job = new SandboxJob(warm.jobs, warm.process.pid!, warm.preferredForOomKill);
    warm.current = job;
    return job;
  }

  private takeKept(reuseKey: string): Warm | undefined {
    const waiting = this.kept.get(reuseKey);
    const warm = waiting?.pop();
    if (!warm) return undefined;
    if (waiting!.length === 0) this.kept.delete(reuseKey);
    this.keptCount--;
    clearTimeout(warm.idleTimer ?? undefined);
    warm.idleTimer = null;
    return warm;
  }

  private finish(warm: Warm, groupKilled: Promise<void>): void {
    const job = warm.current;
    warm.current = null;
    warm.inUse = false;
    if (!warm.control) return removeJobDirSoon(warm.dir, groupKilled);
    const keep =
      job?.keepsGroup &&
      warm.reuseKey !== null &&
      !this.closed &&
      !warm.dead &&
      warm.jobs < MAX_JOBS_PER_SANDBOX;
    if (!keep || !emptied(warm)) return this.dispose(warm, groupKilled);
    if (!warm.preferredForOomKill) {
      // Its stub (certainly started by now) forks every later job: they inherit its score.
      for (const pid of sandboxPids(warm.process.pid!)) preferForOomKill(pid);
      warm.preferredForOomKill = true;
    }
    const reuseKey = warm.reuseKey!;
    let waiting = this.kept.get(reuseKey);
    if (!waiting) this.kept.set(reuseKey, (waiting = []));
    waiting.push(warm);
    this.keptCount++;
    warm.idleTimer = setTimeout(() => {
      this.unkeep(warm);
      this.dispose(warm);
    }, KEPT_IDLE_MS).unref();
    warm.keptAt = performance.now();
    // Past the cap, the sandbox that has waited longest goes.
    while (this.keptCount > this.options.maxKept) {
      const oldest = [...this.kept.values()]
        .map((list) => list[0]!)
        .reduce((a, b) => (a.keptAt <= b.keptAt ? a : b));
      this.unkeep(oldest);
      this.dispose(oldest);
    }
  }

  private unkeep(warm: Warm): void {
    if (warm.reuseKey === null) return;
    const waiting = this.kept.get(warm.reuseKey);
    const at = waiting?.indexOf(warm) ?? -1;
    if (at < 0) return;
    waiting!.splice(at, 1);
    if (waiting!.length === 0) this.kept.delete(warm.reuseKey);
    this.keptCount--;
    clearTimeout(warm.idleTimer ?? undefined);
    warm.idleTimer = null;
  }

  /** How many sandboxes of this spec wait, ready to be taken. */
  available(spec: WarmSandboxSpec): number {
    return (this.pools.get(WarmSandboxes.key(spec)) ?? []).filter((warm) => !warm.dead).length;
  }

  /** Tops the spec's pool up in the background (after a job of that spec). */
  replenish(spec: WarmSandboxSpec): void {
    if (this.closed || !this.env) return;
    const key = WarmSandboxes.key(spec);
    // Most recently used last; the least recently used spec beyond maxSpecs is dropped.
    this.specs.delete(key);
    this.specs.set(key, spec);
    while (this.specs.size > this.options.maxSpecs) {
      const oldest = this.specs.keys().next().value!;
      this.specs.delete(oldest);
      for (const warm of this.pools.get(oldest) ?? []) this.dispose(warm);
      this.pools.delete(oldest);
    }
    const top = () => {
      if (this.closed || !this.specs.has(key)) return;
      for (let i = this.ready(key); i < this.options.perSpec; i++) this.spawn(key, spec);
    };
    // Setting a sandbox up costs ~18 ms of CPU here (bwrap's namespaces and mounts, its first
    // bash). Done at once, it competes on a 2-core machine with recording and answering the job
    // that just ended: one at a time, a bash run_wait_result took 25–29 ms instead of ~20, and a
    // flow's last step and answer waited on the sandboxes its first steps had used. So the pool is
    // topped up only once that is done: a job's completion takes ~2–8 ms here, a flow's answer
    // ~10 ms after its last step. Sooner while the pool is empty, as the next job would run cold.
    setTimeout(top, this.ready(key) === 0 ? REPLENISH_EMPTY_MS : REPLENISH_QUIET_MS).unref();
  }

  /** Sandboxes of the spec waiting or being set up. */
  private ready(key: string): number {
    return (this.pools.get(key)?.length ?? 0) + (this.starting.get(key) ?? 0);
  }

  private spawn(key: string, spec: WarmSandboxSpec): void {
    const bin = resolvedInterpreters();
    // Python and bun jobs get their interpreter started ahead (see python-stub.ts, bun-stub.ts);
    // every other kind the bash stub, which needs a control folder.
    const isBun = spec.executables[0] === bin.bun;
    const isPython = spec.executables[0] === bin.python3;
    let control: string | null = null;
    if (!isBun && !isPython && (control = this.controlFolder()) === null) return;
    let dir: string;
    try {
      dir = createJobDir(this.options.workRoot, `${WARM_PREFIX}${ownerTag()}-${randomUUID()}`);
    } catch {
      if (control) removeControlFolder(control);
      return;
    }
    // Set once the sandbox exists; routes the stub's FIFOs to the job it runs.
    let current: () => SandboxJob | null = () => null;
    let outputs: SandboxOutputs | null = null;
    try {
      if (control)
        outputs = new SandboxOutputs(control, (chunk, isStdout) => current()?.emit("data", chunk, isStdout));
    } catch {
      removeControlFolder(control!);
      removeJobDirSoon(dir);
      return;
    }
    const user = jobUser();
    const options: SandboxOptions = { ...spec, jobDir: dir, ...(control ? { controlDir: control } : {}) };
    const bun = isBun ? bunStub(bin.bun, spec.startEnv ?? {}, dir) : null;
    const stub = isPython
      ? pythonStub(bin.python3)
      : (bun ?? {
          args: [
            `${SANDBOX_CONTROL_DIR}/${STUB_NAME}`,
            "--noprofile",
            "--norc",
            "-c",
            stubScript(this.env!, sandboxScaffolding(options)),
          ],
          env: {},
        });
    const request = {
      command: this.options.bwrap,
      args: [...bwrapArgs(options), ...stub.args],
      cwd: dir,
      env: stub.env,
      ...(user ?? {}),
    };
    // Its jobs in and its output out go straight between the worker and it, not through the
    // launcher; a bash stub reports each job's end on fd 4.
    const pipesHere = { status: control !== null };
    const process = this.options.launcher
      ? this.options.launcher.spawn(request, pipesHere)
      : spawnHere(request, pipesHere);
    const warm: Warm = {
      dir,
      process,
      dead: false,
      bunEnv: bun?.env ?? null,
      control,
      outputs,
      jobs: 0,
      current: null,
      reuseKey: null,
      idleTimer: null,
      keptAt: 0,
      preferredForOomKill: false,
      inUse: false,
    };
    current = () => warm.current;
    // The launcher lost it (see failLost): the job in it fails as any job would.
    process.on("error", (error) => warm.current?.emit("error", error));
    process.on("status", (line) => {
      const [number, code, clean] = line.split(" ").map(Number);
      const job = warm.current;
      if (!job || job.number !== number) return;
      outputs?.drain();
      job.reported(code!, clean === 1);
    });
    process.on("exit", (code, signal) => {
      outputs?.drain();
      warm.current?.exited(code, signal);
    });
    process.on("close", () => {
      outputs?.drain();
      warm.current?.exited(null, "SIGKILL");
      outputs?.close();
      warm.dead = true;
      const pool = this.pools.get(key);
      const at = pool?.indexOf(warm) ?? -1;
      if (at >= 0) pool!.splice(at, 1);
      this.unkeep(warm);
      if (!warm.inUse) removeJobDirSoon(dir);
      if (control) removeControlFolder(control);
    });
    this.starting.set(key, (this.starting.get(key) ?? 0) + 1);
    void process.ready.then(() => {
      this.starting.set(key, (this.starting.get(key) ?? 1) - 1);
      if (this.closed || !this.specs.has(key) || warm.dead) return this.dispose(warm);
      let pool = this.pools.get(key);
      if (!pool) this.pools.set(key, (pool = []));
      pool.push(warm);
    });
  }

  /**
   * A bash stub's control folder: beside the worker's FIFOs (they move in by a rename), only for
   * the worker and the job user's group (the job's fields are secrets), holding the
   * execute-only stub binary and the stub's `idle` FIFO. Null when FIFOs cannot be made here.
   */
  private controlFolder(): string | null {
    const homes = fifoNeighbours();
    if (!homes) return null;
    const user = jobUser();
    let control: string | null = null;
    try {
      // One copy per process (pools share it: a running stub's binary cannot be written again).
      if (!stubBinary) {
        const binary = path.join(homes, STUB_NAME);
        copyFileSync(resolvedInterpreters().bash, binary);
        chmodSync(binary, 0o111);
        stubBinary = binary;
      }
      control = path.join(homes, randomUUID());
      mkdirSync(control, { mode: user ? 0o750 : 0o700 });
      if (user) chownSync(control, 0, user.gid);
      linkSync(stubBinary, path.join(control, STUB_NAME));
      for (const fifo of ["idle", "out", "err"]) {
        if (!moveFifo(path.join(control, fifo))) throw new Error("no FIFO");
      }
      return control;
    } catch {
      if (control) removeControlFolder(control);
      return null;
    }
  }

  /** Ends it; its folder goes (after `groupKilled`) unless a job still holds it (see `finish`). */
  private dispose(warm: Warm, groupKilled?: Promise<void>): void {
    // Once gone, its process group id may be another's: never signal it again.
    const gone = warm.dead;
    warm.dead = true;
    this.unkeep(warm);
    if (!gone && warm.process.pid !== undefined) {
      try {
        process.kill(-warm.process.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    if (!warm.inUse) removeJobDirSoon(warm.dir, groupKilled);
    if (warm.control) removeControlFolder(warm.control);
    warm.outputs?.close();
  }

  /** Ends every waiting sandbox and removes its folder. */
  close(): void {
    this.closed = true;
    for (const pool of this.pools.values()) for (const warm of pool) this.dispose(warm);
    for (const waiting of [...this.kept.values()]) for (const warm of [...waiting]) this.dispose(warm);
    this.pools.clear();
  }
}

// A kept sandbox's folder is emptied in the worker's turn, before its next job: only when that
// is quick. Anything larger (a folder, many files) goes with the sandbox, removed in the background.
const MAX_FILES_EMPTIED = 32;

/** Empties a kept sandbox's folder for its next job; false when it did not (see MAX_FILES_EMPTIED). */
function emptied(warm: Warm): boolean {
  try {
    const entries = readdirSync(warm.dir, { withFileTypes: true });
    if (entries.length > MAX_FILES_EMPTIED || entries.some((entry) => entry.isDirectory())) return false;
    // Unlinked directly: rmSync's own checks cost ~10 µs a file. A symbolic link goes, not its target.
    for (const entry of entries) unlinkSync(path.join(warm.dir, entry.name));
    unlinkSync(path.join(warm.control!, "job"));
    return true;
  } catch {
    return false;
  }
}

/** A sandbox's own processes: its bwrap, bwrap's init and the stub (the first of each level). */
function sandboxPids(pid: number): number[] {
  const pids = [pid];
  for (let level = 0; level < BWRAP_OWN_LEVELS; level++) {
    // bwrap and its init are single-threaded: their own task lists their children.
    const first = childrenOf(pids.at(-1)!, 1)[0];
    if (!first) break;
    pids.push(first);
  }
  return pids;
}

function removeControlFolder(control: string): void {
  rmSync(control, { recursive: true, force: true });
}
