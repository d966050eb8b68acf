import { createHash } from "node:crypto";
import { prepared, type Prisma, type Script } from "@millrace/db";
import { inferSchema, isLanguage, SignatureError, type ArgSchema, type Language } from "@millrace/runtime";
import type { CoreContext } from "./context.ts";
import { AppError, invalidInput, notFound } from "./errors.ts";
import {
  authorizePath,
  eachMembership,
  folderLevel,
  folderLevels,
  likePrefix,
  readablePrefixes,
} from "./access.ts";
import { recordAudit } from "./audit/index.ts";
import { refuseWhenBounded } from "./auth/principal.ts";
import { parsePath } from "./paths.ts";
import { requirePermission, type Action } from "./permissions.ts";
import { checkScriptLimits, type JobLimits, type ScriptLimitsInput } from "./jobs/limits.ts";
import { validateTag } from "./jobs/tags.ts";
import type { Boss } from "./jobs/boss.ts";
import { checkRequirements, enqueueDependencyJob } from "./dependencies/index.ts";
import { assertTagAllowed } from "./workers/custom-tags.ts";
import type { Membership } from "./membership.ts";
import { applyArgCustomizations, checkArgCustomizations } from "./arg-customizations.ts";

export const MAX_SCRIPT_BYTES = 512 * 1024;

/** A script's code, the same limit whichever way it comes (deploy, push, restore, wmill). */
/**
 * The lock a version keeps of what a client sent. A non-empty lock is kept as sent, as Windmill
 * keeps it, and no dependency job replaces it: a lock written by Windmill is read at run time
 * (runtime's windmill-locks.ts uses what it pins and resolves the rest), and the tarball answers
 * the same text, so a repository pushed with `wmill` reads back unchanged. `""` (nothing to
 * install) is kept only for a script without requirements; null: one is computed.
 */
function givenLock(lock: unknown, requirements: unknown): string | null {
  if (lock === undefined || lock === null) return null;
  if (typeof lock !== "string") throw invalidInput("lock", "must be a string");
  if (Buffer.byteLength(lock) > MAX_SCRIPT_BYTES * 4) {
    throw invalidInput("lock", `at most ${(MAX_SCRIPT_BYTES * 4) / 1024} KiB`);
  }
  if (lock === "") return requirements ? null : "";
  return lock;
}

export function checkScriptContent(content: unknown, field = "content"): string {
  if (typeof content !== "string") throw invalidInput(field, "is required");
  if (Buffer.byteLength(content) > MAX_SCRIPT_BYTES) {
    throw invalidInput(field, `at most ${MAX_SCRIPT_BYTES / 1024} KiB`);
  }
  return content;
}

export interface NewScriptInput extends ScriptLimitsInput {
  path: string;
  content: string;
  language: string;
  summary?: string | null;
  description?: string | null;
  parentHash?: string | null;
  tag?: string | null;
  /**
   * A schema sent by a client (the Windmill CLI does): kept and answered as the script's schema
   * (declaredSchema), and run with only when inference fails.
   */
  schema?: unknown;
  /**
   * The lock a client sent (wmill sends the repository's `.script.lock`): the version's lock as
   * sent, see `givenLock`.
   */
  lock?: string | null;
  /** Runs go to the script's dedicated workers (Windmill's `dedicated_worker`). */
  dedicated_worker?: boolean | null;
  /**
   * Per-argument customisations merged onto the inferred schema (see arg-customizations.ts).
   * Left out: the previous version's are kept; null: none.
   */
  arg_customizations?: unknown;
  /**
   * Another of the caller's drafts to delete with the one at `path` (the editor's new-script
   * draft, `""`). The caller's draft at `path` is always deleted.
   */
  draftPath?: string | null;
  /**
   * Windmill's `skip_if_noop` (what `wmill script push` sends): when the version would be the
   * latest one again (same code and settings), no version is made and the latest is answered.
   */
  skipIfNoop?: boolean;
}

