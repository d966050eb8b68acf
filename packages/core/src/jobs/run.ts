import {
  ArgsError,
  inferSchema,
  isLanguage,
  SignatureError,
  validateArgs,
  type ArgSchema,
  type Language,
} from "@millrace/runtime";
import type { PoolClient } from "@millrace/db";
import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import { getScriptByHash, getScriptByPath, type ScriptLookup } from "../scripts.ts";
import type { Script } from "@millrace/db";
import type { Membership } from "../membership.ts";
import type { Boss } from "./boss.ts";
import { enqueueJob, type EnqueueInput, type RetryPolicy } from "./enqueue.ts";
import type { JobEvents } from "./events.ts";
import { checkedPriority, checkedTimeout, resolveConcurrencyKey, type JobLimits } from "./limits.ts";
import { assertTagAllowed } from "../workers/custom-tags.ts";
import { resolveTag, tagForRunnable } from "./tags.ts";

export type { JobLimits };

export interface JobsContext extends CoreContext {
  boss: Boss;
  events: JobEvents;
  limits: JobLimits;
}

export const MAX_ARGS_BYTES = 5 * 1024 * 1024;

export interface RunOptions {
  scheduledFor?: Date | null;
  priority?: number | null;
  /** Set by a schedule tick: the job records its schedule and commits in the tick's transaction. */
  schedulePath?: string | null;
  transaction?: PoolClient;
  /** The caller waits for the job's outcome before it learns anything (see EnqueueOptions). */
  awaited?: boolean;
  /** The script, looked up while the caller's membership was resolved (see lookUpScriptAhead). */
  scriptAhead?: ScriptLookup;
  /** Windmill's `tag` run parameter: the worker tag this run goes to instead of the script's. */
  tag?: string | null;
  /**
   * The job that started this one (Windmill's `parent_job`, which windmill-client sends from
   * inside a job) and the root of that lineage (`root_job`): see jobLineage in lineage.ts.
   */
  lineage?: { parentJobId: string | null; rootJobId: string | null };
}

function checkedArgs(schema: ArgSchema, args: unknown): Record<string, unknown> {
  if (args === null || args === undefined) args = {};
  if (typeof args !== "object" || Array.isArray(args)) throw invalidInput("args", "must be a JSON object");
  if (JSON.stringify(args).length > MAX_ARGS_BYTES) {
    throw new AppError("INVALID_INPUT", `args: larger than ${MAX_ARGS_BYTES / 1024 / 1024} MB`, "args");
  }
  try {
    return validateArgs(schema, args as Record<string, unknown>);
  } catch (error) {
    if (error instanceof ArgsError) throw invalidInput(`args.${error.field}`, error.message);
    throw error;
  }
}

/**
 * Who bounds a job's rights besides the caller it runs as (EnqueueInput.boundedBy): the deployer
 * of the code, unless the caller deployed it, and whoever already bounds the caller (a job's
 * token starting another job passes its bounds on, so a chain of jobs never gains rights).
 */
export function jobBounds(principal: Principal, codeAuthor: string | null): string[] {
  const names = new Set(principal.boundedBy?.map((user) => user.username) ?? []);
  if (codeAuthor) names.add(codeAuthor);
  names.delete(principal.username);
  return [...names].sort();
}

function timeoutFor(ctx: JobsContext, scriptTimeout: number | null): number {
  return Math.min(scriptTimeout ?? ctx.limits.defaultTimeoutSecs, ctx.limits.maxTimeoutSecs);
}

/** Runs the latest deployed version of the script at `path`. */
export async function runScriptByPath(
  ctx: JobsContext,
  membership: Membership,
  path: string,
  args: unknown,
  options: RunOptions = {},
): Promise<string> {
  requirePermission(membership, "job.run");
  checkPathScope(membership, path);
  const script = await getScriptByPath(ctx, membership, path, options.scriptAhead);
  return runScriptVersion(ctx, membership, script, args, options);
}

/** Runs one version of a script, named by its hash (Windmill's `jobs/run/h/{hash}`). */
export async function runScriptByHash(
  ctx: JobsContext,
  membership: Membership,
  hash: string,
  args: unknown,
  options: RunOptions = {},
): Promise<string> {
  requirePermission(membership, "job.run");
  const script = await getScriptByHash(ctx, membership, hash);
  checkPathScope(membership, script.path);
  return runScriptVersion(ctx, membership, script, args, options);
}

function checkPathScope(membership: Membership, path: string): void {
  const { principal } = membership;
  if (principal.pathScope && principal.pathScope !== path) {
    throw new AppError("FORBIDDEN", `this token may only run ${principal.pathScope}`);
  }
}

