// What running a job needs, injected by the worker (dispatcher.ts) or the agent (agent/main.ts):
// run-job.ts runs jobs with it, and the modules it calls (job-callback.ts, dedicated.ts) take it
// without importing run-job.ts back. The dedicated runner is seen only through DedicatedJobs.
import type { ClaimedJob, RuntimeDirsEnv, WorkerSize } from "@millrace/core";
import type { ExecuteOutcome, ProcessLauncher, WarmSandboxes } from "@millrace/runtime";
import type { DependencySettings } from "./job-dependencies.ts";
import type { JobStore } from "./job-store.ts";

/** A dedicated worker's warm process (dedicated.ts's DedicatedRunner), as run-job.ts uses it. */
export interface DedicatedJobs {
  serves(job: ClaimedJob): boolean;
  run(job: ClaimedJob, signal: AbortSignal, onLog: (chunk: string) => void): Promise<ExecuteOutcome>;
}

export interface JobIsolation {
  /** Run jobs in bubblewrap (false: it is unavailable or disabled). */
  sandbox: boolean;
  network: boolean;
}

export interface RunJobDeps {
  /** Where the job's log goes and what it reads (the database, or the server for an agent). */
  store: JobStore;
  jobDir: string;
  baseUrl: string;
  baseInternalUrl: string;
  /** Sandbox and network for the jobs (the network follows the group config). */
  isolation?: JobIsolation;
  /** Starts job processes (cheaper than forking the worker itself); null: the worker does. */
  launcher?: ProcessLauncher | null;
  /** Sandboxes set up ahead of their jobs; null: every job's sandbox is set up when it starts. */
  warmSandboxes?: WarmSandboxes | null;
  dependencies?: DependencySettings;
  /** Set on a dedicated worker: runs its script's jobs in a warm process. */
  dedicated?: DedicatedJobs | null;
  /** What a job's folder may hold (JOB_DISK_QUOTA_MB); default DEFAULT_LIMITS.maxDiskBytes. */
  diskQuotaBytes?: number;
  /** Memory limit (MB) of jobs that set none (see job-memory.ts); null: none. */
  defaultMemoryLimitMb?: number | null;
  /** A job whose result is larger fails with ResultTooLarge (JOB_MAX_RESULT_MB). */
  maxResultBytes?: number;
  /** The group config's worker_size and runtime_dirs, as of its last load (see group-runtime.ts). */
  groupRuntime?: GroupRuntime;
}

export interface GroupRuntime {
  workerSize: WorkerSize | null;
  dirs: RuntimeDirsEnv;
}
