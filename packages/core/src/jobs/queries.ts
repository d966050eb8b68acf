import { Prisma, type Job, type JobStatus } from "@millrace/db";
import { canSeeJob, visibleJobsFilter } from "../access.ts";
import { invalidInput, notFound } from "../errors.ts";
import { parsePath } from "../paths.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import type { JobsContext } from "./run.ts";
import { waitUntilFinished } from "./wait.ts";
import { inColumnOrder } from "./result-columns.ts";
import { FINISHED_STATUSES, findInListOrder } from "./list-order.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isJobId(id: string): boolean {
  return UUID.test(id);
}

export type JobWithLogs = Job & { logs: string };

/** A job of the caller's workspace; another workspace's id gives the same NOT_FOUND as no job. */
export async function getJob(ctx: JobsContext, membership: Membership, id: string): Promise<JobWithLogs>;
export async function getJob(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  options: { withLogs: false },
): Promise<Job & { logs?: undefined }>;
export async function getJob(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  options: { withLogs?: boolean },
): Promise<Job & { logs?: string }>;
export async function getJob(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  options: { withLogs?: boolean } = {},
): Promise<Job & { logs?: string }> {
  requirePermission(membership, "job.read");
  if (!UUID.test(id)) throw notFound(`job ${id}`);
  const withLogs = options.withLogs ?? true;
  const job = await ctx.db.job.findFirst({
    where: { id, workspaceId: membership.workspace.id },
    include: { log: withLogs },
  });
  if (!job || !(await canSeeJob(ctx, membership, job))) throw notFound(`job ${id}`);
  const { log, ...stored } = job;
  const rest = { ...stored, result: inColumnOrder(stored.result, stored.resultColumns) };
  return withLogs ? { ...rest, logs: log?.logs ?? "" } : rest;
}

const FINISHED = new Set<string>(FINISHED_STATUSES);

export function isFinished(job: { status: string }): boolean {
  return FINISHED.has(job.status);
}

/**
 * Waits until the job finishes (woken by NOTIFY, with a slow re-read as a safety net) or the
 * timeout passes, then returns it as stored.
 */
export async function waitForJob(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  timeoutMs: number,
): Promise<JobWithLogs> {
  return waitUntilFinished(ctx, id, timeoutMs, async () => {
    const job = await getJob(ctx, membership, id);
    return isFinished(job) ? job : null;
  });
}

/** Windmill's list filter syntax: `a,b` keeps those values, `!a,!b` leaves them out. */
export type ValueFilter = { in: string[] } | { notIn: string[] };

export const JOB_STATUSES = ["queued", "running", "success", "failure", "canceled"] as const;

export interface ListJobsInput {
  /** `queue`: queued and running jobs; `completed`: finished ones; `all` (default): both. */
  scope?: "all" | "queue" | "completed";
  page?: number;
  perPage?: number;
  orderDesc?: boolean;
  scriptPathExact?: ValueFilter;
  scriptPathStart?: ValueFilter;
  createdBy?: ValueFilter;
  tag?: ValueFilter;
  jobKinds?: ValueFilter;
  /** The schedule that started the job (exact paths). */
  schedulePath?: ValueFilter;
  /** true: started by a schedule (any); false: started otherwise. */
  scheduled?: boolean;
  /** What started the job (job.trigger_kind: manual, api, webhook, schedule, job, flow, deploy). */
  triggerKind?: ValueFilter;
  /**
   * Windmill's job labels: the strings of `wm_labels` in the job's result (a script labels its
   * run by returning `{"wm_labels": ["deploy"], …}`), matched exactly.
   */
  label?: ValueFilter;
  /** true: running only; false: anything but running. */
  running?: boolean;
  /** true: succeeded; false: failed or canceled. Either way, finished jobs only. */
  success?: boolean;
  status?: JobStatus;
  /**
   * The steps (child jobs) of this flow job. Without it, `isFlowStep` and `hasNullParent`, the list
   * holds top-level jobs only (flow runs, not their steps), as Windmill's does.
   */
  parentJob?: string;
  /** true: flow steps only (jobs with a parent); false: top-level jobs only. */
  isFlowStep?: boolean;
  /** true: top-level jobs only; false: flow steps only. */
  hasNullParent?: boolean;
  /**
   * Every workspace's jobs, not only the caller's (superadmins only; `wmill queues` asks it
   * through the `admins` workspace).
   */
  allWorkspaces?: boolean;
  /** Inclusive. */
  createdBefore?: Date;
  /** Exclusive. */
  createdAfter?: Date;
}