/** A client's schema, when it is one: an object whose properties, required and order are well formed. */
function declaredSchema(schema: unknown): Record<string, unknown> | null {
  if (schema === undefined || schema === null) return null;
  if (typeof schema !== "object" || Array.isArray(schema))
    throw invalidInput("schema", "must be a JSON object");
  const { properties, required, order } = schema as Record<string, unknown>;
  if (
    properties !== undefined &&
    (typeof properties !== "object" || properties === null || Array.isArray(properties))
  )
    throw invalidInput("schema", "properties must be an object");
  for (const [name, list] of [
    ["required", required],
    ["order", order],
  ] as const) {
    if (list !== undefined && !(Array.isArray(list) && list.every((item) => typeof item === "string")))
      throw invalidInput("schema", `${name} must be a list of argument names`);
  }
  return schema as Record<string, unknown>;
}

/** JSON values equal whatever their keys' order (jsonb reorders them); null and undefined alike. */
function sameJson(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === "object")
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
          .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
      );
    return value ?? null;
  };
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

export function versionHash(workspaceId: string, input: NewScriptInput, createdAt: Date): string {
  return createHash("sha256")
    .update(
      JSON.stringify([workspaceId, input.path, input.parentHash ?? null, input.language, input.content]),
    )
    .update(
      JSON.stringify([input.summary ?? "", input.description ?? "", input.tag ?? null, createdAt.getTime()]),
    )
    .digest("hex")
    .slice(0, 16);
}

