// Flow jobs. A flow run is a job row (kind `flow`, or `flowpreview`) that no worker claims: it
// has no pg-boss dispatch and is `running` from the start, with no worker name. Its steps are
// ordinary jobs (parent_job_id = the flow job) on their own tags. The transaction that starts
// the flow enqueues its first step; the transaction that records a step's completion
// (jobs/complete.ts, jobs/cancel.ts) calls advanceFlows, which locks the flow job, records the
// step and enqueues the next one or completes the flow. So a flow is never between two steps
// after a crash: either the step's completion and the next step committed, or neither did.
import { randomUUID } from "node:crypto";
import {
  isTransientDatabaseError,
  prepared,
  withTransaction,
  type Pool,
  type PoolClient,
} from "@millrace/db";
import { recordAudit } from "../../audit/index.ts";
import type { Principal } from "../../auth/principal.ts";
import { AppError, invalidInput, notFound } from "../../errors.ts";
import type { Boss } from "../../jobs/boss.ts";
import { enqueueJobs, triggerKind, type EnqueueInput } from "../../jobs/enqueue.ts";
import { JOB_DONE_CHANNEL, NOTIFY_OUTCOMES } from "../../jobs/events.ts";
import { JOB_CANCEL_CHANNEL } from "../../jobs/cancel.ts";
import { storableJson } from "../../jobs/storable.ts";
import { resolveTag, tagForRunnable } from "../../jobs/tags.ts";
import { jobBounds, type JobsContext } from "../../jobs/run.ts";
import { requirePermission } from "../../permissions.ts";
import type { Membership } from "../../workspaces.ts";
import type { FlowValue } from "../format.ts";
import { checkFlow, getFlow } from "../store.ts";
import { FlowMachine, initialState, type Action, type DeployedScript, type FlowState } from "./machine.ts";

export const FLOW_JOB_KINDS = ["flow", "flowpreview"] as const;

interface FlowJobRow {
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
  script_path: string | null;
}

const FLOW_JOB_COLUMNS = `id, workspace_id, kind, status, args, raw_flow, flow_status, created_by, permissioned_as,
  bounded_by, priority, timeout_secs, root_job_id, script_path`;

async function lookUpScript(client: PoolClient, workspaceId: string, path: string, hash: string | undefined) {
  const { rows } = await client.query(
    hash
      ? `SELECT path, hash, language, content, tag, retry, priority, timeout_secs, memory_limit_mb, created_by, schema
           FROM script WHERE workspace_id = $1 AND path = $2 AND hash = $3`
      : `SELECT path, hash, language, content, tag, retry, priority, timeout_secs, memory_limit_mb, created_by, schema
           FROM script WHERE workspace_id = $1 AND path = $2 AND NOT archived ORDER BY created_at DESC LIMIT 1`,
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
  } satisfies DeployedScript;
}

/**
 * Carries out the machine's action in `client`'s transaction: enqueues the step job (then
 * records that the flow waits for it) or completes the flow job, and saves flow_status.
 */
async function apply(
  client: PoolClient,
  boss: Boss,
  flow: FlowJobRow,
  machine: FlowMachine,
  action: Action,
): Promise<void> {
  if (action.kind === "enqueue") {
    const step = action.job;
    try {
      const tag = resolveTag(
        tagForRunnable(step.tag, step.language),
        flow.workspace_id,
        step.args,
        `${step.stepId}.tag`,
      );
      const input: EnqueueInput = {
        workspaceId: flow.workspace_id,
        kind: step.kind,
        scriptPath: step.scriptPath ?? flow.script_path,
        scriptHash: step.scriptHash,
        language: step.language,
        content: step.content,
        args: step.args,
        argOrder: step.argOrder,
        tag,
        priority: step.priority ?? flow.priority,
        scheduledFor: null,
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
        concurrency: null,
        retry: step.retry,
        ...(step.lock !== undefined ? { lock: step.lock } : {}),
        parentJobId: flow.id,
        rootJobId: flow.root_job_id ?? flow.id,
        flowStepId: step.stepId,
      };
      const [id] = await enqueueJobs(client as unknown as Pool, boss, [input], { transaction: client });
      machine.waitFor(id!, step.stepId);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // The step cannot be enqueued (its tag, say): the flow fails at that step.
      const outcome = {
        status: "failure" as const,
        result: { error: { name: "StepError", message: error.message, step_id: step.stepId } },
      };
      await finish(client, flow, machine.state, outcome);
      return;
    }
    await client.query("UPDATE job SET flow_status = $2 WHERE id = $1", [
      flow.id,
      JSON.stringify(machine.state),
    ]);
    return;
  }
  await finish(client, flow, machine.state, action.outcome);
}