export const DEFAULT_JOBS_PER_PAGE = 30;
export const MAX_JOBS_PER_PAGE = 1000;

/** The query parameters of Windmill's job lists, with their names as in the REST API. */
export const JOB_LIST_PARAMS = [
  "script_path_exact",
  "script_path_start",
  "created_by",
  "tag",
  "job_kinds",
  "running",
  "success",
  "status",
  "created_before",
  "created_after",
  "order_desc",
  "page",
  "per_page",
  "schedule_path",
  "label",
  "parent_job",
  "is_flow_step",
  "has_null_parent",
  "all_workspaces",
] as const;
export type JobListQuery = Partial<Record<(typeof JOB_LIST_PARAMS)[number], string | null>>;

// Windmill's other job-list filters: refused by name rather than silently ignored (which would
// answer with jobs the caller asked to leave out).
const UNSUPPORTED_JOB_LIST_PARAMS = new Set([
  "allow_wildcards",
  "args",
  "broad_filter",
  "completed_after",
  "completed_before",
  "created_after_queue",
  "created_before_queue",
  "excludes_entrypoint_override",
  "is_not_schedule",
  "is_skipped",
  "resolved",
  "result",
  "scheduled_for_before_now",
  "script_hash",
  "started_after",
  "started_before",
  "suspended",
  "trigger_kind",
  "worker",
]);

/**
 * Refuses a job-list query parameter Millrace does not take, naming it: a filter that is silently
 * ignored answers with the very jobs it was meant to leave out. `ignored` names parameters that
 * are not filters (`token`, the credential some clients pass in the query string).
 */
export function checkJobListParams(names: Iterable<string>, ignored: readonly string[] = ["token"]): void {
  const known = new Set<string>([...JOB_LIST_PARAMS, ...ignored]);
  for (const name of names) {
    if (known.has(name)) continue;
    if (UNSUPPORTED_JOB_LIST_PARAMS.has(name))
      throw invalidInput(name, "this Windmill filter is not supported by Millrace's job lists");
    throw invalidInput(name, `unknown parameter; the job lists take ${JOB_LIST_PARAMS.join(", ")}`);
  }
}

/** At most this many characters per label filter value. */
const MAX_LABEL_CHARS = 255;

// Windmill's job kinds; the ones Millrace has are stored under their own name except these.
const STORED_KIND: Record<string, string> = { dependencies: "dependency" };
const WINDMILL_JOB_KINDS = new Set([
  "script",
  "preview",
  "dependencies",
  "flowdependencies",
  "appdependencies",
  "flow",
  "flowpreview",
  "script_hub",
  "identity",
  "deploymentcallback",
  "singlestepflow",
  "flowscript",
  "flownode",
  "appscript",
  "aiagent",
  "unassigned_script",
  "unassigned_flow",
  "unassigned_singlestepflow",
  "noop",
]);

function valueFilter(name: string, raw: string): ValueFilter {
  const values = raw
    .split(",")
    .map((value) => value.trim())
    .filter(Boolean);
  if (values.length === 0) throw invalidInput(name, "must not be empty");
  const negated = values.filter((value) => value.startsWith("!"));
  if (negated.length === 0) return { in: values };
  if (negated.length < values.length) {
    throw invalidInput(name, "prefix either every value with ! (to leave them out) or none");
  }
  const names = values.map((value) => value.slice(1));
  if (names.some((value) => !value)) throw invalidInput(name, "! must be followed by a value");
  return { notIn: names };
}

