import path from "node:path";
import type { ClaimedJob } from "@millrace/core";
import type { JobStore } from "./job-store.ts";
import {
  ensureLockInstalled,
  hasRequirements,
  InstallError,
  RequirementsError,
  resolveDependencies,
  scriptRequirements,
  type ExecuteOutcome,
  type InstalledDependencies,
  type InstallOptions,
} from "@millrace/runtime";

export interface DependencySettings {
  /** One folder per lock on this machine, shared by its worker processes. */
  cacheRoot: string;
  /** Index and registry settings for pip and bun (PIP_INDEX_URL, …). */
  installerEnv: Record<string, string>;
}

export interface PreparedDependencies {
  readOnlyPaths: string[];
  env: Record<string, string>;
  nodeModulesDir?: string;
}

const NONE: PreparedDependencies = { readOnlyPaths: [], env: {} };

/** What prepareDependencies reads of a job (a dedicated worker prepares a version, not a job). */
export type DependencyJob = Pick<
  ClaimedJob,
  "kind" | "language" | "content" | "lock" | "scriptHash" | "workspaceId" | "timeoutSecs"
>;

export function defaultCacheRoot(jobDir: string): string {
  return path.join(path.dirname(path.resolve(jobDir)), "millrace-cache");
}

function settingsOf(deps: { jobDir: string; dependencies?: DependencySettings }): DependencySettings {
  return deps.dependencies ?? { cacheRoot: defaultCacheRoot(deps.jobDir), installerEnv: {} };
}

export function installOptions(
  deps: { jobDir: string; dependencies?: DependencySettings },
  timeoutSecs: number,
  onLog: (chunk: string) => void,
  signal?: AbortSignal,
): InstallOptions {
  const settings = settingsOf(deps);
  return {
    cacheRoot: settings.cacheRoot,
    env: settings.installerEnv,
    onLog,
    signal,
    timeoutMs: timeoutSecs * 1000,
  };
}

function prepared(installed: InstalledDependencies): PreparedDependencies {
  return installed.nodeModulesDir
    ? { readOnlyPaths: installed.readOnlyPaths, env: installed.env, nodeModulesDir: installed.nodeModulesDir }
    : { readOnlyPaths: installed.readOnlyPaths, env: installed.env };
}

/**
 * Makes the job's locked dependencies available on this machine (installing the lock here when
 * it is not cached yet, e.g. the dependency job ran on another machine) and returns the paths
 * the sandbox must expose read-only and the environment pointing the interpreter at them.
 * Previews are not deployed, so they have no lock: their requirements are resolved inline.
 */
export async function prepareDependencies(
  deps: { store: Pick<JobStore, "lockOfVersion">; jobDir: string; dependencies?: DependencySettings },
  job: DependencyJob,
  onLog: (chunk: string) => void = () => {},
  signal?: AbortSignal,
): Promise<PreparedDependencies> {
  if (job.language !== "python3" && job.language !== "bun" && job.language !== "deno") return NONE;
  let lock = job.lock;
  // An empty lock (kept from a client for a script without requirements): nothing to install.
  if (lock === "") return NONE;
  if (lock === null) {
    if (!hasRequirements(job.language, job.content)) return NONE;
    if (job.kind !== "script" || !job.scriptHash) {
      const requirements = scriptRequirements(job.language, job.content);
      if (!requirements) return NONE;
      const { installed } = await resolveDependencies(
        requirements,
        installOptions(deps, job.timeoutSecs, onLog, signal),
      );
      return prepared(installed);
    }
    lock = await deps.store.lockOfVersion(job);
  }
  // A flow step's lock may be Windmill's (pushed with wmill): what it pins is used, not refused.
  const installed = await ensureLockInstalled(
    job.language,
    lock,
    job.content,
    installOptions(deps, job.timeoutSecs, onLog, signal),
  );
  return installed ? prepared(installed) : NONE;
}

/**
 * A `dependency` job: resolves the requirements of the script version it names into this
 * machine's cache, its output in the job's log. Its result `{lock}` becomes the version's lock
 * when the job completes (settleDependencyJobs).
 */
export async function runDependencyJob(
  deps: { jobDir: string; dependencies?: DependencySettings },
  job: ClaimedJob,
  signal: AbortSignal,
  onLog: (chunk: string) => void,
): Promise<ExecuteOutcome> {
  try {
    const requirements = scriptRequirements(job.language, job.content);
    if (!requirements) {
      return {
        status: "failure",
        error: { name: "DependencyError", message: "the script declares no dependencies" },
      };
    }
    const { lock } = await resolveDependencies(
      requirements,
      installOptions(deps, job.timeoutSecs, onLog, signal),
    );
    onLog(`[millrace] lock:\n${lock.length > 4000 ? `${lock.slice(0, 4000)}\n…` : lock}\n`);
    return { status: "success", result: { lock } };
  } catch (error) {
    if (signal.aborted) return { status: "canceled" };
    if (error instanceof InstallError || error instanceof RequirementsError) {
      return { status: "failure", error: { name: "DependencyError", message: error.message } };
    }
    throw error;
  }
}
