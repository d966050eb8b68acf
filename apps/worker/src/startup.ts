// What a database worker (main.ts) and an agent worker (agent/main.ts) both set up before they
// run jobs: the job folder, the sandbox, the process launcher and the warm sandboxes, the metrics
// listener, and the executor's settings from the environment. Only where jobs come from and where
// their outcomes go differ between the two.
import fs from "node:fs";
import { startMetricsListener } from "@millrace/core";
import {
  detectSandbox,
  interpreterPaths,
  ProcessLauncher,
  WarmSandboxes,
  type SandboxStatus,
} from "@millrace/runtime";
import { installerEnv, type WorkerEnv } from "./env.ts";
import { defaultCacheRoot } from "./job-dependencies.ts";
import { jobMemoryDefault } from "./job-memory.ts";
import type { JobIsolation, RunJobDeps } from "./run-job.ts";

type StartEnv = Pick<
  WorkerEnv,
  | "JOB_DIR"
  | "DISABLE_SANDBOX"
  | "NUM_WORKERS"
  | "DEPENDENCY_CACHE_DIR"
  | "JOB_DISK_QUOTA_MB"
  | "JOB_MEMORY_LIMIT_MB"
  | "JOB_MAX_RESULT_MB"
> &
  Parameters<typeof installerEnv>[0] & { METRICS_ADDR?: WorkerEnv["METRICS_ADDR"] };

export interface JobRuntime {
  sandbox: SandboxStatus;
  /** No sandbox and DISABLE_SANDBOX not set: this worker must run no job. */
  refusesJobs: boolean;
  /** As the workers list shows it: "bubblewrap <version>", "disabled" or "unavailable: <why>". */
  sandboxState: string;
  /** Read by every job the worker starts; `network` may follow the group config. */
  isolation: JobIsolation;
  launcher: ProcessLauncher;
  warmSandboxes: WarmSandboxes | null;
  /** The executor's settings from the environment (part of RunJobDeps). */
  executor: Required<
    Pick<RunJobDeps, "jobDir" | "dependencies" | "diskQuotaBytes" | "defaultMemoryLimitMb" | "maxResultBytes">
  >;
  /** Stops the warm sandboxes and the launcher. */
  close(): Promise<void>;
}

export async function startJobRuntime(env: StartEnv, log: (message: string) => void): Promise<JobRuntime> {
  fs.mkdirSync(env.JOB_DIR, { recursive: true, mode: 0o700 });
  if (env.METRICS_ADDR) {
    const metricsServer = await startMetricsListener(env.METRICS_ADDR);
    metricsServer.unref();
    log(`metrics on http://${env.METRICS_ADDR.host}:${env.METRICS_ADDR.port}/metrics`);
  }
  const sandbox: SandboxStatus = env.DISABLE_SANDBOX
    ? { kind: "none", reason: "DISABLE_SANDBOX is set" }
    : detectSandbox();
  // Without a sandbox, jobs would run as one user: any job could read another's environment (its
  // WM_TOKEN), processes and files. Such a worker runs no job unless the operator opted out of the
  // sandbox on purpose (DISABLE_SANDBOX=true, trusted code only).
  const refusesJobs = sandbox.kind === "none" && !env.DISABLE_SANDBOX;
  const sandboxState =
    sandbox.kind === "bubblewrap"
      ? `bubblewrap ${sandbox.version}`
      : refusesJobs
        ? `unavailable: ${sandbox.reason}`
        : "disabled";
  const launcher = new ProcessLauncher();
  await launcher.start();
  // Sandboxes set up ahead of their jobs (see WarmSandboxes): three per kind of job, even for one
  // slot, so that the next jobs find one ready while the replacements of those just used wait
  // until their jobs are recorded and answered (see replenish): the three steps of a flow, each
  // handed to the slot its previous step freed, all start warm. A waiting bash sandbox holds a
  // few MB.
  const warmSandboxes =
    sandbox.kind === "bubblewrap"
      ? new WarmSandboxes({ workRoot: env.JOB_DIR, bwrap: sandbox.path, launcher, perSpec: 3 })
      : null;
  const paths = interpreterPaths();
  log(`interpreters: bash=${paths.bash} python3=${paths.python3} bun=${paths.bun} deno=${paths.deno}`);
  return {
    sandbox,
    refusesJobs,
    sandboxState,
    isolation: { sandbox: sandbox.kind !== "none", network: true },
    launcher,
    warmSandboxes,
    executor: {
      jobDir: env.JOB_DIR,
      dependencies: {
        cacheRoot: env.DEPENDENCY_CACHE_DIR ?? defaultCacheRoot(env.JOB_DIR),
        installerEnv: installerEnv(env),
      },
      diskQuotaBytes: env.JOB_DISK_QUOTA_MB * 1024 * 1024,
      defaultMemoryLimitMb: jobMemoryDefault(env.JOB_MEMORY_LIMIT_MB, env.NUM_WORKERS),
      maxResultBytes: env.JOB_MAX_RESULT_MB * 1024 * 1024,
    },
    async close() {
      warmSandboxes?.close();
      await launcher.close();
    },
  };
}
