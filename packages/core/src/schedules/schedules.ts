import { isUniqueViolation, withTransaction, type PoolClient } from "@millrace/db";
import { ArgsError, validateArgs, type ArgSchema } from "@millrace/runtime";
import { authorizePath, likePrefix, readablePrefixes } from "../access.ts";
import { recordAudit } from "../audit/index.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { MAX_ARGS_BYTES } from "../jobs/run.ts";
import { parsePath } from "../paths.ts";
import { refuseWhenBounded } from "../auth/principal.ts";
import { requirePermission } from "../permissions.ts";
import { getScriptByPath } from "../scripts.ts";
import { getFlow } from "../flows/store.ts";
import type { Membership } from "../membership.ts";
import { checkTimezone, parseCron, tickAfter } from "./cron.ts";

/** Every server's ticker LISTENs here, so a new or changed schedule is picked up at once. */
export const SCHEDULE_CHANGED_CHANNEL = "millrace_schedule_changed";
export const MAX_SUMMARY_CHARS = 1000;

export interface ScheduleView {
  workspaceId: string;
  path: string;
  schedule: string;
  timezone: string;
  scriptPath: string;
  isFlow: boolean;
  args: Record<string, unknown>;
  enabled: boolean;
  summary: string;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  error: string | null;
  createdBy: string;
  permissionedAs: string;
  /** The email of the user the jobs run as (Windmill's `email`), null if they are gone. */
  email: string | null;
  createdAt: Date;
  updatedAt: Date;
}

interface ScheduleRow {
  workspace_id: string;
  path: string;
  schedule: string;
  timezone: string;
  script_path: string;
  is_flow: boolean;
  args: Record<string, unknown>;
  enabled: boolean;
  summary: string;
  next_run_at: Date | null;
  last_run_at: Date | null;
  error: string | null;
  created_by: string;
  permissioned_as: string;
  email: string | null;
  created_at: Date;
  updated_at: Date;
}

// The columns are `timestamp` in UTC (Prisma's DateTime); read them as instants whatever the
// Node process's own time zone is.
export const SCHEDULE_COLUMNS = `workspace_id, path, schedule, timezone, script_path, is_flow, args, enabled,
  summary, next_run_at AT TIME ZONE 'UTC' AS next_run_at, last_run_at AT TIME ZONE 'UTC' AS last_run_at, error,
  created_by, permissioned_as, created_at AT TIME ZONE 'UTC' AS created_at,
  updated_at AT TIME ZONE 'UTC' AS updated_at,
  (SELECT u.email FROM "user" u WHERE 'u/' || u.username = schedule.permissioned_as) AS email`;

