import { createHash } from "node:crypto";
import { jobMemoryLimitMb, type ClaimedJob, type Completion, type JobOutcome } from "@millrace/core";
import { executeJob, resultTooLarge, type ExecuteOutcome } from "@millrace/runtime";
import { denoModules, prepareCallback } from "./job-callback.ts";
import { watchJobSecrets, type JobSecrets } from "./job-secrets.ts";
import type { RunJobDeps } from "./run-job-deps.ts";
import { runFlowDependencyJob } from "./job-flow-dependencies.ts";
import { flowSharedDir } from "./flow-shared-dir.ts";
import { defaultCacheRoot, prepareDependencies, runDependencyJob } from "./job-dependencies.ts";

export type { GroupRuntime, JobIsolation, RunJobDeps } from "./run-job-deps.ts";

export const DEFAULT_MAX_RESULT_MB = 10;

// Output is flushed to the database at most this often while a job runs; a short job's whole
// log is written with its result in the completion transaction instead.
const LOG_FLUSH_MS = 200;

function toJobOutcome(outcome: ExecuteOutcome, cancelReason: string | null): JobOutcome {
  switch (outcome.status) {
    case "success":
      return { status: "success", result: outcome.result };
    case "failure":
      return { status: "failure", result: { error: outcome.error } };
    case "canceled":
      return {
        status: "canceled",
        result: { error: { name: "Canceled", message: cancelReason ?? "job canceled" } },
      };
  }
}

/** `noop` jobs run no code: they wait `sleep_ms` (if given) and return their args. */
async function runNoop(job: ClaimedJob, signal: AbortSignal): Promise<ExecuteOutcome> {
  const sleepMs = Number(job.args.sleep_ms ?? 0);
  if (sleepMs > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, sleepMs);
      signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
  return signal.aborted ? { status: "canceled" } : { status: "success", result: job.args };
}

/** The job's own packages first, then the bundled clients (windmill-client, wmill). */
function searchPaths(...envs: Record<string, string>[]): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const name of ["NODE_PATH", "PYTHONPATH"]) {
    const value = envs
      .map((env) => env[name])
      .filter(Boolean)
      .join(":");
    if (value) merged[name] = value;
  }
  return merged;
}

async function runScript(
  deps: RunJobDeps,
  job: ClaimedJob,
  signal: AbortSignal,
  onLog: (chunk: string) => void,
): Promise<ExecuteOutcome> {
  const [callback, dependencies, sharedDir] = await Promise.all([
    prepareCallback(deps, job),
    prepareDependencies(deps, job, onLog, signal),
    flowSharedDir(deps.store, deps.jobDir, job),
  ]);
  const group = deps.groupRuntime;
  // A virtualenv of the group's runtime folders comes after the job's own dependencies.
  const groupEnv: Record<string, string> = group?.dirs.pythonPath.length
    ? { PYTHONPATH: group.dirs.pythonPath.join(":") }
    : {};
  // deno finds windmill-client in the job's node_modules (see denoModules).
  const deno =
    job.language === "deno"
      ? denoModules(
          deps.dependencies?.cacheRoot ?? defaultCacheRoot(deps.jobDir),
          job.content,
          dependencies.nodeModulesDir,
        )
      : null;
  return executeJob({
    jobId: job.id,
    language: job.language,
    content: job.content,
    args: callback.args,
    argOrder: job.argOrder,
    env: { ...callback.env, ...dependencies.env, ...searchPaths(dependencies.env, callback.env, groupEnv) },
    readOnlyPaths: [
      ...new Set([
        ...dependencies.readOnlyPaths,
        ...callback.readOnlyPaths,
        ...(deno?.readOnlyPaths ?? []),
        ...(group?.dirs.readOnlyPaths ?? []),
      ]),
    ],
    ...(group?.dirs.path.length ? { pathPrefix: group.dirs.path } : {}),
    nodeModulesDir: deno?.nodeModulesDir ?? dependencies.nodeModulesDir,
    ...(sharedDir ? { sharedDir } : {}),
    workRoot: deps.jobDir,
    timeoutMs: job.timeoutSecs * 1000,
    memoryLimitMb: jobMemoryLimitMb(job.memoryLimitMb, group?.workerSize, deps.defaultMemoryLimitMb ?? null),
    sandbox: deps.isolation?.sandbox ?? true,
    network: deps.isolation?.network ?? true,
    signal,
    onLog,
    launcher: deps.launcher ?? null,
    warmSandboxes: deps.warmSandboxes ?? null,
    reuseKey: sandboxReuseKey(job),
    ...(deps.diskQuotaBytes ? { limits: { maxDiskBytes: deps.diskQuotaBytes } } : {}),
    maxResultBytes: maxResultBytes(deps),
  });
}

