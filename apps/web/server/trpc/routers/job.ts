import { z } from "zod";
import { getJob, listJobs } from "@millrace/core";
import type { Job } from "@millrace/db";
import { router, workspaceProcedure } from "../init.ts";

export function jobView(job: Job & { logs?: string }) {
  return {
    id: job.id,
    kind: job.kind,
    scriptPath: job.scriptPath,
    language: job.language,
    status: job.status,
    args: job.args,
    result: job.result,
    logs: job.logs ?? null,
    tag: job.tag,
    createdBy: job.createdBy,
    createdAt: job.createdAt.toISOString(),
    startedAt: job.startedAt?.toISOString() ?? null,
    completedAt: job.completedAt?.toISOString() ?? null,
    workerName: job.workerName,
  };
}

export const jobReadRouter = router({
  get: workspaceProcedure
    .input(z.object({ id: z.string() }))
    .query(async ({ ctx, input }) => jobView(await getJob(ctx.services, ctx.membership, input.id))),
  list: workspaceProcedure
    .input(z.object({ scriptPath: z.string().optional(), page: z.number().int().min(1).default(1) }))
    .query(async ({ ctx, input }) =>
      (
        await listJobs(ctx.services, ctx.membership, { scriptPathExact: input.scriptPath, page: input.page })
      ).map(jobView),
    ),
});
