import { isLanguage } from "@millrace/runtime";
import { checkRequirements, DEPENDENCY_TAG } from "./dependencies/index.ts";
import { invalidInput } from "./errors.ts";
import { enqueueJob, type EnqueueInput } from "./jobs/enqueue.ts";
import { waitForJob } from "./jobs/queries.ts";
import { jobBounds, type JobsContext } from "./jobs/run.ts";
import { parsePath } from "./paths.ts";
import { requirePermission } from "./permissions.ts";
import { MAX_SCRIPT_BYTES } from "./scripts.ts";
import type { Membership } from "./membership.ts";

/** One script of Windmill's `jobs/run/dependencies_async` body. */
export interface RawScript {
  raw_code: string;
  language: string;
  script_path: string;
}

export interface RawDependenciesInput {
  raw_scripts: RawScript[];
  /** The script whose lock is asked for (its `script_path`); the first one when absent. */
  entrypoint?: string | null;
}

/**
 * Starts the job that computes the dependency lock of code that is not deployed (Windmill's
 * `jobs/run/dependencies_async`, what `wmill generate-metadata` calls before writing a script's
 * `.script.lock`). Its result is `{ lock }`: the worker's resolution of the script's requirements,
 * or `""` for a script that declares none (then no worker needs to install anything, and the job
 * is a `noop` one that answers `{ lock: "" }`). Computing a lock installs packages on a worker:
 * it is authoring, allowed to those who may preview code.
 */
export async function runRawDependencies(
  ctx: JobsContext,
  membership: Membership,
  input: RawDependenciesInput,
): Promise<string> {
  requirePermission(membership, "job.preview");
  if (input.raw_scripts.length === 0) throw invalidInput("raw_scripts", "must name at least one script");
  const index = input.entrypoint
    ? input.raw_scripts.findIndex((script) => script.script_path === input.entrypoint)
    : 0;
  if (index < 0)
    throw invalidInput("entrypoint", `no script of raw_scripts has the path ${input.entrypoint}`);
  const script = input.raw_scripts[index]!;
  const field = `raw_scripts.${index}`;
  if (!isLanguage(script.language)) {
    throw invalidInput(`${field}.language`, `unknown language "${script.language}"`);
  }
  if (Buffer.byteLength(script.raw_code) > MAX_SCRIPT_BYTES) {
    throw invalidInput(`${field}.raw_code`, `at most ${MAX_SCRIPT_BYTES / 1024} KiB`);
  }
  try {
    parsePath(script.script_path);
  } catch {
    throw invalidInput(`${field}.script_path`, "must be a path such as u/<user>/<name> or f/<folder>/<name>");
  }
  const requirements = checkRequirements(script.language, script.raw_code);
  const { principal } = membership;
  const workspaceId = membership.workspace.id;
  const job: EnqueueInput = {
    workspaceId,
    kind: requirements ? "dependency" : "noop",
    // No version: settleDependencyJobs writes no lock for it, the caller reads the job's result.
    scriptPath: script.script_path,
    scriptHash: null,
    language: script.language,
    content: script.raw_code,
    args: requirements ? {} : { lock: "" },
    argOrder: [],
    tag: DEPENDENCY_TAG,
    priority: 100,
    scheduledFor: null,
    timeoutSecs: Math.min(ctx.limits.defaultTimeoutSecs, ctx.limits.maxTimeoutSecs),
    memoryLimitMb: null,
    concurrency: null,
    retry: null,
    createdBy: principal.username,
    permissionedAs: `u/${principal.username}`,
    boundedBy: jobBounds(principal, null),
    audit: {
      actor: principal,
      entry: {
        workspaceId,
        operation: "jobs.run.dependencies",
        resource: script.script_path,
        parameters: { language: script.language },
      },
    },
  };
  return enqueueJob(ctx.pool, ctx.boss, job);
}

/**
 * The lock of code that is not deployed, waited for (Windmill's `jobs/run/dependencies`): the
 * job of runRawDependencies, awaited as long as it may run. A requirement that cannot be resolved
 * is refused naming the script, with the resolver's reason.
 */
export async function lockRawDependencies(
  ctx: JobsContext,
  membership: Membership,
  input: RawDependenciesInput,
): Promise<string> {
  const id = await runRawDependencies(ctx, membership, input);
  const timeoutSecs = Math.min(ctx.limits.defaultTimeoutSecs, ctx.limits.maxTimeoutSecs);
  const job = await waitForJob(ctx, membership, id, (timeoutSecs + 30) * 1000);
  const result = job.result as { lock?: unknown; error?: { message?: unknown } } | null;
  if (job.status === "success" && typeof result?.lock === "string") return result.lock;
  const reason = String(result?.error?.message ?? `the dependency job ${id} ended as ${job.status}`);
  throw invalidInput("raw_scripts", `the dependencies could not be resolved: ${reason}`);
}