/**
 * The jobs that may run one after the other in one sandbox (see ExecuteRequest.reuseKey): runs
 * of the same code as the same user in the same workspace. Such jobs hold the same rights (their
 * tokens act as that user), and what one could leave for the next is that same code's doing.
 */
function sandboxReuseKey(job: ClaimedJob): string {
  return createHash("sha256")
    .update(JSON.stringify([job.workspaceId, job.permissionedAs, job.language, job.content]))
    .digest("base64url");
}

function maxResultBytes(deps: RunJobDeps): number {
  return deps.maxResultBytes ?? DEFAULT_MAX_RESULT_MB * 1024 * 1024;
}

/** Whatever ran the job (a warm dedicated process, a dependency job), its result obeys the cap. */
function capped(deps: RunJobDeps, outcome: ExecuteOutcome): ExecuteOutcome {
  if (outcome.status !== "success") return outcome;
  const max = maxResultBytes(deps);
  const bytes = Buffer.byteLength(JSON.stringify(outcome.result ?? null) ?? "null");
  return bytes > max ? resultTooLarge(bytes, max) : outcome;
}

/**
 * Runs one claimed job and returns its completion (null when the worker is shutting down or fenced
 * and the job must go back to the queue instead). Never throws for user errors.
 */
export async function runClaimedJob(
  deps: RunJobDeps,
  job: ClaimedJob,
  signal: AbortSignal,
  cancelReason: () => string | null,
): Promise<Completion | null> {
  const { secrets, release } = watchJobSecrets(job);
  // Output not masked yet, and masked output a flush could not store (kept for the final write).
  let pending = "";
  let unsent = "";
  let timer: NodeJS.Timeout | null = null;
  let flushing: Promise<void> = Promise.resolve();
  const flush = () => {
    timer = null;
    const chunk = pending;
    pending = "";
    if (!chunk) return;
    // Chained so that chunks land in order, each masked once the secrets announced so far are known.
    flushing = flushing.then(async () => {
      await secrets.settled();
      const text = unsent + secrets.masker.push(chunk);
      unsent = "";
      // A fenced run writes nothing more: the job is another worker's to run now.
      if (signal.reason === "fence") return;
      if (text) await deps.store.appendLog(job.id, text).catch(() => (unsent = text));
    });
  };

  const onLog = (chunk: string) => {
    pending += chunk;
    timer ??= setTimeout(flush, LOG_FLUSH_MS);
  };

  let outcome: ExecuteOutcome;
  try {
    outcome =
      job.kind === "noop"
        ? await runNoop(job, signal)
        : job.kind === "dependency"
          ? await runDependencyJob(deps, job, signal, onLog)
          : job.kind === "flowdependencies"
            ? await runFlowDependencyJob(deps, job, signal, onLog)
            : deps.dedicated?.serves(job)
              ? await deps.dedicated.run(job, signal, onLog)
              : await runScript(deps, job, signal, onLog);
  } catch (error) {
    // A failure of the runtime itself (cannot write the job dir, interpreter missing, …).
    const message = error instanceof Error ? error.message : String(error);
    outcome = { status: "failure", error: { name: "WorkerError", message } };
  }
  outcome = capped(deps, outcome);
  if (timer) clearTimeout(timer);
  // Fenced (see fence.ts): killed because the worker lost the database; its output and outcome
  // are dropped (a flush stuck on a dead connection is not waited for) and the zombie monitor,
  // or the worker once the database answers, puts the job back in the queue.
  // Any outcome but a success that came before the kill: one the kill caused is no outcome.
  if (outcome.status !== "success" && signal.reason === "fence") {
    release();
    return null;
  }
  await flushing;
  await secrets.settled();
  release();
  const rest = unsent + secrets.masker.push(pending) + secrets.masker.end();
  if (outcome.status === "canceled" && signal.reason === "shutdown") {
    if (rest) await deps.store.appendLog(job.id, rest).catch(() => {});
    return null;
  }
  return { job, outcome: masked(secrets, toJobOutcome(outcome, cancelReason())), pendingLog: rest };
}

/** The outcome with the job's secrets masked in its result (and error). */
function masked(secrets: JobSecrets, outcome: JobOutcome): JobOutcome {
  if (secrets.masker.empty) return outcome;
  return { ...outcome, result: secrets.masker.maskValue(outcome.result) } as JobOutcome;
}
