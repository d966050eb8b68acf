// Flow jobs. A flow run is a job row (kind `flow`, or `flowpreview`) that no worker claims: it
// has no pg-boss dispatch and is `running` from the start, with no worker name. Its steps are
// ordinary jobs (parent_job_id = the flow job) on their own tags. The transaction that starts
// the flow enqueues its first step; the transaction that records a step's completion
// (jobs/complete.ts, jobs/cancel.ts) calls advanceFlows, which locks the flow job, records the
// step and enqueues the next one or completes the flow. So a flow is never between two steps
// after a crash: either the step's completion and the next step committed, or neither did.
import {
  isTransientDatabaseError,
  prepared,
  withTransaction,
  type Pool,
  type PoolClient,
} from "@millrace/db";
import { auditRow } from "../../audit/index.ts";
import type { Principal } from "../../auth/principal.ts";
import { AppError, invalidInput, notFound } from "../../errors.ts";
import type { Boss } from "../../jobs/boss.ts";
import { enqueueJobs, markHandOvers, triggerKind, type EnqueueInput } from "../../jobs/enqueue.ts";
import { JOB_CANCEL_CHANNEL, JOB_DONE_CHANNEL, NOTIFY_OUTCOMES } from "../../jobs/events.ts";
import { waitUntilFinished, type FinishedJob } from "../../jobs/wait.ts";
import { storableJson } from "../../jobs/storable.ts";
import { inColumnOrder, resultColumnsOf } from "../../jobs/result-columns.ts";
import { resolveTag, tagForRunnable } from "../../jobs/tags.ts";
import { jobBounds, MAX_ARGS_BYTES, type JobsContext, type RunOptions } from "../../jobs/run.ts";
import { ArgsError, validateArgs, type ArgSchema } from "@millrace/runtime";
import { requirePermission } from "../../permissions.ts";
import type { Membership } from "../../membership.ts";
import type { FlowValue } from "../format.ts";
import { checkFlow, getFlow, readFlow } from "../store.ts";
import { normalizeFlowValue } from "../normalize.ts";
import { resolveConcurrencyKey } from "../../jobs/limits.ts";
import {
  FlowMachine,
  initialState,
  type Action,
  type ChildFlowRequest,
  type DeployedFlow,
  type DeployedScript,
  type FlowState,
  type Outcome,
  type ResumeEvent,
  type StepJobRequest,
  type TriggerEvent,
} from "./machine.ts";
import { newJobId } from "../../jobs/job-id.ts";

export const FLOW_JOB_KINDS = ["flow", "flowpreview"] as const;

export interface FlowJobRow {
  id: string;
  workspace_id: string;
  kind: string;
  status: string;
  args: Record<string, unknown>;
  raw_flow: FlowValue;
  flow_status: FlowState;
  created_by: string;
  permissioned_as: string;
  bounded_by: string[];
  priority: number;
  timeout_secs: number | null;
  root_job_id: string | null;
  parent_job_id: string | null;
  script_path: string | null;
}

export const FLOW_JOB_COLUMNS = `id, workspace_id, kind, status, args, raw_flow, flow_status, created_by, permissioned_as,
  bounded_by, priority, timeout_secs, root_job_id, parent_job_id, script_path`;

async function lookUpScript(client: PoolClient, workspaceId: string, path: string, hash: string | undefined) {
  const columns = `path, hash, language, content, tag, retry, priority, timeout_secs, memory_limit_mb, created_by,
    schema, concurrent_limit, concurrency_key, concurrency_time_window_s`;
  const { rows } = await client.query(
    hash
      ? `SELECT ${columns} FROM script WHERE workspace_id = $1 AND path = $2 AND hash = $3`
      : `SELECT ${columns} FROM script WHERE workspace_id = $1 AND path = $2 AND NOT archived
          ORDER BY created_at DESC LIMIT 1`,
    hash ? [workspaceId, path, hash] : [workspaceId, path],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    path: row.path,
    hash: row.hash,
    language: row.language,
    content: row.content,
    tag: row.tag,
    retry: row.retry,
    priority: row.priority,
    timeoutSecs: row.timeout_secs,
    memoryLimitMb: row.memory_limit_mb,
    createdBy: row.created_by,
    schema: row.schema,
    concurrentLimit: row.concurrent_limit,
    concurrencyKey: row.concurrency_key,
    concurrencyTimeWindowS: row.concurrency_time_window_s,
  } satisfies DeployedScript;
}

