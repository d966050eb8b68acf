import { spawnSync } from "node:child_process";
import {
  accessSync,
  constants,
  lstatSync,
  mkdtempSync,
  readlinkSync,
  realpathSync,
  rmSync,
  chownSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";

export type SandboxStatus =
  { kind: "bubblewrap"; version: string; path: string } | { kind: "none"; reason: string };

export interface JobUser {
  uid: number;
  gid: number;
}

// nobody:nogroup. Jobs never run as root: root ignores RLIMIT_NPROC, and inside bwrap it would keep
// every capability (bwrap run by root does not drop them) and own the host's root files.
const UNPRIVILEGED: JobUser = Object.freeze({ uid: 65534, gid: 65534 });
const TMPFS_BYTES = 64 * 1024 * 1024;
// Top-level system folders a job may read; /etc for DNS, TLS roots, passwd and alternatives.
// Everything else of the host (home folders, /var, /run, /opt, the worker's checkout and JOB_DIR)
// does not exist inside the sandbox.
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

/** The uid/gid jobs run as: the worker's own, unless the worker is root. */
export function jobUser(): JobUser | null {
  return process.getuid?.() === 0 ? UNPRIVILEGED : null;
}

function systemMounts(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      continue;
    }
    // Merged-/usr systems: /bin -> usr/bin stays a symlink instead of a second mount.
    if (stat.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else if (stat.isDirectory()) args.push("--ro-bind", dir, dir);
  }
  return args;
}

let systemArgs: string[] | undefined;

function underSystemDir(file: string): boolean {
  return SYSTEM_DIRS.some((dir) => file === dir || file.startsWith(`${dir}/`));
}

export interface SandboxOptions {
  jobDir: string;
  /** False: the job gets its own network namespace with nothing in it (not even loopback). */
  network: boolean;
  /** Executables outside the system folders (Bun, Deno, Node from node_modules), bound read-only. */
  executables: string[];
  /** Host paths bound read-only at the same path (dependency caches). */
  readOnlyPaths: string[];
  /** Host folders bound writable at the same path (a same_worker flow's `./shared`). */
  writablePaths?: string[];
  /**
   * A sandbox kept for several jobs (see warm-sandbox.ts): its control folder, bound read-only
   * at SANDBOX_CONTROL_DIR, and a POSIX message queue folder, so that its stub can see what a
   * job left there.
   */
  controlDir?: string;
}

/** Where a kept sandbox's control folder is, inside it. */
export const SANDBOX_CONTROL_DIR = "/run/millrace";

/**
 * A job's process tree under bwrapArgs: bwrap, then (--unshare-pid) bwrap as the init of the pid
 * namespace, then the job. Neither of the first two runs anything of the job's.
 */
export const BWRAP_OWN_LEVELS = 2;

/**
 * bwrap arguments up to (not including) the command. The job sees a read-only system, a fresh
 * /proc of its own pid namespace (so /proc/1 is the sandbox's init, with the job's environment),
 * size-capped private /tmp and /dev/shm, and its job folder as the only writable host path.
 */
export function bwrapArgs(options: SandboxOptions): string[] {
  systemArgs ??= systemMounts();
  const args = [
    // A user namespace per job also makes RLIMIT_NPROC count this job's tasks only.
    "--unshare-user",
    "--disable-userns",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    ...(options.network ? [] : ["--unshare-net"]),
    // Killing bwrap (the job's process group) kills the sandbox's init, and with it every process
    // of the pid namespace, including any that left the process group.
    "--die-with-parent",
    ...systemArgs,
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--perms",
    "1777",
    "--size",
    String(TMPFS_BYTES),
    "--tmpfs",
    "/tmp",
    "--perms",
    "1777",
    "--size",
    String(TMPFS_BYTES),
    "--tmpfs",
    "/dev/shm",
    ...(options.controlDir
      ? ["--mqueue", "/dev/mqueue", "--ro-bind", options.controlDir, SANDBOX_CONTROL_DIR]
      : []),
    // Nothing but its own tmpfs folders is the job's to write in /dev (bwrap makes it writable).
    "--remount-ro",
    "/dev",
  ];
  const bound = new Set<string>();
  for (const file of options.executables) {
    if (underSystemDir(file) || bound.has(file)) continue;
    bound.add(file);
    args.push("--ro-bind", realpathSync(file), file);
  }
  for (const dir of options.readOnlyPaths) {
    const absolute = path.resolve(dir);
    if (bound.has(absolute)) continue;
    bound.add(absolute);
    args.push("--ro-bind", absolute, absolute);
  }
  for (const dir of options.writablePaths ?? []) {
    const absolute = path.resolve(dir);
    if (bound.has(absolute)) continue;
    bound.add(absolute);
    args.push("--bind", absolute, absolute);
  }
  args.push("--bind", options.jobDir, options.jobDir, "--chdir", options.jobDir, "--remount-ro", "/");
  return args;
}

// The sandbox's own writable tmpfs folders, and where kept sandboxes' stubs mount message queues.
const SANDBOX_TMPFS = ["/tmp", "/dev/shm", "/dev/mqueue"];

/**
 * What a job may leave in the sandbox's writable tmpfs folders that is not the job's: for each
 * of them, and each folder bwrap made in them to bind a host path there (a JOB_DIR under /tmp,
 * the default), the entries it must hold. Everything else in them is the job's.
 */
