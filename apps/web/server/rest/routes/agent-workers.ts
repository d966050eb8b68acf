// Agent workers (MODE=agent): the superadmin routes that issue and revoke their tokens (Windmill's
// agent_workers endpoints), and the only routes an agent token opens: ping, claim, logs,
// complete, leave, and worker_script/{start,end} (its group's init and periodic scripts). Those authenticate the agent token themselves (`auth: "public"` to the
// router); no other route accepts it, since it is not an API token (see agentFromToken).
import {
  agentAppendLogs,
  agentClaim,
  agentComplete,
  agentFromToken,
  agentLeave,
  agentPing,
  agentWorkerConfig,
  agentWorkerScriptEnd,
  agentWorkerScriptStart,
  createAgentToken,
  listAgentTokens,
  MAX_AGENT_SLOTS,
  revokeAgentToken,
  type AgentIdentity,
} from "@millrace/core";
import { z } from "zod";
import { requestToken } from "../../auth/principal.ts";
import { serverEnv } from "../../env.ts";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { RestContext, Route } from "../router.ts";
import { textAnswer } from "./params.ts";

function agentOf(ctx: RestContext): Promise<AgentIdentity> {
  return agentFromToken(ctx.services.pool, requestToken(ctx.request.headers, ctx.url));
}

const workerName = z.string().max(120);
const jobId = z.uuid();
const jobError = z.object({ name: z.string(), message: z.string(), stack: z.string().optional() });
const outcome = z.discriminatedUnion("status", [
  z.object({ status: z.literal("success"), result: z.unknown() }),
  z.object({ status: z.literal("failure"), result: z.object({ error: jobError }) }),
  z.object({ status: z.literal("canceled"), result: z.object({ error: jobError }) }),
]);
const okShape = z.object({ ok: z.literal(true) });