/** The approval events recorded for a step job, oldest first. */
export async function resumeEvents(client: PoolClient, jobId: string): Promise<ResumeEvent[]> {
  const { rows } = await client.query<{ approver: string; value: unknown; is_cancel: boolean }>(
    "SELECT approver, value, is_cancel FROM flow_resume WHERE job_id = $1 ORDER BY id",
    [jobId],
  );
  return rows.map((row) => ({ approver: row.approver, value: row.value, cancel: row.is_cancel }));
}

async function lookUpFlow(
  client: PoolClient,
  workspaceId: string,
  path: string,
): Promise<DeployedFlow | null> {
  const flow = await readFlow(client, workspaceId, path);
  if (!flow || flow.archived) return null;
  return {
    path: flow.path,
    versionId: flow.version_id,
    // Stored as sent: read as Windmill reads it (normalize.ts).
    value: normalizeFlowValue(flow.value),
    schema: (flow.schema as Record<string, unknown> | null) ?? null,
  };
}

/** The job a step request becomes (a step job of `flow`, on its own tag). */
function stepJobInput(flow: FlowJobRow, step: StepJobRequest): EnqueueInput {
  const tag = resolveTag(
    tagForRunnable(step.tag, step.language),
    flow.workspace_id,
    step.args,
    `${step.stepId}.tag`,
  );
  const concurrency = step.concurrency
    ? {
        key: resolveConcurrencyKey(
          step.concurrency.key ?? `${flow.script_path ?? flow.root_job_id ?? flow.id}/${step.stepId}`,
          flow.workspace_id,
          step.args,
        ),
        limit: step.concurrency.limit,
        windowSecs: step.concurrency.windowSecs,
      }
    : null;
  return {
    workspaceId: flow.workspace_id,
    kind: step.kind,
    scriptPath: step.scriptPath ?? flow.script_path,
    scriptHash: step.scriptHash,
    language: step.language,
    content: step.content,
    args: step.args,
    argOrder: step.argOrder,
    tag,
    // Windmill: a step runs at its own priority if it has one, else at its flow's.
    priority: step.priority ?? flow.priority,
    scheduledFor: step.scheduledFor,
    createdBy: flow.created_by,
    permissionedAs: flow.permissioned_as,
    boundedBy: [
      ...new Set([
        ...flow.bounded_by,
        ...(step.author && step.author !== flow.created_by ? [step.author] : []),
      ]),
    ].sort(),
    timeoutSecs: Math.min(step.timeoutSecs ?? flow.timeout_secs ?? 300, flow.timeout_secs ?? 3600),
    memoryLimitMb: step.memoryLimitMb,
    concurrency,
    retry: step.retry,
    ...(step.lock !== undefined ? { lock: step.lock } : {}),
    parentJobId: flow.id,
    rootJobId: flow.root_job_id ?? flow.id,
    flowStepId: step.stepId,
  };
}

/**
 * Writes a child flow job (a parallel iteration or branch, or a sub-flow) under `parent` and
 * starts it, in `client`'s transaction. Its outcome when it finished at once (no step needed a
 * job): the parent takes it itself, as the child's finish does not advance it (the parent's
 * machine is the one running here).
 *
 * Its row is written once its first step is enqueued, with the state that records it (see
 * apply's `unwritten`): an insert followed by an update of its state cost a round trip more on
 * every parallel iteration's start. Nothing reads the row before (its steps name it as their
 * parent, which no constraint checks), and it is built here as the insert would return it.
 */
