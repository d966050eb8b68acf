import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { JOB_LANG, resolvedInterpreters } from "./interpreters.ts";
import { createJobDir, removeJobDir, removeJobDirSoon } from "./job-dir.ts";
import { ownerTag, removeStaleFolders } from "./owned-folders.ts";
import { bunStub, bunStubCanRun } from "./bun-stub.ts";
import { pythonStub } from "./python-stub.ts";
import { spawnHere, type JobProcess, type ProcessLauncher } from "./launcher.ts";
import { bwrapArgs, jobUser, type SandboxOptions } from "./sandbox.ts";

/**
 * What a sandbox is made of, its job folder aside: jobs with the same spec can share a pool.
 * `startEnv`: the variables its first process starts with, for interpreters that read some only
 * at their start (bun, see bun-stub.ts).
 */
export type WarmSandboxSpec = Omit<SandboxOptions, "jobDir"> & { startEnv?: Record<string, string> };

/**
 * The sandbox's first process, a bash: it waits on its stdin, a FIFO the worker writes, for the
 * job, as NUL-terminated fields (`mode, count, env…, count, ulimit…, argv…`), gives the job
 * /dev/null as stdin instead (as a job started cold gets), sets the limits and the job's
 * environment, then runs the command. EOF without fields (the pool is closing, the worker is
 * gone) ends it. (`mapfile` reads the pipe in blocks; a `read` loop would read it one byte per
 * system call.)
 *
 * The stub was started with an empty environment: exporting the job's variables, after unsetting
 * the few bash set for itself, leaves exactly the job's. Mode `exec` then execs the command
 * (bash's `exec` adds SHLVL=0, which the wrappers drop). Mode `source`, for a bash script
 * (`bash script args…` with the stub's own bash), runs the script in the stub itself, as a fresh
 * `bash script` would (same $0, arguments, variables, options, SHLVL and PWD, the script's
 * exit status), saving the start of a second bash: 4–6 ms on these VMs, on every bash job's
 * path. Anything a fresh bash would treat differently goes the `exec` way with `env -i`, which
 * takes any variable: mode `clean` (see `needsCleanExec`), a variable `export` refuses anyway,
 * and a script name found in PATH (where `.` would look first).
 *
 * The variables are exported by one `export` with one redirection: a loop exporting and
 * pattern-matching them one by one cost ~0.6 ms for a job's ~16 variables, on every job's path.
 * The stub loads the jobs' locale while it waits (an unexported LANG, unset before the job's
 * variables): bash loads a locale when LANG is set, ~0.7 ms here the first time, on the job's
 * path when the job's LANG was the first.
 *
 * A sourced script that ends by reaching its end has its exit status written to fd 247, a
 * status pipe the worker reads itself, by the stub's EXIT trap; the stub then stops itself
 * (SIGSTOP) until the worker kills the sandbox. The job is over at once, and the sandbox's
 * teardown (bwrap's processes, the namespaces: ~3 ms of CPU here, and they hold the output pipes
 * open until then) comes after its outcome is recorded and answered (see runProcess).
 *
 * The trap reports only when `_mr_x` is set, after the script returned: a script ending
 * otherwise (`exit`, `set -e`, a signal, whose trap bash runs with `$?` 0) reports nothing, nor
 * does one that set an EXIT trap of its own (which replaces the stub's, and may still print or
 * change the status); their exit is known from the process, as for any other command. What a
 * script can see of this: the trap (`trap -p`), and fds 247 and 248 (two copies: a script that
 * pointed 247 elsewhere fails the `-ef` check and gets nothing written there), which the stub
 * closes for anything it execs.
 */
const stubScript = (env: string) => `set -f
LANG=${JOB_LANG}
mapfile -t -d '' _mr_f
{ exec </dev/null 247>&4 248>&4 4>&-; } 2>/dev/null
(( \${#_mr_f[@]} )) || exit 0
_mr_m=\${_mr_f[0]}
_mr_n=\${_mr_f[1]}
_mr_i=$((_mr_n + 2))
_mr_u=\${_mr_f[_mr_i]}
for _mr_s in "\${_mr_f[@]:_mr_i+1:_mr_u}"; do ulimit $_mr_s || exit 126; done
_mr_c=("\${_mr_f[@]:_mr_i+1+_mr_u}")
unset OLDPWD SHLVL _ LANG
[[ $_mr_m != clean ]] && export "\${_mr_f[@]:2:_mr_n}" 2>/dev/null ||
  exec ${env} -i "PWD=$PWD" "\${_mr_f[@]:2:_mr_n}" "\${_mr_c[@]}" 247>&- 248>&-
if [[ $_mr_m == source && \${_mr_c[0]} == "$BASH" && \${_mr_c[1]} != */* ]]; then
  _mr_p=$PATH:
  while [[ $_mr_p ]]; do
    _mr_d=\${_mr_p%%:*}
    _mr_p=\${_mr_p#*:}
    [[ $_mr_d && $_mr_d != . && -f $_mr_d/\${_mr_c[1]} ]] && _mr_m=exec
  done
fi
[[ $_mr_m == source ]] || exec "\${_mr_c[@]}" 247>&- 248>&-
export SHLVL=1
BASH_ARGV0=\${_mr_c[1]}
set -- "\${_mr_c[@]:2}"
unset BASH_EXECUTION_STRING \${!_mr_@}
set +f
trap '[[ \${_mr_x-} && /dev/fd/247 -ef /dev/fd/248 ]] && builtin printf "%d\\n" $_mr_x >&247 && builtin kill -STOP $$' EXIT
. "$0"
_mr_x=$?
builtin exit $_mr_x
`;

