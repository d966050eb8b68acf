import os from "node:os";

/** Resource limits of one job; they apply with or without the sandbox. */
export interface JobLimits {
  /**
   * Most tasks (processes and threads) the job may have at once. Reaching it ends the job: a fork
   * bomb is stopped by RLIMIT_NPROC and killed by the watchdog that samples the process tree.
   */
  maxProcesses: number;
  /** CPU seconds per process (RLIMIT_CPU); null: the job timeout times the number of cores. */
  cpuSeconds: number | null;
  /** stdout + stderr bytes past which the job is killed (the log keeps only its first 2 MB). */
  maxOutputBytes: number;
  /** Largest file the job may write (RLIMIT_FSIZE). */
  maxFileBytes: number;
  /** What its folder may hold (blocks; see disk.ts): past it the job is killed (DiskQuotaExceeded). */
  maxDiskBytes: number;
}

export const DEFAULT_LIMITS: Readonly<JobLimits> = Object.freeze({
  // Generous for thread-heavy runtimes (Deno's blocking pool, Bun's workers), far below pid_max.
  maxProcesses: 512,
  cpuSeconds: null,
  maxOutputBytes: 32 * 1024 * 1024,
  maxFileBytes: 1024 * 1024 * 1024,
  maxDiskBytes: 1024 * 1024 * 1024,
});

const PARALLELISM = Math.max(1, os.availableParallelism());

export function resolveLimits(partial: Partial<JobLimits> | undefined, timeoutMs: number): JobLimits {
  const limits = { ...DEFAULT_LIMITS, ...partial };
  if (limits.cpuSeconds === null) {
    // Never ends a job the timeout would not: it bounds a process that outlives its job (one that
    // escaped the process group without the sandbox) and a runaway that ignores the kill.
    const seconds = Number.isFinite(timeoutMs) ? Math.ceil(timeoutMs / 1000) : 24 * 3600;
    limits.cpuSeconds = Math.max(1, seconds) * PARALLELISM;
  }
  return limits;
}

// Slack above maxProcesses for RLIMIT_NPROC: the watchdog ends the job at maxProcesses, the rlimit
// only stops the growth so that the watchdog gets to see it.
const NPROC_SLACK = 32;

/**
 * Arguments for util-linux `prlimit`, exec'd right before the interpreter. RLIMIT_NPROC is only
 * set when it counts the job's own tasks (`nproc`): it is ignored for uid 0 and, for anyone else
 * outside a user namespace, it counts every process of the user.
 */
export function prlimitArgs(limits: JobLimits, nproc: boolean): string[] {
  const cpu = limits.cpuSeconds ?? 1;
  const args = [
    // Soft then hard: SIGXCPU at the limit (a clear reason), SIGKILL a second later if ignored.
    `--cpu=${cpu}:${cpu + 1}`,
    `--fsize=${limits.maxFileBytes}`,
    "--core=0",
  ];
  if (nproc) args.push(`--nproc=${limits.maxProcesses + NPROC_SLACK}`);
  return args;
}

/**
 * The same limits as `ulimit` arguments for bash (a warm sandbox's stub sets them with the builtin
 * instead of exec'ing prlimit: one exec less on the job's path). The soft CPU limit comes first:
 * while the soft limit is still unlimited, lowering the hard one below it is refused.
 */
export function ulimitArgs(limits: JobLimits, nproc: boolean): string[] {
  const cpu = limits.cpuSeconds ?? 1;
  const args = [
    `-S -t ${cpu}`,
    `-H -t ${cpu + 1}`,
    // bash counts -f in 1024-byte blocks.
    `-f ${Math.ceil(limits.maxFileBytes / 1024)}`,
    "-c 0",
  ];
  if (nproc) args.push(`-u ${limits.maxProcesses + NPROC_SLACK}`);
  return args;
}