async function startChildFlow(
  client: PoolClient,
  boss: Boss,
  parent: FlowJobRow,
  request: ChildFlowRequest,
  scheduledFor: Date | null,
): Promise<{ id: string; outcome: Outcome | null }> {
  const id = newJobId();
  const args = storableJson(request.args);
  const rawFlow = JSON.stringify(request.value);
  const child: FlowJobRow = {
    id,
    workspace_id: parent.workspace_id,
    kind: parent.kind,
    status: "running",
    // As jsonb gives them back, what a read of the row gave the machine: copies that share no
    // object with the parent's state.
    args: JSON.parse(args) as Record<string, unknown>,
    raw_flow: JSON.parse(rawFlow) as FlowValue,
    flow_status: JSON.parse(
      JSON.stringify(initialState(request.value, request.args, request.seed, scheduledFor)),
    ) as FlowState,
    created_by: parent.created_by,
    permissioned_as: parent.permissioned_as,
    bounded_by: parent.bounded_by,
    priority: request.priority ?? request.value.priority ?? parent.priority,
    timeout_secs: parent.timeout_secs,
    root_job_id: parent.root_job_id ?? parent.id,
    parent_job_id: parent.id,
    script_path: request.path ?? parent.script_path,
  };
  const insert = async (state: FlowState) => {
    await client.query(
      prepared(
        `INSERT INTO job (id, workspace_id, kind, script_path, script_hash, language, content, args, tag, priority,
           status, created_by, permissioned_as, bounded_by, started_at, timeout_secs, raw_flow, flow_status,
           trigger_kind, parent_job_id, root_job_id, flow_step_id)
         VALUES ($1, $2, $3, $4, $5, 'flow', NULL, $6, 'flow', $7, 'running', $8, $9, $10, now(), $11, $12, $13,
           'flow', $14, $15, $16)`,
        [
          id,
          child.workspace_id,
          child.kind,
          child.script_path,
          request.versionId === null ? null : String(request.versionId),
          args,
          child.priority,
          child.created_by,
          child.permissioned_as,
          child.bounded_by,
          child.timeout_secs,
          rawFlow,
          JSON.stringify(state),
          parent.id,
          child.root_job_id,
          request.stepId,
        ],
      ),
    );
  };
  const machine = machineFor(client, child);
  const outcome = await apply(client, boss, child, machine, await machine.start(), false, insert);
  return { id, outcome };
}

/**
 * Carries out the machine's action in `client`'s transaction: enqueues the step job, starts
 * child flow jobs (taking at once the outcome of those that need no job, which may lead to more
 * actions), or completes the flow job; then saves flow_status. The flow's outcome when it
 * finished. `notifyParent`: a finished child flow advances its parent (false while the parent
 * itself is starting it).
 */
export async function apply(
  client: PoolClient,
  boss: Boss,
  flow: FlowJobRow,
  machine: FlowMachine,
  first: Action,
  notifyParent = true,
  unwritten: ((state: FlowState) => Promise<void>) | null = null,
): Promise<Outcome | null> {
  const ready: { id: string; outcome: Outcome }[] = [];
  let action: Action | null = first;
  // A child flow's row not written yet (startChildFlow): written before anything updates it.
  const write = async () => {
    const insert = unwritten;
    unwritten = null;
    await insert?.(machine.state);
  };
  for (;;) {
    if (machine.cancelJobs.length > 0) {
      const ids = machine.cancelJobs.splice(0);
      for (const child of ids) {
        await cancelFlowJob(client, boss, child, "millrace", "a parallel iteration (branch) failed", false);
      }
    }
    if (action?.kind === "finish") {
      await write();
      await finish(client, boss, flow, machine.state, action.outcome, notifyParent);
      return action.outcome;
    }
    if (action?.kind === "enqueue") {
      const step = action.job;
      try {
        const [id] = await enqueueJobs(client as unknown as Pool, boss, [stepJobInput(flow, step)], {
          transaction: client,
        });
        machine.waitFor(id!, step.stepId);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        // The step cannot be enqueued (its tag, say): the flow fails at that step.
        const outcome = {
          status: "failure" as const,
          result: { error: { name: "StepError", message: error.message, step_id: step.stepId } },
        };
        await write();
        await finish(client, boss, flow, machine.state, outcome, notifyParent);
        return outcome;
      }
    } else if (action?.kind === "spawn") {
      for (const request of action.flows) {
        const child = await startChildFlow(client, boss, flow, request, action.scheduledFor);
        machine.childStarted(child.id, request.index);
        if (child.outcome) ready.push({ id: child.id, outcome: child.outcome });
      }
    }
    const next = ready.shift();
    if (!next) break;
    action = await machine.stepDone(next.id, next.outcome);
  }
  if (unwritten) await write();
  else {
    await client.query(
      prepared("UPDATE job SET flow_status = $2 WHERE id = $1", [flow.id, JSON.stringify(machine.state)]),
    );
  }
  // run_wait_result answers the early_return step's result: its waiters re-read the flow job.
  if (machine.earlyReturned) await client.query("SELECT pg_notify($1, $2)", [JOB_DONE_CHANNEL, flow.id]);
  return null;
}

