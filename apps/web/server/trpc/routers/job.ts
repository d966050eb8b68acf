import { z } from "zod";
import { getJob, listJobs, parseJobListQuery } from "@millrace/core";
import type { Job } from "@millrace/db";
import { router, workspaceProcedure } from "../init.ts";

/** A job in a list: no args, result or logs, which can be large. */
export function jobSummaryView(job: Job) {
  return {
    id: job.id,
    kind: job.kind,
    scriptPath: job.scriptPath,
    language: job.language,
    status: job.status,
    tag: job.tag,
    createdBy: job.createdBy,
    createdAt: job.createdAt.toISOString(),
    startedAt: job.startedAt?.toISOString() ?? null,
    completedAt: job.completedAt?.toISOString() ?? null,
    canceledBy: job.canceledBy,
  };
}

/** A whole job: its summary plus args, result, logs and worker. */
export function jobView(job: Job & { logs?: string }) {
  return {
    ...jobSummaryView(job),
    args: job.args,
    result: job.result,
    logs: job.logs ?? null,
    workerName: job.workerName,
    cancelReason: job.cancelReason,
  };
}

const filterText = z.string().max(2000).optional();

export const jobReadRouter = router({
  get: workspaceProcedure
    .input(z.object({ id: z.string(), withLogs: z.boolean().default(true) }))
    .query(async ({ ctx, input }) =>
      jobView(await getJob(ctx.services, ctx.membership, input.id, { withLogs: input.withLogs })),
    ),
  // The filters take Windmill's REST parameter names and text values, so that the Runs page's URL,
  // the REST API and the error's `field` all name a filter the same way.
  list: workspaceProcedure
    .input(
      z.object({
        script_path_exact: filterText,
        script_path_start: filterText,
        created_by: filterText,
        tag: filterText,
        job_kinds: filterText,
        status: filterText,
        running: filterText,
        success: filterText,
        created_before: filterText,
        created_after: filterText,
        page: filterText,
        per_page: filterText,
        schedule_path: filterText,
        label: filterText,
      }),
    )
    .query(async ({ ctx, input }) => {
      const filters = parseJobListQuery(input);
      const jobs = await listJobs(ctx.services, ctx.membership, filters);
      return jobs.map(jobSummaryView);
    }),
});