export function sandboxScaffolding(options: SandboxOptions): Map<string, Set<string>> {
  const scaffolding = new Map<string, Set<string>>(SANDBOX_TMPFS.map((dir) => [dir, new Set<string>()]));
  const targets = [
    ...options.executables.filter((file) => !underSystemDir(file)),
    ...options.readOnlyPaths,
    ...(options.writablePaths ?? []),
    options.jobDir,
  ].map((target) => path.resolve(target));
  for (const target of targets) {
    const tmpfs = SANDBOX_TMPFS.find((dir) => target.startsWith(`${dir}/`));
    if (!tmpfs) continue;
    // Each folder from the tmpfs down to the bound path holds the next one.
    for (let at = target; at !== tmpfs; at = path.dirname(at)) {
      const parent = path.dirname(at);
      if (!scaffolding.has(parent)) scaffolding.set(parent, new Set());
      scaffolding.get(parent)!.add(path.basename(at));
    }
  }
  return scaffolding;
}

/** bwrap on the worker's PATH, as a shell would find it (the operator decides what is installed). */
function findBwrap(): string | undefined {
  // The worker's own PATH is only used to locate bwrap, never handed to a job.
  // eslint-disable-next-line no-restricted-properties
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, "bwrap");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

let detected: SandboxStatus | undefined;

/**
 * Whether jobs can run in bubblewrap here: bwrap is installed and a trial sandbox with the job
 * flags starts as the job user (it needs unprivileged user namespaces). Probed once per process.
 */
export function detectSandbox(): SandboxStatus {
  detected ??= probe();
  return detected;
}

/**
 * The probe runs with nothing inherited from the worker. Typed as ProcessEnv because Next's
 * types (the web app type-checks this package too) make NODE_ENV a required key.
 */
const NO_ENV = {} as NodeJS.ProcessEnv;

function probe(): SandboxStatus {
  const bwrap = findBwrap();
  if (!bwrap) return { kind: "none", reason: "bubblewrap (bwrap) not found on the PATH" };
  const version = spawnSync(bwrap, ["--version"], { encoding: "utf8", env: NO_ENV });
  if (version.status !== 0) return { kind: "none", reason: `${bwrap} --version failed` };
  const dir = mkdtempSync(path.join(os.tmpdir(), "millrace-sandbox-probe-"));
  try {
    const user = jobUser();
    if (user) chownSync(dir, user.uid, user.gid);
    const trial = spawnSync(
      bwrap,
      [
        ...bwrapArgs({ jobDir: dir, network: false, executables: [], readOnlyPaths: [] }),
        "/bin/sh",
        "-c",
        ":",
      ],
      { encoding: "utf8", env: NO_ENV, cwd: "/", ...(user ?? {}), timeout: 10_000 },
    );
    if (trial.status !== 0) {
      const why = (trial.stderr || trial.error?.message || `exit code ${trial.status}`).trim();
      return { kind: "none", reason: `bubblewrap cannot create a sandbox here: ${why}` };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { kind: "bubblewrap", version: version.stdout.trim().replace(/^bubblewrap\s+/, ""), path: bwrap };
}

/**
 * A job's process tree under the fence: `unshare` (setpriv exec'd it), then the shell it forks as
 * the init of the pid namespace (which adopts orphans), then the job.
 */
export const FENCE_OWN_LEVELS = 2;

/**
 * Without the sandbox (DISABLE_SANDBOX), a job still gets a pid namespace of its own where util-linux
 * allows it: `setpriv --pdeathsig KILL unshare --user --pid --fork --kill-child --mount-proc`.
 * Every process it starts, `setsid` and double-forked ones included, then dies with it (killing
 * the namespace's init kills the namespace), and with the worker: the launcher's death kills
 * `unshare` (its parent-death signal), whose death kills the init (`--kill-child`). Without it,
 * a worker killed with kill -9 left its jobs running, and the zombie monitor ran them again.
 * Null where the host cannot (no util-linux, user namespaces disabled): process groups only.
 */
export function processFence(): string[] | null {
  fence ??= probeFence();
  return fence.length > 0 ? fence : null;
}

let fence: string[] | undefined;

function probeFence(): string[] {
  const find = (name: string) =>
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
      .map((dir) => path.join(dir, name))
      .find((file) => {
        try {
          accessSync(file, constants.X_OK);
          return true;
        } catch {
          return false;
        }
      });
  const setpriv = find("setpriv");
  const unshare = find("unshare");
  if (!setpriv || !unshare) return [];
  const args = [
    setpriv,
    "--pdeathsig",
    "KILL",
    "--",
    unshare,
    "--user",
    "--map-current-user",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
    "--",
    // The job must not be the namespace's init, which ignores every signal it has no handler
    // for (a script's `kill $$`, SIGXFSZ): a shell is, and reports a signal N as 128+N, as bwrap does.
    "/bin/sh",
    "-c",
    '"$@" & wait $!',
    "sh",
  ];
  const trial = spawnSync(args[0]!, [...args.slice(1), "/bin/true"], {
    env: NO_ENV,
    cwd: "/",
    ...(jobUser() ?? {}),
    timeout: 10_000,
  });
  return trial.status === 0 ? args : [];
}