async function finish(
  client: PoolClient,
  boss: Boss,
  flow: Pick<FlowJobRow, "id" | "parent_job_id">,
  state: FlowState,
  outcome: { status: string; result: unknown },
  notifyParent = true,
): Promise<void> {
  const { rows } = await client.query<EndedStep & { concurrency_key: string | null }>(
    prepared(
      `WITH done AS (
         UPDATE job SET status = $2::job_status, result = $3::jsonb, flow_status = $4, completed_at = now(),
                result_columns = $6::text[]
          WHERE id = $1 AND status IS NOT DISTINCT FROM 'running'
          RETURNING id, parent_job_id, status, result, result_columns, concurrency_key),
       notified AS (${NOTIFY_OUTCOMES("done", "$5")})
       SELECT id, parent_job_id, status, result, result_columns, concurrency_key FROM done, (SELECT count(*) FROM notified) AS n`,
      [
        flow.id,
        outcome.status,
        storableJson(outcome.result),
        JSON.stringify(state),
        JOB_DONE_CHANNEL,
        resultColumnsOf(outcome.result),
      ],
    ),
  );
  if (rows.length === 0) return;
  // A child flow (parallel iteration or branch, sub-flow): its parent moves on in this transaction,
  // from the row as this statement stored it (a read of it back cost a round trip per child).
  if (flow.parent_job_id && notifyParent) {
    const { id, parent_job_id, status, result, result_columns } = rows[0]!;
    await advanceFlows(client, boss, {
      steps: [{ id, parent_job_id, status, result, result_columns }],
      lockedFlows: new Map(),
    });
  }
  // A run of a flow with a concurrency limit: the next waiting run of its key may start.
  if (rows[0]!.concurrency_key) await startQueuedFlows(client, boss, rows[0]!.concurrency_key);
}

export function machineFor(client: PoolClient, flow: FlowJobRow): FlowMachine {
  return new FlowMachine(flow.flow_status, flow.raw_flow, flow.args ?? {}, {
    lookUpScript: (path, hash) => lookUpScript(client, flow.workspace_id, path, hash),
    lookUpFlow: (path) => lookUpFlow(client, flow.workspace_id, path),
    resumeEvents: (jobId) => resumeEvents(client, jobId),
    flowJobId: flow.id,
  });
}

async function readEndedSteps(client: PoolClient, jobIds: string[]): Promise<EndedStep[]> {
  if (jobIds.length === 0) return [];
  const { rows } = await client.query<EndedStep>(
    prepared(
      `SELECT id, parent_job_id, status, result, result_columns FROM job
        WHERE id = ANY($1::uuid[]) AND parent_job_id IS NOT NULL AND status IN ('success', 'failure', 'canceled')
        ORDER BY parent_job_id`,
      [jobIds],
    ),
  );
  return rows;
}

/** A step job that just ended, as its completion stored it. */
export interface EndedStep {
  id: string;
  parent_job_id: string | null;
  status: string;
  result: unknown;
  /** The key order of a table result (jsonb sorted its keys): see result-columns.ts. */
  result_columns: string[] | null;
}

/**
 * What a completion already holds (completeJobs): the ended steps' rows as its statement wrote
 * them, and their flows' rows as it read them under their lock. Each spares a statement per step.
 */
export interface EndedSteps {
  steps: EndedStep[];
  lockedFlows: ReadonlyMap<string, FlowJobRow>;
}

const FINAL_STATUSES = new Set(["success", "failure", "canceled"]);

/**
 * Moves the flows whose step jobs just ended (`ended`: their ids, or their rows, in the caller's
 * transaction, after their outcomes were written): each flow job is locked, the step recorded,
 * the next step enqueued or the flow completed. Jobs that are no flow step, or that the flow no
 * longer waits for (the flow was canceled), change nothing.
 */