function view(row: ScheduleRow): ScheduleView {
  return {
    workspaceId: row.workspace_id,
    path: row.path,
    schedule: row.schedule,
    timezone: row.timezone,
    scriptPath: row.script_path,
    isFlow: row.is_flow,
    args: row.args ?? {},
    enabled: row.enabled,
    summary: row.summary,
    nextRunAt: row.next_run_at,
    lastRunAt: row.last_run_at,
    error: row.error,
    createdBy: row.created_by,
    permissionedAs: row.permissioned_as,
    email: row.email,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface ScheduleInput {
  path: string;
  schedule: string;
  timezone?: string | null;
  scriptPath: string;
  isFlow?: boolean | null;
  args?: unknown;
  enabled?: boolean | null;
  summary?: string | null;
}

/** Windmill's EditSchedule: the target and the path stay; the timing, args and summary change. */
export interface ScheduleUpdate {
  schedule: string;
  timezone?: string | null;
  args?: unknown;
  summary?: string | null;
}

function checkSummary(summary: unknown): string {
  if (summary === undefined || summary === null) return "";
  if (typeof summary !== "string") throw invalidInput("summary", "must be a string");
  if (summary.length > MAX_SUMMARY_CHARS)
    throw invalidInput("summary", `at most ${MAX_SUMMARY_CHARS} characters`);
  return summary;
}

function checkArgsShape(args: unknown): Record<string, unknown> {
  if (args === undefined || args === null) return {};
  if (typeof args !== "object" || Array.isArray(args)) throw invalidInput("args", "must be a JSON object");
  if (JSON.stringify(args).length > MAX_ARGS_BYTES) {
    throw invalidInput("args", `larger than ${MAX_ARGS_BYTES / 1024 / 1024} MB`);
  }
  return args as Record<string, unknown>;
}

/**
 * The target must be a script (or, with `isFlow`, a flow) the caller can read; the args must fit
 * its signature now (the tick checks them again at each run, since the target may change).
 */
async function checkTarget(
  ctx: CoreContext,
  membership: Membership,
  scriptPath: string,
  isFlow: boolean,
  args: Record<string, unknown>,
): Promise<void> {
  parsePath(scriptPath, "script_path");
  if (isFlow) {
    const flow = await getFlow(ctx, membership, scriptPath).catch((error: unknown) => {
      if (error instanceof AppError && error.code === "NOT_FOUND") {
        throw invalidInput("script_path", `no flow at ${scriptPath}`);
      }
      throw error;
    });
    if (flow.archived) throw invalidInput("script_path", `no flow at ${scriptPath} (it is archived)`);
    if (!flow.schema) return;
    try {
      validateArgs(flow.schema as unknown as ArgSchema, args);
    } catch (error) {
      if (error instanceof ArgsError) throw invalidInput(`args.${error.field}`, error.message);
      throw error;
    }
    return;
  }
  const script = await getScriptByPath(ctx, membership, scriptPath).catch((error: unknown) => {
    if (error instanceof AppError && error.code === "NOT_FOUND") {
      throw invalidInput("script_path", `no script at ${scriptPath}`);
    }
    throw error;
  });
  try {
    validateArgs(script.schema as unknown as ArgSchema, args);
  } catch (error) {
    if (error instanceof ArgsError) throw invalidInput(`args.${error.field}`, error.message);
    throw error;
  }
}

async function loadRow(
  client: Pick<PoolClient, "query">,
  workspaceId: string,
  path: string,
  forUpdate = false,
): Promise<ScheduleRow | undefined> {
  const { rows } = await client.query<ScheduleRow>(
    `SELECT ${SCHEDULE_COLUMNS} FROM schedule WHERE workspace_id = $1 AND path = $2${forUpdate ? " FOR UPDATE" : ""}`,
    [workspaceId, path],
  );
  return rows[0];
}

async function readable(ctx: CoreContext, membership: Membership, path: string): Promise<void> {
  requirePermission(membership, "schedule.read");
  parsePath(path);
  await authorizePath(ctx, membership, path, "read").catch((error: unknown) => {
    throw error instanceof AppError && error.code === "NOT_FOUND" ? notFound(`schedule ${path}`) : error;
  });
}

async function writable(ctx: CoreContext, membership: Membership, path: string): Promise<void> {
  requirePermission(membership, "schedule.write");
  parsePath(path);
  await authorizePath(ctx, membership, path, "write");
}

function firstTick(schedule: string, timezone: string): Date | null {
  return tickAfter(parseCron(schedule, timezone), new Date());
}

function notifyChanged(client: PoolClient): Promise<unknown> {
  return client.query("SELECT pg_notify($1, '')", [SCHEDULE_CHANGED_CHANNEL]);
}

/** What the audit log keeps of a schedule: never the args' values (they may hold secrets). */
function auditParameters(row: { schedule: string; timezone: string; script_path: string; args: object }) {
  return {
    schedule: row.schedule,
    timezone: row.timezone,
    script_path: row.script_path,
    arg_names: Object.keys(row.args),
  };
}

/** Creates a schedule that runs `scriptPath` as the caller on every tick of its cron. */
export async function createSchedule(
  ctx: CoreContext,
  membership: Membership,
  input: ScheduleInput,
): Promise<ScheduleView> {
  await writable(ctx, membership, input.path);
  // Its jobs would run as the caller alone, with args chosen by the code of someone else.
  refuseWhenBounded(membership.principal, "create schedules");
  const timezone = checkTimezone(input.timezone);
  const schedule = typeof input.schedule === "string" ? input.schedule.trim().replace(/\s+/g, " ") : "";
  parseCron(input.schedule, timezone);
  const args = checkArgsShape(input.args);
  const summary = checkSummary(input.summary);
  const isFlow = input.isFlow === true;
  await checkTarget(ctx, membership, input.scriptPath, isFlow, args);
  const enabled = input.enabled !== false;
  const workspaceId = membership.workspace.id;
  const { principal } = membership;
  return withTransaction(ctx.pool, async (client) => {
    let row: ScheduleRow;
    try {
      const { rows } = await client.query<ScheduleRow>(
        `INSERT INTO schedule (workspace_id, path, schedule, timezone, script_path, is_flow, args, enabled, summary,
           next_run_at, created_by, permissioned_as, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::timestamptz, $11, $12, now(), now())
         RETURNING ${SCHEDULE_COLUMNS}`,
        [
          workspaceId,
          input.path,
          schedule,
          timezone,
          input.scriptPath,
          isFlow,
          JSON.stringify(args),
          enabled,
          summary,
          enabled ? firstTick(schedule, timezone) : null,
          principal.username,
          `u/${principal.username}`,
        ],
      );
      row = rows[0]!;
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new AppError("CONFLICT", `a schedule already exists at ${input.path}`, "path");
      }
      throw error;
    }
    await notifyChanged(client);
    await recordAudit(client, principal, {
      workspaceId,
      operation: "schedule.create",
      resource: input.path,
      parameters: { ...auditParameters(row), enabled },
    });
    return view(row);
  });
}

/**
 * Changes a schedule's cron, time zone, args or summary. The next tick is recomputed from now,
 * and the jobs run as the editor from then on (they chose the args).
 */
export async function updateSchedule(
  ctx: CoreContext,
  membership: Membership,
  path: string,
  input: ScheduleUpdate,
): Promise<ScheduleView> {
  await writable(ctx, membership, path);
  refuseWhenBounded(membership.principal, "change schedules");
  const workspaceId = membership.workspace.id;
  const existing = await loadRow(ctx.pool, workspaceId, path);
  if (!existing) throw notFound(`schedule ${path}`);
  const timezone = checkTimezone(input.timezone);
  const schedule = typeof input.schedule === "string" ? input.schedule.trim().replace(/\s+/g, " ") : "";
  parseCron(input.schedule, timezone);
  const args = checkArgsShape(input.args);
  const summary = input.summary === undefined ? existing.summary : checkSummary(input.summary);
  await checkTarget(ctx, membership, existing.script_path, existing.is_flow, args);
  const { principal } = membership;
  return withTransaction(ctx.pool, async (client) => {
    const { rows } = await client.query<ScheduleRow>(
      `UPDATE schedule SET schedule = $3, timezone = $4, args = $5, summary = $6,
         next_run_at = CASE WHEN enabled THEN $7::timestamptz END, error = NULL, permissioned_as = $8,
         updated_at = now()
       WHERE workspace_id = $1 AND path = $2
       RETURNING ${SCHEDULE_COLUMNS}`,
      [
        workspaceId,
        path,
        schedule,
        timezone,
        JSON.stringify(args),
        summary,
        firstTick(schedule, timezone),
        `u/${principal.username}`,
      ],
    );
    const row = rows[0];
    if (!row) throw notFound(`schedule ${path}`);
    await notifyChanged(client);
    await recordAudit(client, principal, {
      workspaceId,
      operation: "schedule.update",
      resource: path,
      parameters: auditParameters(row),
    });
    return view(row);
  });
}

/**
 * Enables (the next tick counts from now: nothing missed while disabled runs) or disables
 * (pauses) a schedule.
 */
export async function setScheduleEnabled(
  ctx: CoreContext,
  membership: Membership,
  path: string,
  enabled: boolean,
): Promise<ScheduleView> {
  await writable(ctx, membership, path);
  if (typeof enabled !== "boolean") throw invalidInput("enabled", "must be true or false");
  const workspaceId = membership.workspace.id;
  return withTransaction(ctx.pool, async (client) => {
    const existing = await loadRow(client, workspaceId, path, true);
    if (!existing) throw notFound(`schedule ${path}`);
    const next = enabled ? firstTick(existing.schedule, existing.timezone) : null;
    const { rows } = await client.query<ScheduleRow>(
      `UPDATE schedule SET enabled = $3, next_run_at = $4::timestamptz,
         error = CASE WHEN $3 THEN NULL ELSE error END, updated_at = now()
       WHERE workspace_id = $1 AND path = $2
       RETURNING ${SCHEDULE_COLUMNS}`,
      [workspaceId, path, enabled, next],
    );
    await notifyChanged(client);
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: enabled ? "schedule.enable" : "schedule.disable",
      resource: path,
    });
    return view(rows[0]!);
  });
}

