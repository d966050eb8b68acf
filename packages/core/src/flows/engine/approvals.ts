// Approvals of flow steps with `suspend` (Windmill's suspend / resume URLs). When such a step's
// job ends, its flow waits (flow_status._engine.suspended, see machine.ts) for `required_events`
// approvals, recorded in flow_resume per (step job, resume id). Resume and cancel URLs are signed
// per (workspace, step job, resume id, approver) with an HMAC whose key is derived from the
// instance key (MILLRACE_SECRET_KEY, never in the database) and a random salt stored in the
// database, as session signing is (instance.ts): neither a database dump nor the key alone forges
// one. Every decision (approve, cancel, timeout) is in the audit log, in the transaction that
// records it and moves the flow on.
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { withTransaction, type Pool, type PoolClient } from "@millrace/db";
import { canSeeJob } from "../../access.ts";
import { recordAudit } from "../../audit/index.ts";
import type { CoreContext } from "../../context.ts";
import { AppError, notFound } from "../../errors.ts";
import { getInstanceSecret } from "../../instance.ts";
import type { Boss } from "../../jobs/boss.ts";
import { isJobId } from "../../jobs/queries.ts";
import type { JobsContext } from "../../jobs/run.ts";
import { requirePermission } from "../../permissions.ts";
import { deriveInstanceKey } from "../../secrets/cipher.ts";
import type { Membership } from "../../membership.ts";
import type { FlowModule, FlowValue } from "../format.ts";
import type { FlowState, Suspension } from "./machine.ts";
import { apply, FLOW_JOB_COLUMNS, machineFor, resumeEvents, type FlowJobRow } from "./run.ts";

const RESUME_SALT_SETTING = "resume_url_secret_salt";
const keys = new WeakMap<object, Promise<Buffer>>();

/** The HMAC key of resume URLs (cached per pool). */
export function resumeSigningKey(ctx: CoreContext, rawInstanceKey: string): Promise<Buffer> {
  let key = keys.get(ctx.pool);
  if (!key) {
    key = (async () => {
      const salt = await getInstanceSecret(ctx, RESUME_SALT_SETTING);
      const derived = hkdfSync(
        "sha256",
        deriveInstanceKey(rawInstanceKey),
        salt,
        "millrace resume url v1",
        32,
      );
      return Buffer.from(derived);
    })();
    key.catch(() => keys.delete(ctx.pool));
    keys.set(ctx.pool, key);
  }
  return key;
}

function sign(key: Buffer, workspaceId: string, jobId: string, resumeId: number, approver: string | null) {
  return createHmac("sha256", key)
    .update(`${workspaceId}\n${jobId}\n${resumeId}\n${approver ?? ""}`)
    .digest("hex");
}

function checkSignature(
  key: Buffer,
  workspaceId: string,
  jobId: string,
  resumeId: number,
  approver: string | null,
  signature: string,
): void {
  const expected = Buffer.from(sign(key, workspaceId, jobId, resumeId, approver));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new AppError("FORBIDDEN", "the signature does not match this job, resume id and approver");
  }
}

/** A resume id as Windmill's clients send it: a whole number up to 2^32. */
export function parseResumeId(value: string): number {
  const id = Number(value);
  if (!/^\d{1,10}$/.test(value) || !Number.isSafeInteger(id) || id > 4294967295) {
    throw new AppError("INVALID_INPUT", "resume_id: must be a whole number up to 4294967295", "resume_id");
  }
  return id;
}

export interface ResumeUrls {
  approvalPage: string;
  resume: string;
  cancel: string;
}

/**
 * Windmill's getResumeUrls (GET /w/{ws}/jobs/resume_urls/{id}/{resume_id}): the signed URLs that
 * approve or cancel the suspended step whose job is `jobId` (a step calls it with its own
 * WM_JOB_ID while it runs, then sends the URLs to its approvers).
 */