export async function advanceFlows(
  client: PoolClient,
  boss: Boss,
  ended: string[] | EndedSteps,
): Promise<void> {
  const known = Array.isArray(ended) ? null : ended;
  const steps = known
    ? known.steps
        .filter((step) => step.parent_job_id !== null && FINAL_STATUSES.has(step.status))
        .sort((a, b) =>
          a.parent_job_id! < b.parent_job_id! ? -1 : a.parent_job_id! > b.parent_job_id! ? 1 : 0,
        )
    : await readEndedSteps(client, ended as string[]);
  // The caller's rows, read under their lock, are current only until a step's advance writes (its
  // flow, or a parent flow it completes): only the first step may use them.
  let unchanged = known?.lockedFlows;
  for (const step of steps) {
    const flow =
      unchanged?.get(step.parent_job_id!) ??
      (
        await client.query<FlowJobRow>(
          prepared(
            `SELECT ${FLOW_JOB_COLUMNS} FROM job WHERE id = $1 AND kind IN ('flow', 'flowpreview') FOR UPDATE`,
            [step.parent_job_id],
          ),
        )
      ).rows[0];
    unchanged = undefined;
    if (!flow || flow.status !== "running" || !flow.flow_status) continue;
    // A fault of the engine itself must not make the step's completion unrecordable (its worker
    // would retry it forever): the flow fails instead, saying why.
    await client.query("SAVEPOINT advance_flow");
    const undoHandOvers = markHandOvers(client);
    try {
      const machine = machineFor(client, flow);
      // The next step's `results.x` and the flow's own result see the rows' keys as written.
      const action = await machine.stepDone(step.id, {
        ...step,
        result: inColumnOrder(step.result, step.result_columns),
      });
      if (action) await apply(client, boss, flow, machine, action);
      await client.query("RELEASE SAVEPOINT advance_flow");
    } catch (error) {
      await client.query("ROLLBACK TO SAVEPOINT advance_flow");
      undoHandOvers();
      if (isTransientDatabaseError(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      await finish(client, boss, flow, flow.flow_status, {
        status: "failure",
        result: { error: { name: "FlowEngineError", message } },
      });
    }
  }
}

export interface StartFlowInput {
  kind: "flow" | "flowpreview";
  path: string | null;
  versionId: number | null;
  value: FlowValue;
  /** The flow's input schema: the arguments are checked against it. */
  schema?: Record<string, unknown> | null;
  args: unknown;
  audit: { operation: string; parameters?: Record<string, unknown> };
  /** The run's flow_status when it does not start at the first step (a restart, restart.ts). */
  state?: FlowState;
  /** A trigger's event (REST/webhook run): the flow's preprocessor_module runs first, on it. */
  event?: TriggerEvent | null;
}

function checkedFlowArgs(
  args: unknown,
  schema: Record<string, unknown> | null = null,
): Record<string, unknown> {
  if (args === null || args === undefined) args = {};
  if (typeof args !== "object" || Array.isArray(args)) throw invalidInput("args", "must be a JSON object");
  if (JSON.stringify(args).length > MAX_ARGS_BYTES) {
    throw invalidInput("args", `larger than ${MAX_ARGS_BYTES / 1024 / 1024} MB`);
  }
  const given = args as Record<string, unknown>;
  if (!schema || typeof schema.properties !== "object" || schema.properties === null) return given;
  // The flow's input schema (required arguments, types, defaults), as a script's: the arguments it
  // does not describe pass through (Windmill's flows read whatever flow_input holds).
  try {
    return { ...given, ...validateArgs(schema as unknown as ArgSchema, given) };
  } catch (error) {
    if (error instanceof ArgsError) throw invalidInput(`args.${error.field}`, error.message);
    throw error;
  }
}

/** A flow's own concurrency limit (concurrent_limit, concurrency_key, concurrency_time_window_s). */
function flowConcurrency(
  value: FlowValue,
  path: string | null,
  workspaceId: string,
  args: Record<string, unknown>,
): { key: string; limit: number; windowSecs: number } | null {
  if (!value.concurrent_limit) return null;
  return {
    key: resolveConcurrencyKey(value.concurrency_key ?? `f/${path ?? "preview"}`, workspaceId, args),
    limit: value.concurrent_limit,
    windowSecs: value.concurrency_time_window_s ?? 0,
  };
}

/**
 * Whether one more flow run of `key` may start now: fewer than `limit` are running, and (with a
 * time window) fewer than `limit` started within it. Serialized per key by an advisory lock held
 * to the end of the caller's transaction.
 */
async function concurrencyAllows(
  client: PoolClient,
  concurrency: { key: string; limit: number; windowSecs: number },
): Promise<boolean> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext('millrace-flow-concurrency'), hashtext($1))", [
    concurrency.key,
  ]);
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM job
      WHERE concurrency_key = $1 AND kind IN ('flow', 'flowpreview') AND parent_job_id IS NULL
        AND (status = 'running' OR (started_at > now() - make_interval(secs => $2) AND status <> 'queued'))`,
    [concurrency.key, concurrency.windowSecs],
  );
  return rows[0]!.n < concurrency.limit;
}

/**
 * Starts the oldest flow runs of `key` waiting for their concurrency limit, as many as it now
 * allows: when a run of that key finishes, and from the sweeper (a time window passing).
 */
async function startQueuedFlows(client: PoolClient, boss: Boss, key: string): Promise<string[]> {
  const started: string[] = [];
  for (;;) {
    const { rows } = await client.query<FlowJobRow & { concurrent_limit: number; window: number }>(
      `SELECT ${FLOW_JOB_COLUMNS}, concurrent_limit, COALESCE(concurrency_time_window_s, 0) AS window FROM job
        WHERE concurrency_key = $1 AND status = 'queued' AND kind IN ('flow', 'flowpreview')
        ORDER BY priority DESC, created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [key],
    );
    const flow = rows[0];
    if (!flow) return started;
    if (!(await concurrencyAllows(client, { key, limit: flow.concurrent_limit, windowSecs: flow.window }))) {
      return started;
    }
    await client.query("UPDATE job SET status = 'running', started_at = now() WHERE id = $1", [flow.id]);
    const machine = machineFor(client, { ...flow, status: "running" });
    await apply(client, boss, flow, machine, await machine.start());
    started.push(flow.id);
  }
}