function schemaFor(language: Language, input: NewScriptInput): ArgSchema {
  try {
    return inferSchema(language, input.content);
  } catch (error) {
    if (!(error instanceof SignatureError)) throw error;
    if (input.schema && typeof input.schema === "object") return input.schema as ArgSchema;
    throw invalidInput("content", error.message);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function scriptFromRow(row: any): Script {
  return {
    workspaceId: row.workspace_id,
    hash: row.hash,
    path: row.path,
    parentHash: row.parent_hash,
    summary: row.summary,
    description: row.description,
    content: row.content,
    language: row.language,
    schema: row.schema,
    declaredSchema: row.declared_schema,
    tag: row.tag,
    lock: row.lock,
    lockError: row.lock_error,
    timeoutSecs: row.timeout_secs,
    priority: row.priority,
    concurrentLimit: row.concurrent_limit,
    concurrencyTimeWindowS: row.concurrency_time_window_s,
    concurrencyKey: row.concurrency_key,
    retry: row.retry,
    memoryLimitMb: row.memory_limit_mb,
    dedicatedWorker: row.dedicated_worker,
    argCustomizations: row.arg_customizations,
    createdBy: row.created_by,
    createdAt: row.created_at,
    archived: row.archived,
  };
}

const SCRIPT_COLUMNS = `workspace_id, hash, path, parent_hash, summary, description, content, language, schema,
  declared_schema, tag, lock, lock_error, timeout_secs, priority, concurrent_limit, concurrency_time_window_s, concurrency_key,
  retry, memory_limit_mb, dedicated_worker, arg_customizations, created_by, created_at, archived`;

/** The latest deployed version at `path` (raw SQL: every run by path starts here). */
export async function latestScript(
  ctx: CoreContext,
  workspaceId: string,
  path: string,
): Promise<Script | null> {
  const { rows } = await ctx.pool.query(
    prepared(
      `SELECT ${SCRIPT_COLUMNS} FROM script
        WHERE workspace_id = $1 AND path = $2 AND NOT archived ORDER BY created_at DESC LIMIT 1`,
      [workspaceId, path],
    ),
  );
  return rows[0] ? scriptFromRow(rows[0]) : null;
}

/**
 * Deploys a new immutable version of the script at `path`. As in Windmill, redeploying an existing
 * path must name the version it replaces (`parent_hash`), so two editors cannot silently overwrite
 * each other.
 */
export async function deployScript(
  ctx: CoreContext & { limits: JobLimits; boss: Boss },
  membership: Membership,
  input: NewScriptInput,
): Promise<Script> {
  requirePermission(membership, "script.write");
  parsePath(input.path);
  await authorizePath(ctx, membership, input.path, "write");
  // The version would be the caller's (its runs bounded by the caller's rights alone), though
  // code of someone else wrote it.
  refuseWhenBounded(membership.principal, "deploy scripts");
  checkScriptContent(input.content);
  if (!isLanguage(input.language)) {
    throw invalidInput(
      "language",
      `unknown language "${input.language}" (bash, python3, bun, deno, postgresql)`,
    );
  }
  if ((input.summary ?? "").length > 1000) throw invalidInput("summary", "at most 1000 characters");
  if (input.tag) {
    validateTag(input.tag, "tag");
    // Dynamic tags are checked once resolved, when a job is enqueued.
    if (!input.tag.includes("$")) await assertTagAllowed(ctx.pool, membership.workspace.id, input.tag, "tag");
  }
  const limits = checkScriptLimits(ctx.limits, input);
  const declared = declaredSchema(input.schema);
  if (input.dedicated_worker !== undefined && input.dedicated_worker !== null) {
    if (typeof input.dedicated_worker !== "boolean")
      throw invalidInput("dedicated_worker", "must be true or false");
  }
  const customizations = checkArgCustomizations(input.arg_customizations);
  const inferred = schemaFor(input.language, input);
  // A version with dependencies runs once a `dependency` job has computed its lock.
  const requirements = checkRequirements(input.language, input.content);
  const lock = givenLock(input.lock, requirements);
  const workspaceId = membership.workspace.id;
  const latest = await latestScript(ctx, workspaceId, input.path);
  if (latest && input.parentHash !== latest.hash) {
    throw new AppError(
      "CONFLICT",
      input.parentHash
        ? `parent_hash ${input.parentHash} is not the latest version of ${input.path} (${latest.hash})`
        : `path conflict: ${input.path} already exists with hash ${latest.hash}; pass parent_hash to deploy a new version`,
      "parent_hash",
    );
  }
  if (!latest && input.parentHash)
    throw invalidInput("parent_hash", `${input.path} has no version to replace`);
  // A redeploy that says nothing of the customisations keeps the previous version's.
  const kept =
    input.arg_customizations === undefined
      ? checkArgCustomizations(latest?.argCustomizations ?? null)
      : customizations;
  const schema = applyArgCustomizations(inferred, kept);
  if (input.skipIfNoop && latest && !latest.lockError) {
    const same =
      latest.content === input.content &&
      latest.language === input.language &&
      latest.summary === (input.summary ?? "") &&
      latest.description === (input.description ?? "") &&
      latest.tag === (input.tag || null) &&
      latest.timeoutSecs === limits.timeoutSecs &&
      latest.priority === limits.priority &&
      latest.concurrentLimit === limits.concurrentLimit &&
      latest.concurrencyTimeWindowS === limits.concurrencyTimeWindowS &&
      latest.concurrencyKey === limits.concurrencyKey &&
      latest.memoryLimitMb === limits.memoryLimitMb &&
      latest.dedicatedWorker === (input.dedicated_worker ?? false) &&
      (lock === null || latest.lock === lock) &&
      sameJson(latest.retry, limits.retry) &&
      sameJson(latest.declaredSchema, declared) &&
      sameJson(latest.argCustomizations, kept) &&
      sameJson(latest.schema, schema);
    if (same) return latest;
  }
  const createdAt = new Date();
  const script = await ctx.db.script.create({
    data: {
      workspaceId,
      hash: versionHash(workspaceId, input, createdAt),
      path: input.path,
      parentHash: latest?.hash ?? null,
      summary: input.summary ?? "",
      description: input.description ?? "",
      content: input.content,
      language: input.language,
      schema: schema as unknown as Prisma.InputJsonValue,
      declaredSchema: (declared ?? undefined) as Prisma.InputJsonValue | undefined,
      ...(lock === null ? {} : { lock }),
      tag: input.tag || null,
      timeoutSecs: limits.timeoutSecs,
      priority: limits.priority,
      concurrentLimit: limits.concurrentLimit,
      concurrencyTimeWindowS: limits.concurrencyTimeWindowS,
      concurrencyKey: limits.concurrencyKey,
      retry: (limits.retry ?? undefined) as Prisma.InputJsonValue | undefined,
      memoryLimitMb: limits.memoryLimitMb,
      dedicatedWorker: input.dedicated_worker ?? false,
      argCustomizations: (kept ?? undefined) as Prisma.InputJsonValue | undefined,
      createdBy: membership.principal.username,
      createdAt,
    },
  });
  if (requirements && lock === null) await enqueueDependencyJob(ctx, script);
  // The caller's unsaved work on this path is now deployed (drafts.ts).
  await ctx.db.draft.deleteMany({
    where: {
      workspaceId,
      userId: membership.principal.userId,
      path:
        input.draftPath === undefined || input.draftPath === null
          ? input.path
          : { in: [input.path, input.draftPath] },
    },
  });
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: latest ? "scripts.update" : "scripts.create",
    resource: input.path,
    parameters: { hash: script.hash },
  });
  return script;
}