export async function getResumeUrls(
  ctx: CoreContext,
  membership: Membership,
  input: { jobId: string; resumeId: number; approver: string | null; baseUrl: string; instanceKey: string },
): Promise<ResumeUrls> {
  requirePermission(membership, "job.read");
  const workspaceId = membership.workspace.id;
  if (!isJobId(input.jobId)) throw notFound(`job ${input.jobId}`);
  const { rows } = await ctx.pool.query<{ created_by: string; script_path: string | null }>(
    "SELECT created_by, script_path FROM job WHERE id = $1 AND workspace_id = $2",
    [input.jobId, workspaceId],
  );
  const job = rows[0];
  if (
    !job ||
    !(await canSeeJob(ctx, membership, { createdBy: job.created_by, scriptPath: job.script_path }))
  ) {
    throw notFound(`job ${input.jobId}`);
  }
  const key = await resumeSigningKey(ctx, input.instanceKey);
  const signature = sign(key, workspaceId, input.jobId, input.resumeId, input.approver);
  const base = input.baseUrl.replace(/\/+$/, "");
  const tail = `${encodeURIComponent(workspaceId)}/${input.jobId}/${input.resumeId}/${signature}${
    input.approver ? `?approver=${encodeURIComponent(input.approver)}` : ""
  }`;
  return {
    approvalPage: `${base}/approve/${tail}`,
    resume: `${base}/api/w/${tail.replace(/^[^/]+\//, `${encodeURIComponent(workspaceId)}/jobs_u/resume/`)}`,
    cancel: `${base}/api/w/${tail.replace(/^[^/]+\//, `${encodeURIComponent(workspaceId)}/jobs_u/cancel/`)}`,
  };
}

/** The step module `id` anywhere in the flow (loops, branches, failure step). */
function findModule(value: FlowValue, id: string): FlowModule | null {
  const walk = (modules: FlowModule[] | undefined): FlowModule | null => {
    for (const module of modules ?? []) {
      if (module.id === id) return module;
      const v = module.value;
      const inner =
        v.type === "forloopflow" || v.type === "whileloopflow"
          ? walk(v.modules)
          : v.type === "branchone"
            ? (walk(v.default) ??
              v.branches.reduce<FlowModule | null>((found, b) => found ?? walk(b.modules), null))
            : v.type === "branchall"
              ? v.branches.reduce<FlowModule | null>((found, b) => found ?? walk(b.modules), null)
              : null;
      if (inner) return inner;
    }
    return null;
  };
  return walk(value.modules) ?? (value.failure_module?.id === id ? value.failure_module : null);
}

interface StepJobRow {
  id: string;
  kind: string;
  status: string;
  parent_job_id: string | null;
  root_job_id: string | null;
  flow_step_id: string | null;
}

/**
 * Locks the run's root flow (the order completions use), then the flow that `jobId` suspends: the
 * step job's flow, or the flow job itself (a suspended identity step has no job of its own).
 */
async function lockFlowOf(
  client: PoolClient,
  workspaceId: string,
  jobId: string,
): Promise<{ step: StepJobRow; flow: FlowJobRow }> {
  const { rows: steps } = await client.query<StepJobRow>(
    `SELECT id, kind, status, parent_job_id, root_job_id, flow_step_id FROM job
      WHERE id = $1 AND workspace_id = $2`,
    [jobId, workspaceId],
  );
  const step = steps[0];
  const isFlow = step?.kind === "flow" || step?.kind === "flowpreview";
  if (!step || (!isFlow && !step.parent_job_id)) throw notFound(`suspended job ${jobId}`);
  if (step.root_job_id) await client.query("SELECT 1 FROM job WHERE id = $1 FOR UPDATE", [step.root_job_id]);
  const { rows } = await client.query<FlowJobRow>(
    `SELECT ${FLOW_JOB_COLUMNS} FROM job WHERE id = $1 AND kind IN ('flow', 'flowpreview') FOR UPDATE`,
    [isFlow ? step.id : step.parent_job_id],
  );
  const flow = rows[0];
  if (!flow) throw notFound(`suspended job ${jobId}`);
  return { step, flow };
}