/** Starts the flow runs waiting for a concurrency limit that now allows them (the sweeper's part). */
export async function startDueQueuedFlows(pool: Pool, boss: Boss): Promise<string[]> {
  const { rows } = await pool.query<{ key: string }>(
    `SELECT DISTINCT concurrency_key AS key FROM job
      WHERE status = 'queued' AND kind IN ('flow', 'flowpreview') AND concurrency_key IS NOT NULL LIMIT 100`,
  );
  const started: string[] = [];
  for (const { key } of rows) {
    started.push(...(await withTransaction(pool, (client) => startQueuedFlows(client, boss, key))));
  }
  return started;
}

/**
 * Writes the flow job and its first step (or its outcome, when no step needs a job) together: in
 * `transaction` when given (a schedule's tick, so the run commits with the tick), else in one of
 * its own.
 */
export async function startFlow(
  ctx: JobsContext,
  membership: Membership,
  input: StartFlowInput,
  transaction?: PoolClient,
  awaited = false,
): Promise<string> {
  // Deployed flows are stored as sent: they run as Windmill reads them (normalize.ts).
  const value = normalizeFlowValue(input.value);
  // With a preprocessor, the request's body is the trigger's, not yet the flow's arguments.
  const event = input.event && value.preprocessor_module && !input.state ? input.event : null;
  const args = checkedFlowArgs(input.args, event ? null : (input.schema ?? null));
  const principal: Principal = membership.principal;
  const workspaceId = membership.workspace.id;
  const id = newJobId();
  const timeout = Math.min(ctx.limits.defaultTimeoutSecs, ctx.limits.maxTimeoutSecs);
  const state = input.state ?? initialState(value, args, null, null, event);
  const concurrency = flowConcurrency(value, input.path, workspaceId, args);
  const write = async (client: PoolClient) => {
    // Over its concurrency limit, the run waits `queued` (no step starts) until a run of the same
    // key finishes (finish → startQueuedFlows) or its time window passes (the sweeper).
    const runNow = concurrency === null || (await concurrencyAllows(client, concurrency));
    const audit = auditRow(principal, {
      workspaceId,
      operation: input.audit.operation,
      resource: input.path,
      parameters: { job_id: id, ...input.audit.parameters },
    });
    // The run, its audit entry and (awaited, see RunOptions.awaited) the asynchronous commit in
    // one statement: a round trip each cost ~0.5–2 ms on a flow's path here.
    const { rows } = await client.query<FlowJobRow>(
      prepared(
        `WITH inserted AS (
         INSERT INTO job (id, workspace_id, kind, script_path, script_hash, language, content, args, tag, priority,
           status, created_by, permissioned_as, bounded_by, started_at, timeout_secs, raw_flow, flow_status, trigger_kind,
           concurrency_key, concurrent_limit, concurrency_time_window_s)
         VALUES ($1, $2, $3, $4, $5, 'flow', NULL, $6, 'flow', $7, $15::job_status, $8, $9, $10,
           CASE WHEN $15 = 'running' THEN now() END, $11, $12, $13, $14, $16, $17, $18)
         RETURNING ${FLOW_JOB_COLUMNS}
       ), audited AS (
         INSERT INTO audit_log (workspace_id, actor, operation, resource, parameters, ip, at)
         VALUES ($19, $20, $21, $22, $23, $24, now() AT TIME ZONE 'UTC'))
       SELECT * FROM inserted
        WHERE CASE WHEN $25::boolean THEN set_config('synchronous_commit', 'off', true) = 'off' ELSE true END`,
        [
          id,
          workspaceId,
          input.kind,
          input.path,
          input.versionId === null ? null : String(input.versionId),
          storableJson(args),
          value.priority ?? 0,
          principal.username,
          `u/${principal.username}`,
          jobBounds(principal, null),
          timeout,
          JSON.stringify(value),
          JSON.stringify(state),
          triggerKind({ kind: input.kind, audit: { actor: principal } } as unknown as EnqueueInput),
          runNow ? "running" : "queued",
          concurrency?.key ?? null,
          concurrency?.limit ?? null,
          concurrency?.windowSecs ?? null,
          audit.workspace_id,
          audit.actor,
          audit.operation,
          audit.resource,
          audit.parameters === null ? null : JSON.stringify(audit.parameters),
          audit.ip,
          awaited,
        ],
      ),
    );
    const flow = rows[0]!;
    if (!runNow) return;
    const machine = machineFor(client, flow);
    await apply(client, ctx.boss, flow, machine, await machine.start());
  };
  if (transaction) await write(transaction);
  else await withTransaction(ctx.pool, write);
  return id;
}