function booleanParam(name: string, raw: string): boolean {
  if (raw === "true") return true;
  if (raw === "false") return false;
  throw invalidInput(name, `must be true or false, got "${raw}"`);
}

// RFC 3339 as Windmill takes it; a date alone means midnight UTC, a time without offset is UTC.
const DATE_TIME =
  /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

export function parseDateTime(name: string, raw: string): Date {
  // An unencoded `+` in a query string arrives as a space: `…T10:00:00 02:00`.
  const value = raw.trim().replace(/ (\d{2}:?\d{2})$/, "+$1");
  const match = DATE_TIME.exec(value);
  const date = match ? new Date(match[2] ? (match[3] ? value : `${value}Z`) : `${match[1]}T00:00:00Z`) : null;
  // Date rolls 2025-02-30 over to March; a day the month does not have is refused instead.
  const [year = 0, month = 0, day = 0] = match?.[1]?.split("-").map(Number) ?? [];
  const calendarDay = new Date(Date.UTC(year, month - 1, day));
  if (
    !date ||
    Number.isNaN(date.getTime()) ||
    calendarDay.getUTCMonth() !== month - 1 ||
    calendarDay.getUTCDate() !== day
  ) {
    throw invalidInput(name, `not a valid date-time: "${raw}" (use ISO 8601, e.g. 2025-01-31T12:00:00Z)`);
  }
  return date;
}

function intParam(name: string, raw: string, min: number): number {
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(value)) {
    throw invalidInput(name, `must be a whole number, got "${raw}"`);
  }
  if (value < min) throw invalidInput(name, `must be at least ${min}`);
  return value;
}

/**
 * Parses Windmill's job-list query parameters; a bad value is refused naming its parameter.
 * Empty values count as absent (forms send every field).
 */
export function parseJobListQuery(query: JobListQuery): ListJobsInput {
  const input: ListJobsInput = {};
  const get = (name: (typeof JOB_LIST_PARAMS)[number]) => {
    const value = query[name];
    return value === undefined || value === null || value.trim() === "" ? undefined : value;
  };
  const lists = [
    ["script_path_exact", "scriptPathExact"],
    ["script_path_start", "scriptPathStart"],
    ["created_by", "createdBy"],
    ["tag", "tag"],
    ["job_kinds", "jobKinds"],
    ["schedule_path", "schedulePath"],
    ["label", "label"],
  ] as const;
  for (const [name, key] of lists) {
    const raw = get(name);
    if (raw !== undefined) input[key] = valueFilter(name, raw);
  }
  const kinds = input.jobKinds;
  if (kinds) {
    const values = "in" in kinds ? kinds.in : kinds.notIn;
    const unknown = values.find((kind) => !WINDMILL_JOB_KINDS.has(kind));
    if (unknown) throw invalidInput("job_kinds", `unknown job kind "${unknown}"`);
  }
  const schedules = input.schedulePath;
  if (schedules)
    for (const path of "in" in schedules ? schedules.in : schedules.notIn) parsePath(path, "schedule_path");
  const labels = input.label;
  if (labels) {
    const long = ("in" in labels ? labels.in : labels.notIn).find((label) => label.length > MAX_LABEL_CHARS);
    if (long !== undefined) throw invalidInput("label", `at most ${MAX_LABEL_CHARS} characters per label`);
  }
  const parent = get("parent_job");
  if (parent !== undefined) {
    if (!isJobId(parent.trim())) throw invalidInput("parent_job", `not a job id: "${parent}"`);
    input.parentJob = parent.trim();
  }
  const isFlowStep = get("is_flow_step");
  if (isFlowStep !== undefined) input.isFlowStep = booleanParam("is_flow_step", isFlowStep);
  const hasNullParent = get("has_null_parent");
  if (hasNullParent !== undefined) input.hasNullParent = booleanParam("has_null_parent", hasNullParent);
  const running = get("running");
  if (running !== undefined) input.running = booleanParam("running", running);
  const success = get("success");
  if (success !== undefined) input.success = booleanParam("success", success);
  const allWorkspaces = get("all_workspaces");
  if (allWorkspaces !== undefined) input.allWorkspaces = booleanParam("all_workspaces", allWorkspaces);
  const orderDesc = get("order_desc");
  if (orderDesc !== undefined) input.orderDesc = booleanParam("order_desc", orderDesc);
  const status = get("status");
  if (status !== undefined) {
    if (!(JOB_STATUSES as readonly string[]).includes(status)) {
      throw invalidInput("status", `must be one of ${JOB_STATUSES.join(", ")}, got "${status}"`);
    }
    input.status = status as JobStatus;
  }
  const before = get("created_before");
  if (before !== undefined) input.createdBefore = parseDateTime("created_before", before);
  const after = get("created_after");
  if (after !== undefined) input.createdAfter = parseDateTime("created_after", after);
  if (input.createdBefore && input.createdAfter && input.createdAfter >= input.createdBefore) {
    throw invalidInput("created_after", "must be earlier than created_before");
  }
  const page = get("page");
  if (page !== undefined) input.page = intParam("page", page, 1);
  const perPage = get("per_page");
  if (perPage !== undefined) input.perPage = intParam("per_page", perPage, 1);
  return input;
}

