import { z } from "zod";
import { getJob, listJobs, parseJobListQuery } from "@millrace/core";
import type { Job } from "@millrace/db";
import { router, workspaceProcedure } from "../init.ts";

/** Characters of a job's arguments a list shows (the run page has them whole). */
export const ARGS_PREVIEW_CHARS = 300;

/** The Runs page's trigger filter values; "preview" is a test run from the editor. */
export const JOB_TRIGGERS = [
  "manual",
  "api",
  "webhook",
  "schedule",
  "job",
  "flow",
  "deploy",
  "preview",
] as const;

/** Test runs from the script editor (preview) and from the flow editor (flowpreview). */
const EDITOR_TEST_KINDS = ["preview", "flowpreview"];

/**
 * What started a job: the editor's test runs are told by their kind, everything else by the
 * trigger recorded at enqueue (job.trigger_kind). Jobs from before that column: by their schedule.
 */
export function jobTrigger(job: Pick<Job, "schedulePath" | "kind" | "triggerKind">): string {
  if (EDITOR_TEST_KINDS.includes(job.kind)) return "preview";
  if (job.triggerKind) return job.triggerKind;
  if (job.schedulePath) return "schedule";
  if (job.kind === "dependency") return "deploy";
  return "manual";
}

function argsPreview(args: unknown): string {
  const text = JSON.stringify(args ?? {});
  return text.length > ARGS_PREVIEW_CHARS ? `${text.slice(0, ARGS_PREVIEW_CHARS)}…` : text;
}

/** A job in a list: no result or logs, which can be large, and its arguments cut short. */
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
    schedulePath: job.schedulePath,
    trigger: jobTrigger(job),
    argsPreview: argsPreview(job.args),
  };
}

/**
 * The arguments in the signature's order (job.arg_order), then any others: jsonb keeps keys
 * shortest first, so the run page listed `mid, zeta, alpha` for `main(zeta, alpha, mid)`.
 */
export function orderedArgs(args: Job["args"], order: string[]): Job["args"] {
  if (!args || typeof args !== "object" || Array.isArray(args)) return args;
  const record = args as Record<string, Job["args"]>;
  const keys = [
    ...order.filter((key) => key in record),
    ...Object.keys(record).filter((key) => !order.includes(key)),
  ];
  return Object.fromEntries(keys.map((key) => [key, record[key]]));
}

/** A whole job: its summary plus args, result, logs and worker. */
export function jobView(job: Job & { logs?: string }) {
  return {
    ...jobSummaryView(job),
    args: orderedArgs(job.args, job.argOrder ?? []),
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
        /** The Runs page's trigger filter (see jobTrigger): not a Windmill parameter. */
        trigger: z.enum(JOB_TRIGGERS).optional(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const { trigger, ...query } = input;
      const filters = parseJobListQuery(query);
      if (trigger === "preview") filters.jobKinds = { in: EDITOR_TEST_KINDS };
      else if (trigger) {
        filters.triggerKind = { in: [trigger] };
        // A flow test started by hand is an editor test, not a manual run.
        filters.jobKinds ??= { notIn: EDITOR_TEST_KINDS };
      }
      const jobs = await listJobs(ctx.services, ctx.membership, filters);
      return jobs.map(jobSummaryView);
    }),
});