/**
 * Runs the flow deployed at `path` (Windmill's jobs/run/f/{path}). With `transaction`, the flow
 * job is written in the caller's transaction and commits (or rolls back) with it.
 */
export async function runFlowByPath(
  ctx: JobsContext,
  membership: Membership,
  path: string,
  args: unknown,
  options: Pick<RunOptions, "transaction" | "awaited"> & { event?: TriggerEvent | null } = {},
): Promise<string> {
  requirePermission(membership, "job.run");
  const { principal } = membership;
  if (principal.pathScope && principal.pathScope !== path) {
    throw new AppError("FORBIDDEN", `this token may only run ${principal.pathScope}`);
  }
  const flow = await getFlow(ctx, membership, path);
  if (flow.archived) throw notFound(`flow ${path}`);
  return startFlow(
    ctx,
    membership,
    {
      kind: "flow",
      path: flow.path,
      versionId: flow.version_id,
      value: flow.value,
      schema: (flow.schema as Record<string, unknown> | null) ?? null,
      args,
      audit: { operation: "jobs.run.flow", parameters: { version_id: flow.version_id } },
      event: options.event ?? null,
    },
    options.transaction,
    options.awaited,
  );
}

/** Runs a flow that is not deployed (Windmill's jobs/run/preview_flow): validated first. */
export async function runFlowPreview(
  ctx: JobsContext,
  membership: Membership,
  input: { value: unknown; args: unknown; path?: string | null },
): Promise<string> {
  requirePermission(membership, "job.preview");
  const { flow } = await checkFlow(ctx, membership.workspace.id, { summary: "", value: input.value });
  return startFlow(ctx, membership, {
    kind: "flowpreview",
    path: input.path ?? null,
    versionId: null,
    value: flow.value,
    args: input.args,
    audit: { operation: "jobs.run.preview_flow" },
  });
}

/**
 * Cancels a running flow job and every unfinished job under it (child flows and their steps,
 * found through parent_job_id), in the caller's transaction: queued steps and child flow jobs end
 * at once, running steps are told to stop (their worker records them canceled, and since their
 * flow is over by then, nothing follows them). `notifyParent`: a canceled child flow advances its
 * parent (not when the parent is the one canceling it).
 */