/** Deletes a schedule; the jobs it started stay (with their schedule_path). */
export async function deleteSchedule(ctx: CoreContext, membership: Membership, path: string): Promise<void> {
  await writable(ctx, membership, path);
  const workspaceId = membership.workspace.id;
  await withTransaction(ctx.pool, async (client) => {
    const { rowCount } = await client.query("DELETE FROM schedule WHERE workspace_id = $1 AND path = $2", [
      workspaceId,
      path,
    ]);
    if (!rowCount) throw notFound(`schedule ${path}`);
    await notifyChanged(client);
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: "schedule.delete",
      resource: path,
    });
  });
}

export async function getSchedule(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<ScheduleView> {
  await readable(ctx, membership, path);
  const row = await loadRow(ctx.pool, membership.workspace.id, path);
  if (!row) throw notFound(`schedule ${path}`);
  return view(row);
}

/** Whether a schedule exists at `path` that the caller may see. */
export async function scheduleExists(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<boolean> {
  try {
    await getSchedule(ctx, membership, path);
    return true;
  } catch (error) {
    if (error instanceof AppError && error.code === "NOT_FOUND") return false;
    throw error;
  }
}

export interface ListSchedulesInput {
  page?: number;
  perPage?: number;
  /** Only schedules whose own path starts with this. */
  pathStart?: string | null;
  /** Only schedules of this script or flow (Windmill's `path` filter). */
  scriptPath?: string | null;
  isFlow?: boolean | null;
}

export const MAX_SCHEDULES_PER_PAGE = 1000;

/** The schedules the caller may read, by path. */
export async function listSchedules(
  ctx: CoreContext,
  membership: Membership,
  input: ListSchedulesInput = {},
): Promise<ScheduleView[]> {
  requirePermission(membership, "schedule.read");
  const perPage = Math.min(Math.max(input.perPage ?? 100, 1), MAX_SCHEDULES_PER_PAGE);
  const page = Math.max(input.page ?? 1, 1);
  const prefixes = await readablePrefixes(ctx, membership);
  const { rows } = await ctx.pool.query<ScheduleRow>(
    `SELECT ${SCHEDULE_COLUMNS} FROM schedule
      WHERE workspace_id = $1
        AND ($2::text[] IS NULL OR path LIKE ANY($2))
        AND ($3::text IS NULL OR path LIKE $3)
        AND ($4::text IS NULL OR script_path = $4)
        AND ($5::boolean IS NULL OR is_flow = $5)
      ORDER BY path
      LIMIT $6 OFFSET $7`,
    [
      membership.workspace.id,
      prefixes ? prefixes.map((prefix) => `${likePrefix(prefix)}%`) : null,
      input.pathStart ? `${likePrefix(input.pathStart)}%` : null,
      input.scriptPath ?? null,
      input.isFlow ?? null,
      perPage,
      (page - 1) * perPage,
    ],
  );
  return rows.map(view);
}