/**
 * Archives the script at `path` (Windmill's `scripts/archive/p`, what `wmill sync push` sends for
 * a script deleted from the repository): every version stays, for the jobs that ran them, but the
 * path has no script any more. Deploying the path again starts afresh (no parent_hash).
 */
export async function archiveScriptByPath(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<void> {
  requirePermission(membership, "script.write");
  await authorizePath(ctx, membership, path, "write").catch((error: unknown) => {
    throw error instanceof AppError && error.code === "NOT_FOUND" ? notFound(`script ${path}`) : error;
  });
  const { rowCount } = await ctx.pool.query(
    "UPDATE script SET archived = true WHERE workspace_id = $1 AND path = $2 AND NOT archived",
    [membership.workspace.id, path],
  );
  if (!rowCount) throw notFound(`script ${path}`);
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: membership.workspace.id,
    operation: "scripts.archive",
    resource: path,
  });
}

/**
 * Takes the script at `path` out of the archive: every version of it comes back, the newest
 * being the script again. Refused while the path has a script that is not archived.
 */
export async function unarchiveScriptByPath(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<void> {
  requirePermission(membership, "script.write");
  await authorizePath(ctx, membership, path, "write").catch((error: unknown) => {
    throw error instanceof AppError && error.code === "NOT_FOUND" ? notFound(`script ${path}`) : error;
  });
  const workspaceId = membership.workspace.id;
  if (await latestScript(ctx, workspaceId, path)) {
    throw new AppError("CONFLICT", `The script ${path} is not archived.`);
  }
  const { rowCount } = await ctx.pool.query(
    "UPDATE script SET archived = false WHERE workspace_id = $1 AND path = $2 AND archived",
    [workspaceId, path],
  );
  if (!rowCount) throw notFound(`script ${path}`);
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId,
    operation: "scripts.unarchive",
    resource: path,
  });
}

/**
 * Deletes the script at `path`, every version of it, archived or not (Windmill's
 * `scripts/delete/p`). The jobs that ran it keep their record (they name the path and hash).
 */
export async function deleteScriptByPath(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<void> {
  requirePermission(membership, "script.write");
  await authorizePath(ctx, membership, path, "write").catch((error: unknown) => {
    throw error instanceof AppError && error.code === "NOT_FOUND" ? notFound(`script ${path}`) : error;
  });
  const { count } = await ctx.db.script.deleteMany({ where: { workspaceId: membership.workspace.id, path } });
  if (!count) throw notFound(`script ${path}`);
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: membership.workspace.id,
    operation: "scripts.delete",
    resource: path,
    parameters: { versions: count },
  });
}

/** One deployed version of a script, without its content. */
export interface ScriptVersion {
  hash: string;
  parentHash: string | null;
  summary: string;
  language: string;
  createdBy: string;
  createdAt: Date;
  archived: boolean;
}

