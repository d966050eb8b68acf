import fs from "node:fs";
import { runtimeDirsEnv, workerMemoryMb, type WorkerGroupConfig } from "@millrace/core";
import type { GroupRuntime } from "./run-job-deps.ts";

/**
 * What the group's config gives its jobs (worker_size, runtime_dirs), read at each config load. A
 * runtime folder missing on this worker (the group runs an image without it) is said once in the
 * log and left out: its jobs then fail on the missing tool, which names it.
 */
export function groupRuntimeOf(
  config: WorkerGroupConfig | null,
  log: (message: string) => void,
): GroupRuntime {
  const dirs = config?.runtime_dirs ?? [];
  const missing = dirs.filter((dir) => !fs.existsSync(dir));
  if (missing.length) log(`runtime_dirs not found on this worker (not given to jobs): ${missing.join(", ")}`);
  const runtime: GroupRuntime = {
    workerSize: config?.worker_size ?? null,
    dirs: runtimeDirsEnv(dirs, fs),
  };
  if (runtime.workerSize !== null || runtime.dirs.readOnlyPaths.length)
    log(
      `worker group config: ${runtime.workerSize !== null ? `jobs limited to ${workerMemoryMb(runtime.workerSize)} MB` : "no worker size"}` +
        (runtime.dirs.readOnlyPaths.length
          ? `, runtime folders ${runtime.dirs.readOnlyPaths.join(", ")}`
          : ""),
    );
  return runtime;
}