function columnFilter(
  column: "scriptPath" | "createdBy" | "tag" | "kind" | "schedulePath" | "triggerKind",
  filter: ValueFilter,
  nullable: boolean,
): Prisma.JobWhereInput {
  if ("in" in filter) return { [column]: { in: filter.in } };
  // NOT IN never matches NULL; a job without a path is "not one of these paths" too.
  const excluded: Prisma.JobWhereInput = { [column]: { notIn: filter.notIn } };
  return nullable ? { OR: [{ [column]: null }, excluded] } : excluded;
}

// Prisma passes startsWith to LIKE as is: `_` and `%` in a path must not act as wildcards.
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

function prefixFilter(filter: ValueFilter): Prisma.JobWhereInput {
  const starts = (prefix: string) => ({ scriptPath: { startsWith: likeLiteral(prefix) } });
  if ("in" in filter) return { OR: filter.in.map(starts) };
  return { OR: [{ scriptPath: null }, { AND: filter.notIn.map((prefix) => ({ NOT: starts(prefix) })) }] };
}

/**
 * Jobs labelled (or, negated, labelled none of) the filter's labels. A job is labelled `x` when
 * its result is an object whose `wm_labels` array holds the string `x`. A job without
 * `wm_labels` (no result, a result that is no object, no such key, or null) has no label, so a
 * negated filter keeps it; a `wm_labels` that is not an array is malformed, and its job matches no
 * label filter, negated or not (Prisma's JSON filters cannot tell it apart otherwise).
 */
function labelFilter(filter: ValueFilter): Prisma.JobWhereInput {
  const labelled = (label: string): Prisma.JobWhereInput => ({
    result: { path: ["wm_labels"], array_contains: [label] },
  });
  if ("in" in filter) return { OR: filter.in.map(labelled) };
  return {
    OR: [
      { result: { path: ["wm_labels"], equals: Prisma.AnyNull } },
      // Prisma negates a JSON array filter as "an array without it".
      { NOT: filter.notIn.map(labelled) },
    ],
  };
}