export const agentWorkerRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/agent_workers/create_agent_token",
    summary: "createAgentToken",
    tag: "agent_worker",
    body: z.object({
      worker_group: z.string(),
      tags: z.array(z.string()),
      exp: z.number(),
    }),
    response: textAnswer("the agent token (shown once)"),
    handler: async (ctx, { body }) =>
      text(
        await createAgentToken(ctx.services, await ctx.principal(), {
          workerGroup: body.worker_group,
          tags: body.tags,
          exp: body.exp,
        }),
      ),
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/agent_workers/blacklist_token",
    summary: "blacklistAgentToken",
    tag: "agent_worker",
    body: z.object({ token: z.string(), expires_at: z.string().optional() }),
    response: textAnswer("confirmation"),
    handler: async (ctx, { body }) => {
      await revokeAgentToken(ctx.services, await ctx.principal(), body.token);
      return text("agent token revoked");
    },
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/agent_workers/list_tokens",
    summary: "listAgentTokens (Millrace)",
    tag: "agent_worker",
    response: z.array(
      z.object({
        id: z.string(),
        token_prefix: z.string(),
        worker_group: z.string(),
        tags: z.array(z.string()),
        expires_at: z.string(),
        revoked_at: z.string().nullable(),
        created_by: z.string(),
        created_at: z.string(),
      }),
    ),
    handler: async (ctx) => json(await listAgentTokens(ctx.services, await ctx.principal())),
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/agent_workers/ping",
    summary: "agent worker heartbeat (Millrace)",
    tag: "agent_worker",
    auth: "public",
    body: z.object({
      held: z
        .array(jobId)
        .max(MAX_AGENT_SLOTS * 4)
        .optional(),
      // Jobs the agent killed when it fenced itself: back in the queue as zombie restarts.
      fenced: z
        .array(z.object({ job_id: jobId, boss_job_id: z.uuid() }))
        .max(MAX_AGENT_SLOTS * 4)
        .optional(),
      host: z.string().max(255),
      version: z.string().max(100),
      sandbox: z.string().max(200),
      memory_bytes: z.number().int().nonnegative().nullable().optional(),
      slots: z
        .array(
          z.object({
            name: workerName,
            current_job_id: jobId.nullable(),
            jobs_executed: z.number().int().nonnegative(),
            occupancy_15s: z.number().min(0).max(1),
            occupancy_5m: z.number().min(0).max(1),
            occupancy_30m: z.number().min(0).max(1),
          }),
        )
        .max(MAX_AGENT_SLOTS),
    }),
    response: z.object({
      worker_group: z.string(),
      tags: z.array(z.string()),
      name_prefix: z.string(),
      canceled: z.array(z.object({ id: z.string(), reason: z.string() })),
      // The zombie monitor's timeout (s): the agent fences itself (kills its jobs) when it has not
      // had a ping answered for half of it (apps/worker/src/fence.ts).
      zombie_job_timeout: z.number(),
      // The group's init and periodic scripts, which the agent runs itself.
      worker_config: z
        .object({
          init_bash: z.string().optional(),
          periodic_script_bash: z.string().optional(),
          periodic_script_interval_seconds: z.number().optional(),
        })
        .nullable(),
    }),
    handler: async (ctx, { body }) => {
      const agent = await agentOf(ctx);
      const { canceled, zombie } = await agentPing(ctx.services.pool, ctx.services.boss, agent, {
        ...(body.held ? { held: body.held } : {}),
        ...(body.fenced
          ? { fenced: body.fenced.map((job) => ({ jobId: job.job_id, bossJobId: job.boss_job_id })) }
          : {}),
        host: body.host,
        version: body.version,
        sandbox: body.sandbox,
        memoryBytes: body.memory_bytes ?? null,
        slots: body.slots.map((slot) => ({
          name: slot.name,
          currentJobId: slot.current_job_id,
          jobsExecuted: slot.jobs_executed,
          occupancy15s: slot.occupancy_15s,
          occupancy5m: slot.occupancy_5m,
          occupancy30m: slot.occupancy_30m,
        })),
      });
      return json({
        worker_group: agent.workerGroup,
        tags: agent.tags,
        name_prefix: agent.namePrefix,
        canceled,
        // As the leader published it; else this server's own setting.
        zombie_job_timeout: zombie?.timeoutSecs ?? serverEnv().ZOMBIE_JOB_TIMEOUT,
        worker_config: await agentWorkerConfig(ctx.services.pool, agent),
      });
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/agent_workers/claim",
    summary: "agent worker claims jobs (Millrace)",
    tag: "agent_worker",
    auth: "public",
    body: z.object({ worker_names: z.array(workerName).max(MAX_AGENT_SLOTS) }),
    // The claimed jobs as the agent's executor takes them (ClaimedJob, see agents/work.ts).
    response: z.object({ jobs: z.array(z.record(z.string(), z.unknown())) }),
    handler: async (ctx, { body }) => {
      const agent = await agentOf(ctx);
      return json({ jobs: await agentClaim(ctx.services, agent, body.worker_names) });
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/agent_workers/logs",
    summary: "agent worker appends job output (Millrace)",
    tag: "agent_worker",
    auth: "public",
    body: z.object({
      entries: z.array(z.object({ job_id: jobId, chunk: z.string() })).max(MAX_AGENT_SLOTS * 4),
    }),
    response: okShape,
    handler: async (ctx, { body }) => {
      const agent = await agentOf(ctx);
      await agentAppendLogs(
        ctx.services,
        agent,
        body.entries.map((entry) => ({ jobId: entry.job_id, chunk: entry.chunk })),
      );
      return json({ ok: true });
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/agent_workers/complete",
    summary: "agent worker reports job outcomes (Millrace)",
    tag: "agent_worker",
    auth: "public",
    body: z.object({
      completions: z
        .array(
          z.object({
            job_id: jobId,
            boss_job_id: z.string(),
            callback_token: z.string().nullable(),
            outcome,
            pending_log: z.string(),
            started_at: z.iso.datetime().optional(),
          }),
        )
        .max(MAX_AGENT_SLOTS * 4),
    }),
    response: z.object({ recorded: z.array(z.string()) }),
    handler: async (ctx, { body }) => {
      const agent = await agentOf(ctx);
      const recorded = await agentComplete(
        ctx.services,
        agent,
        body.completions.map((c) => ({
          jobId: c.job_id,
          bossJobId: c.boss_job_id,
          callbackToken: c.callback_token,
          outcome: c.outcome as never,
          pendingLog: c.pending_log,
          ...(c.started_at ? { startedAt: new Date(c.started_at) } : {}),
        })),
      );
      return json({ recorded });
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/agent_workers/worker_script/start",
    summary: "agent worker records the start of its group's init or periodic script (Millrace)",
    tag: "agent_worker",
    auth: "public",
    body: z.object({
      worker_name: workerName,
      kind: z.enum(["init_script", "periodic_script"]),
      content: z.string().max(1_000_000),
    }),
    response: z.object({ id: z.string() }),
    handler: async (ctx, { body }) => {
      const agent = await agentOf(ctx);
      const id = await agentWorkerScriptStart(ctx.services.pool, agent, {
        workerName: body.worker_name,
        kind: body.kind,
        content: body.content,
      });
      return json({ id });
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/agent_workers/worker_script/end",
    summary: "agent worker records the end of its group's init or periodic script (Millrace)",
    tag: "agent_worker",
    auth: "public",
    body: z.object({
      job_id: jobId,
      outcome: z.discriminatedUnion("status", [
        z.object({ status: z.literal("success"), result: z.unknown() }),
        z.object({ status: z.literal("failure"), error: jobError }),
        z.object({ status: z.literal("canceled") }),
      ]),
      pending_log: z.string(),
    }),
    response: okShape,
    handler: async (ctx, { body }) => {
      const agent = await agentOf(ctx);
      await agentWorkerScriptEnd(
        ctx.services.pool,
        agent,
        body.job_id,
        body.outcome as never,
        body.pending_log,
      );
      return json({ ok: true });
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/agent_workers/leave",
    summary: "stopping agent worker puts back its unfinished jobs (Millrace)",
    tag: "agent_worker",
    auth: "public",
    body: z.object({
      worker_names: z.array(workerName).max(MAX_AGENT_SLOTS),
      unfinished: z.array(z.object({ job_id: jobId, boss_job_id: z.string() })).max(MAX_AGENT_SLOTS * 4),
    }),
    response: okShape,
    handler: async (ctx, { body }) => {
      const agent = await agentOf(ctx);
      await agentLeave(
        ctx.services.pool,
        ctx.services.boss,
        agent,
        body.worker_names,
        body.unfinished.map((job) => ({ jobId: job.job_id, bossJobId: job.boss_job_id })),
      );
      return json({ ok: true });
    },
  }),
];