export async function cancelFlowJob(
  client: PoolClient,
  boss: Boss,
  id: string,
  canceledBy: string,
  reason: string | null,
  notifyParent = true,
): Promise<void> {
  const message = `canceled by ${canceledBy}${reason ? `: ${reason}` : ""}`;
  const error = storableJson({ error: { name: "Canceled", message } });
  const { rows: canceled } = await client.query<{
    parent_job_id: string | null;
    concurrency_key: string | null;
  }>(
    prepared(
      `WITH done AS (
         UPDATE job SET status = 'canceled', canceled_by = $2, cancel_reason = $3, completed_at = now(), result = $4::jsonb
          WHERE id = $1 AND status IS NOT DISTINCT FROM 'running'
          RETURNING id, status, result, result_columns, parent_job_id, concurrency_key),
       notified AS (${NOTIFY_OUTCOMES("done", "$5")})
       SELECT parent_job_id, concurrency_key FROM done, (SELECT count(*) FROM notified) AS n`,
      [id, canceledBy, reason, error, JOB_DONE_CHANNEL],
    ),
  );
  const { rows } = await client.query<{
    id: string;
    kind: string;
    status: string;
    tag: string;
    boss_job_id: string | null;
  }>(
    `WITH RECURSIVE tree AS (
       SELECT id FROM job WHERE parent_job_id = $1
       UNION ALL
       SELECT j.id FROM job j JOIN tree t ON j.parent_job_id = t.id
     )
     SELECT id, kind, status, tag, boss_job_id FROM job
      WHERE id IN (SELECT id FROM tree) AND status IN ('queued', 'running') ORDER BY id FOR UPDATE`,
    [id],
  );
  for (const child of rows) {
    const isFlow = child.kind === "flow" || child.kind === "flowpreview";
    if (child.status === "queued" || isFlow) {
      await client.query(
        prepared(
          `WITH done AS (
             UPDATE job SET status = 'canceled', canceled_by = $2, cancel_reason = $3, completed_at = now(),
                    result = $4::jsonb
              WHERE id = $1 RETURNING id, status, result, result_columns)
           ${NOTIFY_OUTCOMES("done", "$5")}`,
          [child.id, canceledBy, reason, error, JOB_DONE_CHANNEL],
        ),
      );
      if (child.boss_job_id && !isFlow) {
        await boss.cancel(child.tag, child.boss_job_id, {
          db: { executeSql: (text, values) => client.query(text, values) },
        });
      }
    } else {
      await client.query("UPDATE job SET canceled_by = $2, cancel_reason = $3 WHERE id = $1", [
        child.id,
        canceledBy,
        reason,
      ]);
      await client.query("SELECT pg_notify($1, $2)", [JOB_CANCEL_CHANNEL, child.id]);
    }
  }
  if (notifyParent && canceled[0]?.parent_job_id) await advanceFlows(client, boss, [id]);
  if (canceled[0]?.concurrency_key) await startQueuedFlows(client, boss, canceled[0].concurrency_key);
}

/**
 * run_wait_result for a flow: its outcome once it finished, or, for a flow with `early_return`,
 * the named step's result as soon as that step finished (the rest of the flow goes on, and the
 * flow job's own result stays the flow's final result, for whoever reads the job afterwards).
 */
export async function waitForFlowResult(
  ctx: JobsContext,
  membership: Membership,
  id: string,
  timeoutMs: number,
): Promise<FinishedJob> {
  requirePermission(membership, "job.read");
  return waitUntilFinished(
    ctx,
    id,
    timeoutMs,
    async () => {
      const { rows } = await ctx.pool.query<{
        status: string;
        result: unknown;
        result_columns: string[] | null;
        early: { result: unknown } | null;
      }>(
        prepared(
          `SELECT status, result, result_columns, flow_status->'early_return' AS early FROM job WHERE id = $1 AND workspace_id = $2`,
          [id, membership.workspace.id],
        ),
      );
      const row = rows[0];
      if (!row) throw notFound(`job ${id}`);
      if (row.early) return { status: "success" as const, result: row.early.result };
      if (row.status === "success" || row.status === "failure" || row.status === "canceled") {
        return { status: row.status, result: inColumnOrder(row.result, row.result_columns) };
      }
      return null;
    },
    (outcome) => outcome,
  );
}