/** The approval rules of the step job `step`: its suspension, or (approved early) its module's. */
function rulesOf(flow: FlowJobRow, step: StepJobRow): Omit<Suspension, "deadline" | "result" | "job"> | null {
  const suspended = (flow.flow_status as FlowState)._engine.suspended;
  if (suspended?.job === step.id) return suspended;
  // Approved while the step still runs (it sent its URLs first): checked against the step's
  // static rules; its group list, an expression of the step's result, is only known at its end.
  if (step.status !== "running" && step.status !== "queued") return null;
  if (step.kind === "flow" || step.kind === "flowpreview") return null;
  const module = step.flow_step_id ? findModule(flow.raw_flow, step.flow_step_id) : null;
  if (!module?.suspend) return null;
  const groups = module.suspend.user_groups_required;
  if (
    groups &&
    !(groups.type === "static" && (Array.isArray(groups.value) || typeof groups.value === "string"))
  ) {
    throw new AppError(
      "CONFLICT",
      "this step's approvers are known only once it has finished: try again then",
    );
  }
  const list =
    groups?.type === "static" ? [groups.value].flat().filter((g): g is string => typeof g === "string") : [];
  return {
    step: module.id,
    required: module.suspend.required_events ?? 1,
    timeout: module.suspend.timeout ?? 0,
    user_auth_required: module.suspend.user_auth_required === true,
    self_approval_disabled: module.suspend.self_approval_disabled === true,
    groups: list.length > 0 ? list : null,
    continue_on_disapprove_timeout: module.suspend.continue_on_disapprove_timeout === true,
    hide_cancel: module.suspend.hide_cancel === true,
  };
}

export interface ResumeRequest {
  workspaceId: string;
  jobId: string;
  resumeId: number;
  signature: string;
  /** The `approver` the URL was signed for (query parameter). */
  approver: string | null;
  /** The approval form's values (POST body, or GET's base64 `payload`). */
  payload: unknown;
  cancel: boolean;
  /** The caller's membership of the workspace when the request is signed in, else null. */
  membership: Membership | null;
  instanceKey: string;
}

async function checkApprover(
  client: PoolClient,
  rules: NonNullable<ReturnType<typeof rulesOf>>,
  flow: FlowJobRow,
  membership: Membership | null,
): Promise<void> {
  const needsUser = rules.user_auth_required || rules.self_approval_disabled || rules.groups !== null;
  if (needsUser && !membership) {
    throw new AppError("UNAUTHORIZED", "this approval needs a signed-in member of the workspace");
  }
  if (!membership) return;
  const username = membership.principal.username;
  if (rules.self_approval_disabled && username === flow.created_by) {
    throw new AppError(
      "FORBIDDEN",
      "the user who started this flow may not approve it (self-approval is disabled)",
    );
  }
  if (rules.groups) {
    const { rows } = await client.query(
      "SELECT 1 FROM group_member WHERE workspace_id = $1 AND group_name = ANY($2::text[]) AND user_id = $3 LIMIT 1",
      [flow.workspace_id, rules.groups, membership.principal.userId],
    );
    if (rows.length === 0) {
      throw new AppError("FORBIDDEN", `only members of ${rules.groups.join(", ")} may approve this step`);
    }
  }
}

/**
 * A resume or cancel through a signed URL (Windmill's jobs_u/resume and jobs_u/cancel): checks the
 * signature and the step's approval rules, records the event and, when the flow waits on that
 * step, moves it on (enough approvals) or ends it (cancel), in one transaction.
 */
export async function resumeSuspendedJob(ctx: JobsContext, request: ResumeRequest): Promise<string> {
  if (!isJobId(request.jobId)) throw notFound(`job ${request.jobId}`);
  const key = await resumeSigningKey(ctx, request.instanceKey);
  checkSignature(
    key,
    request.workspaceId,
    request.jobId,
    request.resumeId,
    request.approver,
    request.signature,
  );
  if (request.membership && request.membership.workspace.id !== request.workspaceId)
    request.membership = null;
  return withTransaction(ctx.pool, async (client) => {
    const { step, flow } = await lockFlowOf(client, request.workspaceId, request.jobId);
    if (flow.status !== "running")
      throw new AppError("CONFLICT", `the flow of job ${step.id} is over (${flow.status})`);
    const rules = rulesOf(flow, step);
    if (!rules) throw new AppError("CONFLICT", `job ${step.id} is not waiting for an approval`);
    if (request.cancel && rules.hide_cancel) {
      throw new AppError("FORBIDDEN", "this step's approval cannot be canceled");
    }
    await checkApprover(client, rules, flow, request.membership);
    const approver = request.membership?.principal.username ?? request.approver ?? "anonymous";
    const { rowCount } = await client.query(
      `INSERT INTO flow_resume (job_id, flow_job_id, resume_id, approver, value, is_cancel)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id, resume_id) DO NOTHING`,
      [step.id, flow.id, request.resumeId, approver, JSON.stringify(request.payload ?? null), request.cancel],
    );
    if (!rowCount)
      throw new AppError("CONFLICT", `resume id ${request.resumeId} of job ${step.id} was already used`);
    await recordAudit(client, request.membership?.principal ?? approver, {
      workspaceId: flow.workspace_id,
      operation: request.cancel ? "flows.approval.cancel" : "flows.approval.approve",
      resource: flow.script_path,
      parameters: {
        job_id: step.id,
        flow_job_id: flow.id,
        step: rules.step,
        resume_id: request.resumeId,
        approver,
      },
    });
    await moveSuspended(client, ctx.boss, flow, step.id, false);
    return request.cancel ? `job ${step.id} canceled` : `job ${step.id} resumed`;
  });
}

