import type { Job } from "@millrace/db";
import { AppError, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../workspaces.ts";
import { JOB_DONE_CHANNEL } from "./events.ts";
import type { JobsContext } from "./run.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type JobWithLogs = Job & { logs: string };

/** A job of the caller's workspace; another workspace's id gives the same NOT_FOUND as no job. */
export async function getJob(ctx: JobsContext, membership: Membership, id: string): Promise<JobWithLogs> {
  requirePermission(membership, "job.read");
  if (!UUID.test(id)) throw notFound(`job ${id}`);
  const job = await ctx.db.job.findFirst({
    where: { id, workspaceId: membership.workspace.id },
    include: { log: true },
  });
  if (!job) throw notFound(`job ${id}`);
  const { log, ...rest } = job;
  return { ...rest, logs: log?.logs ?? "" };
}

export function isFinished(job: Pick<Job, "status">): boolean {
  return job.status === "success" || job.status === "failure" || job.status === "canceled";
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
  let wake: () => void = () => {};
  const unsubscribe = ctx.events.on(JOB_DONE_CHANNEL, id, () => wake());
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const job = await getJob(ctx, membership, id);
      if (isFinished(job)) return job;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new AppError(
          "LIMIT_EXCEEDED",
          `timed out after ${Math.round(timeoutMs / 1000)} s waiting for job ${id}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 2000));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    unsubscribe();
  }
}

export interface ListJobsInput {
  page?: number;
  perPage?: number;
  scriptPathExact?: string;
}

export async function listJobs(
  ctx: JobsContext,
  membership: Membership,
  input: ListJobsInput = {},
): Promise<Job[]> {
  requirePermission(membership, "job.read");
  const perPage = Math.min(Math.max(input.perPage ?? 50, 1), 1000);
  const page = Math.max(input.page ?? 1, 1);
  return ctx.db.job.findMany({
    where: {
      workspaceId: membership.workspace.id,
      ...(input.scriptPathExact ? { scriptPath: input.scriptPathExact } : {}),
    },
    orderBy: { createdAt: "desc" },
    skip: (page - 1) * perPage,
    take: perPage,
  });
}
