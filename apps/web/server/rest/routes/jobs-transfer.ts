import {
  creatorEmails,
  deleteJobs,
  exportJobs,
  importCompletedJobs,
  importQueuedJobs,
  type ExportedJob,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryInt } from "../define.ts";
import type { RestContext, Route } from "../router.ts";
import { windmillJob } from "../shapes.ts";
import { textAnswer } from "./params.ts";

// `wmill jobs pull` / `wmill jobs push` (workspace admins): see core jobs/transfer.ts.

const pageQuery = z.object({ page: queryInt.optional(), per_page: queryInt.optional() });

/** Windmill's ExportableCompletedJob / ExportableQueuedJob: the job with its logs and code. */
async function exportable(ctx: RestContext, jobs: ExportedJob[]) {
  const emails = await creatorEmails(
    ctx.services,
    jobs.map((job) => job.createdBy),
  );
  return jobs.map((job) => ({
    ...windmillJob(job, emails.get(job.createdBy) ?? job.createdBy),
    logs: job.logs,
    raw_code: job.content ?? undefined,
    raw_lock: job.lock ?? undefined,
    raw_flow: job.rawFlow ?? undefined,
    flow_status: job.flowStatus ?? undefined,
    status: job.status,
  }));
}

const exportedShape = z.array(
  z.looseObject({ id: z.string(), job_kind: z.string(), created_by: z.string(), email: z.string() }),
);

// Windmill's job kinds as Millrace stores them.
const STORED_KINDS: Record<string, string> = { dependencies: "dependency", identity: "noop" };
const storedKind = z
  .enum(["script", "preview", "dependencies", "flow", "flowpreview", "identity", "flowscript"])
  .transform((kind) => STORED_KINDS[kind] ?? kind);
const dateTime = z.iso.datetime({ offset: true }).transform((value) => new Date(value));
const jsonObject = z.record(z.string(), z.unknown());

const completedJob = z.looseObject({
  id: z.uuid(),
  job_kind: storedKind,
  status: z.enum(["success", "failure", "canceled", "skipped"]).optional(),
  success: z.boolean().optional(),
  canceled: z.boolean().optional(),
  script_path: z.string().nullish(),
  script_hash: z.string().nullish(),
  language: z.string().nullish(),
  raw_code: z.string().nullish(),
  args: jsonObject.nullish(),
  result: z.unknown().optional(),
  logs: z.string().nullish(),
  tag: z.string().nullish(),
  priority: z.number().int().nullish(),
  created_by: z.string(),
  permissioned_as: z.string(),
  created_at: dateTime,
  started_at: dateTime.nullish(),
  completed_at: dateTime.nullish(),
  canceled_by: z.string().nullish(),
  canceled_reason: z.string().nullish(),
  parent_job: z.uuid().nullish(),
  raw_flow: z.unknown().optional(),
  flow_status: z.unknown().optional(),
  flow_step_id: z.string().nullish(),
});

/** The outcome an export states: `status` where it has one, else Windmill's flags. */
function finalStatus(job: z.output<typeof completedJob>): "success" | "failure" | "canceled" {
  if (job.status === "skipped") return "success";
  if (job.status) return job.status;
  if (job.canceled || job.canceled_by) return "canceled";
  return job.success === false ? "failure" : "success";
}

const queuedJob = z.looseObject({
  job_kind: z.string(),
  script_path: z.string().nullish(),
  script_hash: z.string().nullish(),
  args: jsonObject.nullish(),
  scheduled_for: dateTime.nullish(),
  priority: z.number().int().nullish(),
});

export const jobTransferRoutes: Route[] = [
  ...(["completed", "queue"] as const).map((scope) =>
    defineRoute({
      method: "GET",
      pattern: `/api/w/:workspace/jobs/${scope}/export`,
      summary: scope === "completed" ? "exportCompletedJobs" : "exportQueuedJobs",
      tag: "job",
      query: pageQuery,
      response: exportedShape,
      handler: async (ctx, { query }) => {
        const jobs = await exportJobs(
          ctx.services,
          await ctx.membership(),
          scope === "completed" ? "completed" : "queued",
          query.page,
          query.per_page,
        );
        return json(await exportable(ctx, jobs));
      },
    }),
  ),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/completed/import",
    summary: "importCompletedJobs",
    tag: "job",
    body: z.array(completedJob),
    response: textAnswer("Imported <n> completed jobs"),
    handler: async (ctx, { body }) => {
      const count = await importCompletedJobs(
        ctx.services,
        await ctx.membership(),
        body.map((job) => ({
          id: job.id,
          kind: job.job_kind,
          status: finalStatus(job),
          scriptPath: job.script_path,
          scriptHash: job.script_hash,
          language: job.language,
          content: job.raw_code,
          args: job.args,
          result: job.result,
          logs: job.logs,
          tag: job.tag,
          priority: job.priority,
          createdBy: job.created_by,
          permissionedAs: job.permissioned_as,
          createdAt: job.created_at,
          startedAt: job.started_at,
          completedAt: job.completed_at,
          canceledBy: job.canceled_by,
          cancelReason: job.canceled_reason,
          parentJobId: job.parent_job,
          rawFlow: job.raw_flow,
          flowStatus: job.flow_status,
          flowStepId: job.flow_step_id,
        })),
      );
      return text(`Imported ${count} completed jobs`);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/queue/import",
    summary: "importQueuedJobs",
    tag: "job",
    body: z.array(queuedJob),
    response: textAnswer("Imported <n> queued jobs (started again here as new jobs): <ids>"),
    handler: async (ctx, { body }) => {
      const ids = await importQueuedJobs(
        ctx.services,
        await ctx.membership(),
        body.map((job) => ({
          kind: job.job_kind,
          scriptPath: job.script_path,
          scriptHash: job.script_hash,
          args: job.args,
          scheduledFor: job.scheduled_for,
          priority: job.priority,
        })),
      );
      return text(`Imported ${ids.length} queued jobs (started again here as new jobs): ${ids.join(", ")}`);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/delete",
    summary: "deleteJobs",
    tag: "job",
    body: z.array(z.uuid()),
    response: textAnswer("Deleted <n> jobs"),
    handler: async (ctx, { body }) => {
      const count = await deleteJobs(ctx.services, await ctx.membership(), body);
      return text(`Deleted ${count} jobs`);
    },
  }),
];