const ENV_CANDIDATES = ["/usr/bin/env", "/bin/env"];
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

interface Warm {
  dir: string;
  process: JobProcess;
  dead: boolean;
  /** A bun stub's environment at its start (null: a bash or python3 stub). */
  bunEnv: Record<string, string> | null;
}

/** A sandbox taken from the pool: its folder is the job's; `start` hands it the job. */
export interface WarmSandbox {
  dir: string;
  process: JobProcess;
  /**
   * False when the fields cannot travel as NUL-terminated strings (the job must run cold).
   * `source`: argv is `bash script args…`, and the script may run in the stub's own bash
   * (either mode becomes `clean`, an `env -i` exec, when a variable needs it).
   */
  start(env: Record<string, string>, ulimits: string[], argv: string[], mode?: "exec" | "source"): boolean;
  /** Ends it unused (the job could not be prepared). */
  discard(): void;
}

/**
 * Sandboxes made ahead of their jobs. Setting up a bubblewrap sandbox (namespaces, a dozen
 * mounts, its init) costs ~5–7 ms on a 2-core VM, on every job's path; a warm one is already
 * set up and waits, its folder empty, for the job's files and command line. Each serves exactly
 * one job: nothing of a job can be left for the next one.
 *
 * Pools are per spec (network, bound executables and read-only paths), filled after a job of
 * that spec ran, up to `perSpec` sandboxes, for the `maxSpecs` most recently used specs. A job
 * whose spec has no warm sandbox runs cold, as before.
 */
export class WarmSandboxes {
  private readonly pools = new Map<string, Warm[]>();
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
  };

  constructor(options: {
    workRoot: string;
    bwrap: string;
    launcher: ProcessLauncher | null;
    perSpec?: number;
    maxSpecs?: number;
  }) {
    this.options = { perSpec: 3, maxSpecs: 4, ...options };
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

  /** A warm sandbox of this spec, or null (run cold, and call `replenish` after). */
  take(spec: WarmSandboxSpec): WarmSandbox | null {
    if (this.closed || !this.env) return null;
    const pool = this.pools.get(WarmSandboxes.key(spec));
    let warm: Warm | undefined;
    while ((warm = pool?.shift()) && (warm.dead || warm.process.pid === undefined)) this.dispose(warm);
    if (!warm) return null;
    const taken = warm;
    taken.process.removeAllListeners();
    return {
      dir: taken.dir,
      process: taken.process,
      start: (env, ulimits, argv, mode = "exec") => {
        if (taken.bunEnv && !bunStubCanRun(resolvedInterpreters().bun, taken.bunEnv, env, argv)) return false;
        const entries = Object.entries(env).map(([name, value]) => `${name}=${value}`);
        const fields = [
          Object.keys(env).some(needsCleanExec) ? "clean" : mode,
          String(entries.length),
          ...entries,
          String(ulimits.length),
          ...ulimits,
          ...argv,
        ];
        if (fields.some((field) => field.includes("\0"))) return false;
        taken.process.sendControl(fields.map((field) => `${field}\0`).join(""));
        return true;
      },
      discard: () => this.dispose(taken),
    };
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
    let dir: string;
    try {
      dir = createJobDir(this.options.workRoot, `${WARM_PREFIX}${ownerTag()}-${randomUUID()}`);
    } catch {
      return;
    }
    const user = jobUser();
    const bin = resolvedInterpreters();
    // Python and bun jobs get their interpreter started ahead (see python-stub.ts, bun-stub.ts);
    // every other kind the bash stub.
    const bun = spec.executables[0] === bin.bun ? bunStub(bin.bun, spec.startEnv ?? {}, dir) : null;
    const stub =
      spec.executables[0] === bin.python3
        ? pythonStub(bin.python3)
        : (bun ?? { args: [bin.bash, "--noprofile", "--norc", "-c", stubScript(this.env!)], env: {} });
    const request = {
      command: this.options.bwrap,
      args: [...bwrapArgs({ ...spec, jobDir: dir }), ...stub.args],
      cwd: dir,
      env: stub.env,
      ...(user ?? {}),
    };
    // Its job in and its output out go straight between the worker and it, not through the
    // launcher; a bash stub reports its script's exit on fd 4.
    const pipesHere = { status: stub.args[0] === bin.bash };
    const process = this.options.launcher
      ? this.options.launcher.spawn(request, pipesHere)
      : spawnHere(request, pipesHere);
    const warm: Warm = { dir, process, dead: false, bunEnv: bun?.env ?? null };
    process.on("error", () => {});
    process.on("close", () => {
      warm.dead = true;
      const pool = this.pools.get(key);
      const at = pool?.indexOf(warm) ?? -1;
      if (at >= 0) pool!.splice(at, 1);
      removeJobDirSoon(dir);
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

  private dispose(warm: Warm): void {
    warm.dead = true;
    if (warm.process.pid !== undefined) {
      try {
        process.kill(-warm.process.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    removeJobDirSoon(warm.dir);
  }

  /** Ends every waiting sandbox and removes its folder. */
  close(): void {
    this.closed = true;
    for (const pool of this.pools.values()) for (const warm of pool) this.dispose(warm);
    this.pools.clear();
  }
}