/** If `flow` waits on step job `jobId`: feeds it the step's events (force: resumed as owner). */
async function moveSuspended(
  client: PoolClient,
  boss: Boss,
  flow: FlowJobRow,
  jobId: string,
  force: boolean,
): Promise<void> {
  const machine = machineFor(client, flow);
  if (machine.suspension?.job !== jobId) return;
  const action = await machine.resumed(await resumeEvents(client, jobId), force);
  if (action) await apply(client, boss, flow, machine, action);
}

/**
 * Windmill's resumeSuspendedFlowAsOwner (POST /w/{ws}/jobs/flow/resume/{id}, `id` the flow job):
 * a member who may run jobs and is the flow's starter or a workspace admin resumes its suspended
 * step at once, whatever count it waits for.
 */
export async function resumeSuspendedFlowAsOwner(
  ctx: JobsContext,
  membership: Membership,
  flowJobId: string,
  payload: unknown,
): Promise<string> {
  requirePermission(membership, "job.run");
  if (!isJobId(flowJobId)) throw notFound(`job ${flowJobId}`);
  return withTransaction(ctx.pool, async (client) => {
    const { rows: roots } = await client.query<{ root_job_id: string | null }>(
      "SELECT root_job_id FROM job WHERE id = $1 AND workspace_id = $2",
      [flowJobId, membership.workspace.id],
    );
    if (!roots[0]) throw notFound(`job ${flowJobId}`);
    if (roots[0].root_job_id)
      await client.query("SELECT 1 FROM job WHERE id = $1 FOR UPDATE", [roots[0].root_job_id]);
    const { rows } = await client.query<FlowJobRow>(
      `SELECT ${FLOW_JOB_COLUMNS} FROM job WHERE id = $1 AND kind IN ('flow', 'flowpreview') FOR UPDATE`,
      [flowJobId],
    );
    const flow = rows[0];
    if (
      !flow ||
      !(await canSeeJob(ctx, membership, { createdBy: flow.created_by, scriptPath: flow.script_path }))
    ) {
      throw notFound(`job ${flowJobId}`);
    }
    const suspended = (flow.flow_status as FlowState)._engine.suspended;
    if (flow.status !== "running" || !suspended) {
      throw new AppError("CONFLICT", `flow ${flowJobId} is not waiting for an approval`);
    }
    if (membership.role !== "admin" && membership.principal.username !== flow.created_by) {
      throw new AppError(
        "FORBIDDEN",
        "only the user who started the flow or a workspace admin may resume it as owner",
      );
    }
    const approver = membership.principal.username;
    await client.query(
      `INSERT INTO flow_resume (job_id, flow_job_id, resume_id, approver, value)
       VALUES ($1, $2, (SELECT COALESCE(max(resume_id), 0) + 4294967296 FROM flow_resume WHERE job_id = $1), $3, $4)`,
      [suspended.job, flow.id, approver, JSON.stringify(payload ?? null)],
    );
    await recordAudit(client, membership.principal, {
      workspaceId: flow.workspace_id,
      operation: "flows.approval.approve",
      resource: flow.script_path,
      parameters: { job_id: suspended.job, flow_job_id: flow.id, step: suspended.step, as_owner: true },
    });
    await moveSuspended(client, ctx.boss, flow, suspended.job, true);
    return `flow ${flowJobId} resumed`;
  });
}