/** Every deployed version at `path`, newest first, archived ones included. */
export async function listScriptVersions(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<ScriptVersion[]> {
  requirePermission(membership, "script.read");
  await authorizePath(ctx, membership, path, "read").catch((error: unknown) => {
    throw error instanceof AppError && error.code === "NOT_FOUND" ? notFound(`script ${path}`) : error;
  });
  const versions = await ctx.db.script.findMany({
    where: { workspaceId: membership.workspace.id, path },
    orderBy: { createdAt: "desc" },
    select: {
      hash: true,
      parentHash: true,
      summary: true,
      language: true,
      createdBy: true,
      createdAt: true,
      archived: true,
    },
  });
  if (versions.length === 0) throw notFound(`script ${path}`);
  return versions;
}

/** The newest version at `path`, archived or not (the script page shows an archived script). */
export async function getNewestScriptVersion(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<Script> {
  requirePermission(membership, "script.read");
  await authorizePath(ctx, membership, path, "read").catch((error: unknown) => {
    throw error instanceof AppError && error.code === "NOT_FOUND" ? notFound(`script ${path}`) : error;
  });
  const script = await ctx.db.script.findFirst({
    where: { workspaceId: membership.workspace.id, path },
    orderBy: { createdAt: "desc" },
  });
  if (!script) throw notFound(`script ${path}`);
  return script;
}

/** What the caller may do with the item at `path`: change it (by their role and the path) and run it. */
export interface PathRights {
  canWrite: boolean;
  canRun: boolean;
}

/**
 * The caller's rights on a path, for a page to offer only what they may do: `canWrite` follows
 * `writeAction` of the permission table and the path's write check (u/ owner, folder writer),
 * `canRun` job.run. Nothing here reveals whether an item exists.
 */
export async function pathRights(
  ctx: CoreContext,
  membership: Membership,
  path: string,
  writeAction: Action = "script.write",
): Promise<PathRights> {
  parsePath(path);
  const allowed = (action: Action) => {
    try {
      requirePermission(membership, action);
      return true;
    } catch {
      return false;
    }
  };
  let canWrite = allowed(writeAction) && !boundedByOthers(membership);
  if (canWrite) {
    canWrite = await authorizePath(ctx, membership, path, "write").then(
      () => true,
      (error: unknown) => {
        if (error instanceof AppError) return false;
        throw error;
      },
    );
  }
  return { canWrite, canRun: allowed("job.run") };
}

/** A job's token whose code someone else deployed: it may not deploy (see refuseWhenBounded). */
function boundedByOthers(membership: Membership): boolean {
  const principal = membership.principal;
  return principal.boundedBy?.some((user) => user.userId !== principal.userId) ?? false;
}

/** For a list of paths: which of them the caller may write (one folder lookup for all of them). */
export async function writablePaths(
  ctx: CoreContext,
  membership: Membership,
  paths: string[],
  writeAction: Action = "script.write",
): Promise<Set<string>> {
  const writable = new Set<string>();
  try {
    requirePermission(membership, writeAction);
  } catch {
    return writable;
  }
  if (boundedByOthers(membership)) return writable;
  const levels = await Promise.all(
    eachMembership(membership).map(async (each) => ({
      each,
      levels: each.role === "admin" ? null : await folderLevels(ctx, each),
    })),
  );
  for (const path of paths) {
    const parsed = parsePath(path);
    const ok = levels.every(({ each, levels }) => {
      if (!levels) return true;
      if (parsed.kind === "u") return parsed.owner === each.principal.username;
      const level = levels.get(parsed.owner);
      return level === "owner" || level === "writer";
    });
    if (ok) writable.add(path);
  }
  return writable;
}

/** A lookup of a script's latest version started before the caller's membership was known. */
export interface ScriptLookup {
  workspaceId: string;
  path: string;
  script: Promise<Script | null>;
}

/**
 * Starts looking up the latest version at `path` while the caller's membership is still being
 * resolved (run_wait_result's path: one round trip less). Nothing of it reaches the caller unless
 * getScriptByPath, given it, has first checked the membership and the path's permissions.
 */
export function lookUpScriptAhead(ctx: CoreContext, workspaceId: string, path: string): ScriptLookup {
  const script = latestScript(ctx, workspaceId, path);
  // Awaited only once the caller is authorized; an error then surfaces there, not as unhandled.
  script.catch(() => {});
  return { workspaceId, path, script };
}

export async function getScriptByPath(
  ctx: CoreContext,
  membership: Membership,
  path: string,
  ahead?: ScriptLookup,
): Promise<Script> {
  requirePermission(membership, "script.read");
  await authorizePath(ctx, membership, path, "read").catch((error: unknown) => {
    throw error instanceof AppError && error.code === "NOT_FOUND" ? notFound(`script ${path}`) : error;
  });
  const script =
    ahead && ahead.workspaceId === membership.workspace.id && ahead.path === path
      ? await ahead.script
      : await latestScript(ctx, membership.workspace.id, path);
  if (!script) throw notFound(`script ${path}`);
  return script;
}

export async function getScriptByHash(
  ctx: CoreContext,
  membership: Membership,
  hash: string,
): Promise<Script> {
  requirePermission(membership, "script.read");
  const script = await ctx.db.script.findUnique({
    where: { workspaceId_hash: { workspaceId: membership.workspace.id, hash } },
  });
  if (!script) throw notFound(`script version ${hash}`);
  await authorizePath(ctx, membership, script.path, "read").catch(() => {
    throw notFound(`script version ${hash}`);
  });
  return script;
}

export interface ListScriptsInput {
  page?: number;
  perPage?: number;
  pathStart?: string;
  /** Also the paths whose script is archived (their newest version, `archived` set). */
  includeArchived?: boolean;
}

/** The latest version of every script path in the workspace, by path. */
export async function listScripts(
  ctx: CoreContext,
  membership: Membership,
  input: ListScriptsInput = {},
): Promise<Script[]> {
  requirePermission(membership, "script.read");
  const perPage = Math.min(Math.max(input.perPage ?? 100, 1), 1000);
  const page = Math.max(input.page ?? 1, 1);
  // Members other than admins list only what they may read (see access.ts).
  const readable = await readablePrefixes(ctx, membership);
  return ctx.db.script.findMany({
    where: {
      workspaceId: membership.workspace.id,
      ...(input.includeArchived ? {} : { archived: false }),
      ...(input.pathStart ? { path: { startsWith: input.pathStart } } : {}),
      ...(readable ? { OR: readable.map((prefix) => ({ path: { startsWith: likePrefix(prefix) } })) } : {}),
    },
    distinct: ["path"],
    orderBy: [{ path: "asc" }, { createdAt: "desc" }],
    skip: (page - 1) * perPage,
    take: perPage,
  });
}

/**
 * Whether a script is deployed at `path` (Windmill's `scripts/exists/p`): false as well for a
 * path the caller may not read, so that the answer says nothing more than getScriptByPath's 404.
 */
export async function scriptExists(ctx: CoreContext, membership: Membership, path: string): Promise<boolean> {
  try {
    await getScriptByPath(ctx, membership, path);
    return true;
  } catch (error) {
    if (error instanceof AppError && (error.code === "NOT_FOUND" || error.code === "FORBIDDEN")) return false;
    throw error;
  }
}

/**
 * Whether the caller owns `path` (Windmill's `users/is_owner`): their own `u/<username>/…`, or
 * a folder they own (admins own every folder).
 */
export async function isOwnerOfPath(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<boolean> {
  const parsed = parsePath(path);
  // A bounded caller owns the path only if every user bounding them does.
  const everyone = eachMembership(membership);
  if (parsed.kind === "u") return everyone.every((each) => each.principal.username === parsed.owner);
  for (const each of everyone) {
    if ((await folderLevel(ctx, each, parsed.owner)) !== "owner") return false;
  }
  return true;
}

/**
 * Which of the caller's local scripts differ from what is deployed (Windmill's
 * `scripts/raw_temp/diff`, asked by `wmill generate-metadata`): `scripts` maps a path to the
 * SHA-256 (hex) of its local code; a path differs when its deployed code hashes otherwise, when
 * nothing is deployed there, or when the caller may not read it. Millrace has no workspace
 * dependency files, so every one named differs.
 */
export async function diffScriptsWithDeployed(
  ctx: CoreContext,
  membership: Membership,
  scripts: Record<string, string>,
  workspaceDeps: string[],
): Promise<string[]> {
  requirePermission(membership, "script.read");
  const paths = Object.keys(scripts);
  const readable = await readablePrefixes(ctx, membership);
  const deployed = paths.length
    ? await ctx.db.script.findMany({
        where: { workspaceId: membership.workspace.id, path: { in: paths }, archived: false },
        distinct: ["path"],
        orderBy: [{ path: "asc" }, { createdAt: "desc" }],
        select: { path: true, content: true },
      })
    : [];
  const hashes = new Map(
    deployed
      .filter((script) => !readable || readable.some((prefix) => script.path.startsWith(prefix)))
      .map((script) => [script.path, createHash("sha256").update(script.content).digest("hex")]),
  );
  return [...paths.filter((path) => hashes.get(path) !== scripts[path]), ...workspaceDeps];
}