/** The jobs of the caller's workspace matching Windmill's list filters, newest first. */
export async function listJobs(
  ctx: JobsContext,
  membership: Membership,
  input: ListJobsInput = {},
): Promise<Job[]> {
  requirePermission(membership, "job.read");
  const perPage = Math.min(input.perPage ?? DEFAULT_JOBS_PER_PAGE, MAX_JOBS_PER_PAGE);
  const page = input.page ?? 1;
  if (!Number.isInteger(page) || page < 1) throw invalidInput("page", "must be at least 1");
  if (!Number.isInteger(perPage) || perPage < 1) throw invalidInput("per_page", "must be at least 1");
  const and: Prisma.JobWhereInput[] = [];
  if (input.allWorkspaces) {
    // Not a superadmin's job token either: a job's credentials stay inside its own workspace.
    if (!membership.principal.isSuperAdmin || membership.principal.workspaceScope) {
      throw invalidInput("all_workspaces", "only superadmins may list every workspace's jobs");
    }
  } else {
    and.push({ workspaceId: membership.workspace.id });
    const visible = await visibleJobsFilter(ctx, membership);
    if (visible) and.push(visible);
  }
  // The statuses the filters leave: each group of them is read from its own index (list-order.ts).
  const statuses = new Set<JobStatus>(JOB_STATUSES);
  const keep = (allowed: readonly JobStatus[]) => {
    for (const status of statuses) if (!allowed.includes(status)) statuses.delete(status);
  };
  if (input.scope === "queue") keep(["queued", "running"]);
  if (input.scope === "completed") keep(FINISHED_STATUSES);
  if (input.running !== undefined) keep(input.running ? ["running"] : ["queued", ...FINISHED_STATUSES]);
  if (input.success !== undefined) keep(input.success ? ["success"] : ["failure", "canceled"]);
  if (input.status) keep([input.status]);
  if (input.scriptPathExact) and.push(columnFilter("scriptPath", input.scriptPathExact, true));
  if (input.scriptPathStart) and.push(prefixFilter(input.scriptPathStart));
  if (input.createdBy) and.push(columnFilter("createdBy", input.createdBy, false));
  if (input.tag) and.push(columnFilter("tag", input.tag, false));
  if (input.jobKinds) {
    const stored = (kinds: string[]) => kinds.map((kind) => STORED_KIND[kind] ?? kind);
    const kinds = input.jobKinds;
    and.push(
      columnFilter("kind", "in" in kinds ? { in: stored(kinds.in) } : { notIn: stored(kinds.notIn) }, false),
    );
  }
  if (input.schedulePath) and.push(columnFilter("schedulePath", input.schedulePath, true));
  if (input.scheduled !== undefined) and.push({ schedulePath: input.scheduled ? { not: null } : null });
  if (input.triggerKind) and.push(columnFilter("triggerKind", input.triggerKind, false));
  if (input.label) and.push(labelFilter(input.label));
  if (input.parentJob !== undefined) and.push({ parentJobId: input.parentJob });
  if (input.isFlowStep !== undefined)
    and.push(input.isFlowStep ? { parentJobId: { not: null } } : { parentJobId: null });
  if (input.hasNullParent !== undefined)
    and.push(input.hasNullParent ? { parentJobId: null } : { parentJobId: { not: null } });
  // Flow steps are reached through their flow run (parent_job) or asked for by name.
  if (input.parentJob === undefined && input.isFlowStep === undefined && input.hasNullParent === undefined)
    and.push({ parentJobId: null });
  if (input.createdBefore) and.push({ createdAt: { lte: input.createdBefore } });
  if (input.createdAfter) and.push({ createdAt: { gt: input.createdAfter } });
  const direction = input.orderDesc === false ? "asc" : "desc";
  return findInListOrder(
    ctx.pool,
    input.allWorkspaces ? null : membership.workspace.id,
    statuses,
    direction,
    { skip: (page - 1) * perPage, take: perPage },
    (group, range) =>
      ctx.db.job.findMany({
        where: { AND: [...and, group] },
        orderBy: [{ createdAt: direction }, { id: direction }],
        ...range,
      }),
  );
}