/**
 * Windmill's getSuspendedJobFlow (GET /w/{ws}/jobs_u/get_flow/{id}/{resume_id}/{signature}): the
 * flow a signed approval link is for, and who approved it so far, for the approval page.
 */
export async function getSuspendedJobFlow(
  ctx: CoreContext,
  request: Pick<
    ResumeRequest,
    "workspaceId" | "jobId" | "resumeId" | "signature" | "approver" | "instanceKey"
  >,
): Promise<{ job: Record<string, unknown>; approvers: { resume_id: number; approver: string }[] }> {
  if (!isJobId(request.jobId)) throw notFound(`job ${request.jobId}`);
  const key = await resumeSigningKey(ctx, request.instanceKey);
  checkSignature(
    key,
    request.workspaceId,
    request.jobId,
    request.resumeId,
    request.approver,
    request.signature,
  );
  const { rows } = await ctx.pool.query(
    `SELECT f.id, f.workspace_id, f.kind, f.status, f.script_path, f.args, f.raw_flow, f.flow_status, f.created_by,
            f.created_at, f.started_at
       FROM job s JOIN job f ON f.id = CASE WHEN s.kind IN ('flow', 'flowpreview') THEN s.id ELSE s.parent_job_id END
      WHERE s.id = $1 AND s.workspace_id = $2`,
    [request.jobId, request.workspaceId],
  );
  const flow = rows[0];
  if (!flow) throw notFound(`suspended job ${request.jobId}`);
  const events = await ctx.pool.query<{ resume_id: string; approver: string }>(
    "SELECT resume_id, approver FROM flow_resume WHERE job_id = $1 AND NOT is_cancel ORDER BY id",
    [request.jobId],
  );
  const state = flow.flow_status as FlowState;
  return {
    job: {
      id: flow.id,
      workspace_id: flow.workspace_id,
      type: flow.status === "running" ? "QueuedJob" : "CompletedJob",
      job_kind: flow.kind,
      running: flow.status === "running",
      script_path: flow.script_path,
      args: flow.args,
      raw_flow: flow.raw_flow,
      flow_status: { step: state.step, modules: state.modules, failure_module: state.failure_module },
      created_by: flow.created_by,
      created_at: flow.created_at,
      started_at: flow.started_at,
    },
    approvers: events.rows.map((row) => ({ resume_id: Number(row.resume_id), approver: row.approver })),
  };
}

/** The sweeper's part: suspended steps past their timeout fail (or go on). Returns the flow ids. */
export async function timeOutSuspendedFlows(pool: Pool, boss: Boss): Promise<string[]> {
  const { rows } = await pool.query<{ id: string; root_job_id: string | null }>(
    `SELECT id, root_job_id FROM job
      WHERE kind IN ('flow', 'flowpreview') AND status = 'running'
        AND flow_status->'_engine'->'suspended' IS NOT NULL
        AND (flow_status->'_engine'->'suspended'->>'deadline')::timestamptz < now()
      LIMIT 100`,
  );
  const timedOut: string[] = [];
  for (const row of rows) {
    await withTransaction(pool, async (client) => {
      if (row.root_job_id)
        await client.query("SELECT 1 FROM job WHERE id = $1 FOR UPDATE", [row.root_job_id]);
      const { rows: flows } = await client.query<FlowJobRow>(
        `SELECT ${FLOW_JOB_COLUMNS} FROM job WHERE id = $1 AND status = 'running' FOR UPDATE`,
        [row.id],
      );
      const flow = flows[0];
      const suspended = flow && (flow.flow_status as FlowState)._engine.suspended;
      if (!flow || !suspended || new Date(suspended.deadline).getTime() > Date.now()) return;
      await recordAudit(client, "millrace", {
        workspaceId: flow.workspace_id,
        operation: "flows.approval.timeout",
        resource: flow.script_path,
        parameters: {
          job_id: suspended.job,
          flow_job_id: flow.id,
          step: suspended.step,
          timeout: suspended.timeout,
        },
      });
      const machine = machineFor(client, flow);
      const action = await machine.timedOut();
      if (action) await apply(client, boss, flow, machine, action);
      timedOut.push(flow.id);
    });
  }
  return timedOut;
}