async function finish(
  client: PoolClient,
  flow: Pick<FlowJobRow, "id">,
  state: FlowState,
  outcome: { status: string; result: unknown },
): Promise<void> {
  await client.query(
    prepared(
      `WITH done AS (
         UPDATE job SET status = $2::job_status, result = $3::jsonb, flow_status = $4, completed_at = now()
          WHERE id = $1 AND status IS NOT DISTINCT FROM 'running'
          RETURNING id, status, result)
       ${NOTIFY_OUTCOMES("done", "$5")}`,
      [flow.id, outcome.status, storableJson(outcome.result), JSON.stringify(state), JOB_DONE_CHANNEL],
    ),
  );
}

function machineFor(client: PoolClient, flow: FlowJobRow): FlowMachine {
  return new FlowMachine(flow.flow_status, flow.raw_flow, flow.args ?? {}, {
    lookUpScript: (path, hash) => lookUpScript(client, flow.workspace_id, path, hash),
  });
}

/**
 * Moves the flows whose step jobs `jobIds` just ended (in the caller's transaction, after their
 * outcomes were written): each flow job is locked, the step recorded, the next step enqueued or
 * the flow completed. Jobs that are no flow step, or that the flow no longer waits for (the flow
 * was canceled), change nothing.
 */
export async function advanceFlows(client: PoolClient, boss: Boss, jobIds: string[]): Promise<void> {
  if (jobIds.length === 0) return;
  const { rows: steps } = await client.query<{
    id: string;
    parent_job_id: string;
    status: string;
    result: unknown;
  }>(
    `SELECT id, parent_job_id, status, result FROM job
      WHERE id = ANY($1::uuid[]) AND parent_job_id IS NOT NULL AND status IN ('success', 'failure', 'canceled')
      ORDER BY parent_job_id`,
    [jobIds],
  );
  for (const step of steps) {
    const { rows } = await client.query<FlowJobRow>(
      `SELECT ${FLOW_JOB_COLUMNS} FROM job WHERE id = $1 AND kind IN ('flow', 'flowpreview') FOR UPDATE`,
      [step.parent_job_id],
    );
    const flow = rows[0];
    if (!flow || flow.status !== "running" || !flow.flow_status) continue;
    // A fault of the engine itself must not make the step's completion unrecordable (its worker
    // would retry it forever): the flow fails instead, saying why.
    await client.query("SAVEPOINT advance_flow");
    try {
      const machine = machineFor(client, flow);
      const action = await machine.stepDone(step.id, step);
      if (action) await apply(client, boss, flow, machine, action);
      await client.query("RELEASE SAVEPOINT advance_flow");
    } catch (error) {
      await client.query("ROLLBACK TO SAVEPOINT advance_flow");
      if (isTransientDatabaseError(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      await finish(client, flow, flow.flow_status, {
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
  args: unknown;
  audit: { operation: string; parameters?: Record<string, unknown> };
}

function checkedFlowArgs(args: unknown): Record<string, unknown> {
  if (args === null || args === undefined) return {};
  if (typeof args !== "object" || Array.isArray(args)) throw invalidInput("args", "must be a JSON object");
  return args as Record<string, unknown>;
}

/** Writes the flow job and its first step (or its outcome, when no step needs a job) together. */
async function startFlow(ctx: JobsContext, membership: Membership, input: StartFlowInput): Promise<string> {
  const args = checkedFlowArgs(input.args);
  const principal: Principal = membership.principal;
  const workspaceId = membership.workspace.id;
  const id = randomUUID();
  const timeout = Math.min(ctx.limits.defaultTimeoutSecs, ctx.limits.maxTimeoutSecs);
  const state = initialState(input.value, args);
  await withTransaction(ctx.pool, async (client) => {
    const { rows } = await client.query<FlowJobRow>(
      `INSERT INTO job (id, workspace_id, kind, script_path, script_hash, language, content, args, tag, priority,
         status, created_by, permissioned_as, bounded_by, started_at, timeout_secs, raw_flow, flow_status, trigger_kind)
       VALUES ($1, $2, $3, $4, $5, 'flow', NULL, $6, 'flow', $7, 'running', $8, $9, $10, now(), $11, $12, $13, $14)
       RETURNING ${FLOW_JOB_COLUMNS}`,
      [
        id,
        workspaceId,
        input.kind,
        input.path,
        input.versionId === null ? null : String(input.versionId),
        storableJson(args),
        input.value.priority ?? 0,
        principal.username,
        `u/${principal.username}`,
        jobBounds(principal, null),
        timeout,
        JSON.stringify(input.value),
        JSON.stringify(state),
        triggerKind({ kind: input.kind, audit: { actor: principal } } as unknown as EnqueueInput),
      ],
    );
    await recordAudit(client, principal, {
      workspaceId,
      operation: input.audit.operation,
      resource: input.path,
      parameters: { job_id: id, ...input.audit.parameters },
    });
    const flow = rows[0]!;
    const machine = machineFor(client, flow);
    await apply(client, ctx.boss, flow, machine, await machine.start());
  });
  return id;
}

/** Runs the flow deployed at `path` (Windmill's jobs/run/f/{path}). */
export async function runFlowByPath(
  ctx: JobsContext,
  membership: Membership,
  path: string,
  args: unknown,
): Promise<string> {
  requirePermission(membership, "job.run");
  const { principal } = membership;
  if (principal.pathScope && principal.pathScope !== path) {
    throw new AppError("FORBIDDEN", `this token may only run ${principal.pathScope}`);
  }
  const flow = await getFlow(ctx, membership, path);
  if (flow.archived) throw notFound(`flow ${path}`);
  return startFlow(ctx, membership, {
    kind: "flow",
    path: flow.path,
    versionId: flow.version_id,
    value: flow.value,
    args,
    audit: { operation: "jobs.run.flow", parameters: { version_id: flow.version_id } },
  });
}

/** Runs a flow that is not deployed (Windmill's jobs/run/preview_flow): validated first. */
export async function runFlowPreview(
  ctx: JobsContext,
  membership: Membership,
  input: { value: unknown; args: unknown; path?: string | null },
): Promise<string> {
  requirePermission(membership, "job.preview");
  const flow = await checkFlow(ctx, membership.workspace.id, { summary: "", value: input.value });
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
 * Cancels a running flow job and every unfinished job under it, in the caller's transaction:
 * queued steps end at once, running ones are told to stop (their worker records them canceled,
 * and since the flow is over by then, nothing follows them).
 */
export async function cancelFlowJob(
  client: PoolClient,
  boss: Boss,
  id: string,
  canceledBy: string,
  reason: string | null,
): Promise<void> {
  const message = `canceled by ${canceledBy}${reason ? `: ${reason}` : ""}`;
  const error = storableJson({ error: { name: "Canceled", message } });
  await client.query(
    prepared(
      `WITH done AS (
         UPDATE job SET status = 'canceled', canceled_by = $2, cancel_reason = $3, completed_at = now(), result = $4::jsonb
          WHERE id = $1 AND status IS NOT DISTINCT FROM 'running'
          RETURNING id, status, result)
       ${NOTIFY_OUTCOMES("done", "$5")}`,
      [id, canceledBy, reason, error, JOB_DONE_CHANNEL],
    ),
  );
  const { rows } = await client.query<{
    id: string;
    status: string;
    tag: string;
    boss_job_id: string | null;
  }>(
    `SELECT id, status, tag, boss_job_id FROM job
      WHERE (root_job_id = $1 OR parent_job_id = $1) AND status IN ('queued', 'running') FOR UPDATE`,
    [id],
  );
  for (const child of rows) {
    if (child.status === "queued") {
      await client.query(
        prepared(
          `WITH done AS (
             UPDATE job SET status = 'canceled', canceled_by = $2, cancel_reason = $3, completed_at = now(),
                    result = $4::jsonb
              WHERE id = $1 RETURNING id, status, result)
           ${NOTIFY_OUTCOMES("done", "$5")}`,
          [child.id, canceledBy, reason, error, JOB_DONE_CHANNEL],
        ),
      );
      if (child.boss_job_id) {
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
}