async function runScriptVersion(
  ctx: JobsContext,
  membership: Membership,
  script: Script,
  args: unknown,
  options: RunOptions,
): Promise<string> {
  // The job and its audit entry are written by one statement (the run_wait_result hot path).
  return enqueueJob(ctx.pool, ctx.boss, await scriptJobInput(ctx, membership, script, args, options), {
    transaction: options.transaction,
    awaited: options.awaited,
  });
}

/** The job that runs `script` with `args`, as the caller may start it (tag checked). */
export async function scriptJobInput(
  ctx: JobsContext,
  membership: Membership,
  script: Script,
  args: unknown,
  options: RunOptions,
): Promise<EnqueueInput> {
  const { principal } = membership;
  const language = script.language as Language;
  const schema = script.schema as unknown as ArgSchema;
  const runArgs = checkedArgs(schema, args);
  const workspaceId = membership.workspace.id;
  const tag = resolveTag(tagForRunnable(options.tag || script.tag, language), workspaceId, runArgs);
  await assertTagAllowed(ctx.pool, workspaceId, tag, "tag");
  return {
    workspaceId,
    kind: "script",
    scriptPath: script.path,
    scriptHash: script.hash,
    language,
    content: script.content,
    args: runArgs,
    argOrder: schema.order,
    tag,
    priority: checkedPriority(options.priority) ?? script.priority ?? 0,
    scheduledFor: options.scheduledFor ?? null,
    timeoutSecs: timeoutFor(ctx, script.timeoutSecs),
    memoryLimitMb: script.memoryLimitMb ?? ctx.limits.defaultMemoryLimitMb ?? null,
    concurrency: script.concurrentLimit
      ? {
          key: resolveConcurrencyKey(script.concurrencyKey ?? script.path, workspaceId, runArgs),
          limit: script.concurrentLimit,
          windowSecs: script.concurrencyTimeWindowS ?? 0,
        }
      : null,
    retry: (script.retry as RetryPolicy | null) ?? null,
    createdBy: principal.username,
    permissionedAs: `u/${principal.username}`,
    boundedBy: jobBounds(principal, script.createdBy),
    schedulePath: options.schedulePath ?? null,
    dedicatedWorker: script.dedicatedWorker,
    parentJobId: options.lineage?.parentJobId ?? null,
    rootJobId: options.lineage?.rootJobId ?? null,
    audit: {
      actor: principal,
      entry: {
        workspaceId,
        operation: "jobs.run.script",
        resource: script.path,
        parameters: { hash: script.hash },
      },
    },
  };
}

export interface PreviewInput {
  language: string;
  content: string;
  args: unknown;
  path?: string | null;
  /** Seconds, as a script's `timeout` (the editor tests a script with its settings). */
  timeout?: number | null;
  /** Windmill's Preview `tag`: the worker tag to run on instead of the language's. */
  tag?: string | null;
}

/** Runs code that is not deployed (the editor's test run), as Windmill's preview jobs do. */
export async function runPreview(
  ctx: JobsContext,
  membership: Membership,
  input: PreviewInput,
): Promise<string> {
  return enqueueJob(ctx.pool, ctx.boss, previewJobInput(ctx, membership, input));
}

export function previewJobInput(ctx: JobsContext, membership: Membership, input: PreviewInput): EnqueueInput {
  requirePermission(membership, "job.preview");
  if (!isLanguage(input.language)) throw invalidInput("language", `unknown language "${input.language}"`);
  let schema: ArgSchema;
  try {
    schema = inferSchema(input.language, input.content);
  } catch (error) {
    if (error instanceof SignatureError) throw invalidInput("content", error.message);
    throw error;
  }
  const runArgs = checkedArgs(schema, input.args);
  const timeout = checkedTimeout(ctx.limits, input.timeout);
  const workspaceId = membership.workspace.id;
  const { principal } = membership;
  return {
    workspaceId,
    kind: "preview",
    scriptPath: input.path ?? null,
    scriptHash: null,
    language: input.language,
    content: input.content,
    args: runArgs,
    argOrder: schema.order,
    tag: resolveTag(tagForRunnable(input.tag || null, input.language), workspaceId, runArgs),
    priority: 0,
    scheduledFor: null,
    timeoutSecs: timeoutFor(ctx, timeout),
    memoryLimitMb: ctx.limits.defaultMemoryLimitMb ?? null,
    concurrency: null,
    retry: null,
    createdBy: principal.username,
    permissionedAs: `u/${principal.username}`,
    boundedBy: jobBounds(principal, null),
    audit: {
      actor: principal,
      entry: {
        workspaceId,
        operation: "jobs.run.preview",
        resource: input.path ?? null,
        parameters: { language: input.language },
      },
    },
  };
}
