import {
  AppError,
  checkJobListParams,
  countCompletedJobsByTag,
  databaseClock,
  creatorEmails,
  getJob,
  getJobLogs,
  getJobProgress,
  getJobUpdate,
  getResultMaybe,
  getRootJobId,
  invalidInput,
  isFinished,
  JOB_LIST_PARAMS,
  jobScheduledFor,
  listJobs,
  parseJobListQuery,
  queuePosition,
  setJobProgress,
  streamJobUpdates,
  type JobListQuery,
  type JobUpdate,
  type ListJobsInput,
} from "@millrace/core";
import type { Job } from "@millrace/db";
import { z } from "zod";
import { json, logInternalError, text } from "../../http.ts";
import { defineRoute, queryBool, queryInt } from "../define.ts";
import type { RestContext, Route } from "../router.ts";
import { windmillJob, windmillJobShape } from "../shapes.ts";

const HEARTBEAT_MS = 15_000;

function listQuery(ctx: RestContext): JobListQuery {
  checkJobListParams(ctx.url.searchParams.keys());
  const query: JobListQuery = {};
  for (const name of JOB_LIST_PARAMS) query[name] = ctx.url.searchParams.get(name);
  return query;
}

/** Windmill's Jobs, each with its starter's email address. */
async function windmillJobs(ctx: RestContext, jobs: (Job & { logs?: string })[]) {
  const emails = await creatorEmails(
    ctx.services,
    jobs.map((job) => job.createdBy),
  );
  return jobs.map((job) => windmillJob(job, emails.get(job.createdBy) ?? job.createdBy));
}

async function windmillJobOf(ctx: RestContext, job: Job & { logs?: string }) {
  return (await windmillJobs(ctx, [job]))[0]!;
}

// The list filters Millrace takes (the handler refuses the others by name, see checkJobListParams).
const listQuerySchema = z.object(
  Object.fromEntries(JOB_LIST_PARAMS.map((name) => [name, z.string().optional()])) as Record<
    (typeof JOB_LIST_PARAMS)[number],
    z.ZodOptional<z.ZodString>
  >,
);

function listRoute(pattern: string, summary: string, scope: ListJobsInput["scope"]): Route {
  return defineRoute({
    method: "GET",
    pattern,
    summary,
    tag: "job",
    query: listQuerySchema,
    response: z.array(windmillJobShape),
    handler: async (ctx) => {
      const membership = await ctx.membership();
      const jobs = await listJobs(ctx.services, membership, { ...parseJobListQuery(listQuery(ctx)), scope });
      return json(await windmillJobs(ctx, jobs));
    },
  });
}

const jobId = z.object({ workspace: z.string(), id: z.string() });

/** windmill-client's JobUpdate. */
const jobUpdateShape = z.object({
  running: z.boolean(),
  completed: z.boolean(),
  new_logs: z.string(),
  log_offset: z.number(),
  progress: z.number().optional(),
  job: windmillJobShape.optional(),
});

// The viewer's offset comes from Last-Event-ID first (see logOffset): declared for the document.
const updateQuery = z.object({
  log_offset: z.string().optional(),
  get_progress: queryBool.optional(),
});

/**
 * The viewer's log offset: EventSource resends the last event id on reconnect, which is newer
 * than the `log_offset` of the URL it first opened.
 */
function logOffset(ctx: RestContext): number {
  const lastEventId = ctx.request.headers.get("last-event-id");
  const raw = lastEventId?.trim() || ctx.url.searchParams.get("log_offset") || "0";
  if (!/^\d+$/.test(raw)) throw invalidInput("log_offset", `must be a whole number, 0 or more, got "${raw}"`);
  return Number(raw);
}

/** Windmill's JobUpdate (getJobUpdates / getJobUpdatesSse); the SSE completed event adds `job`. */
async function windmillUpdate(ctx: RestContext, update: JobUpdate, progress?: number | null) {
  return {
    running: update.running,
    completed: update.completed,
    new_logs: update.newLogs,
    log_offset: update.logOffset,
    ...(progress !== undefined && progress !== null ? { progress } : {}),
    ...(update.job ? { job: await windmillJobOf(ctx, update.job) } : {}),
  };
}

async function sse(ctx: RestContext): Promise<Response> {
  const membership = await ctx.membership();
  const abort = new AbortController();
  const stop = () => abort.abort();
  ctx.request.signal.addEventListener("abort", stop);
  const updates = streamJobUpdates(ctx.services, membership, ctx.params.id ?? "", {
    logOffset: logOffset(ctx),
    signal: abort.signal,
  });
  // The first update checks access: a 404 or 400 is answered as such, not as an empty stream.
  let first: IteratorResult<JobUpdate>;
  try {
    first = await updates.next();
  } catch (error) {
    ctx.request.signal.removeEventListener("abort", stop);
    throw error;
  }
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const send = (text: string) => {
        if (!open) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      const heartbeat = setInterval(() => send(": ping\n\n"), HEARTBEAT_MS);
      const pump = async () => {
        try {
          send("retry: 1000\n\n");
          for (let next = first; !next.done; next = await updates.next()) {
            const update = await windmillUpdate(ctx, next.value);
            send(`id: ${next.value.logOffset}\ndata: ${JSON.stringify(update)}\n\n`);
          }
        } catch (error) {
          // The browser reconnects with its last event id and resumes; nothing is lost.
          if (!abort.signal.aborted) logInternalError(error, { route: "job update stream" });
        } finally {
          open = false;
          clearInterval(heartbeat);
          ctx.request.signal.removeEventListener("abort", stop);
          await updates.return();
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        }
      };
      void pump();
    },
    cancel: stop,
  });
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      // no-transform keeps compression from buffering events; nginx reads X-Accel-Buffering.
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    },
  });
}

function notCompleted(id: string): AppError {
  return new AppError("NOT_FOUND", `job ${id} has not completed yet`);
}

export const jobReadRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/get/:id",
    summary: "getJob",
    tag: "job",
    params: jobId,
    query: z.object({ no_logs: queryBool.optional(), no_code: queryBool.optional() }),
    response: windmillJobShape,
    handler: async (ctx, { params, query }) => {
      const membership = await ctx.membership();
      const job = await getJob(ctx.services, membership, params.id, { withLogs: query.no_logs !== true });
      const answer = await windmillJobOf(ctx, job);
      if (query.no_code) delete (answer as { raw_code?: string }).raw_code;
      return json(answer);
    },
  }),

  defineRoute({
    // Windmill's getCompletedJob (what `wmill flow run` and `wmill script run` poll): a 404 until
    // the job has finished.
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/completed/get/:id",
    summary: "getCompletedJob",
    tag: "job",
    params: jobId,
    response: windmillJobShape,
    handler: async (ctx, { params }) => {
      const job = await getJob(ctx.services, await ctx.membership(), params.id);
      if (!isFinished(job)) throw notCompleted(job.id);
      return json(await windmillJobOf(ctx, job));
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/completed/get_result/:id",
    summary: "getCompletedJobResult",
    tag: "job",
    params: jobId,
    response: z.unknown(),
    handler: async (ctx, { params }) => {
      const job = await getJob(ctx.services, await ctx.membership(), params.id, { withLogs: false });
      if (!isFinished(job)) throw notCompleted(job.id);
      return json(job.result);
    },
  }),

  defineRoute({
    // windmill-client's waitJob and `wmill script run` poll this until `completed`.
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/completed/get_result_maybe/:id",
    summary: "getCompletedJobResultMaybe",
    tag: "job",
    params: jobId,
    query: z.object({ get_started: queryBool.optional() }),
    response: z.object({
      completed: z.boolean(),
      result: z.unknown(),
      success: z.boolean(),
      started: z.boolean(),
    }),
    handler: async (ctx, { params }) =>
      json(await getResultMaybe(ctx.services, await ctx.membership(), params.id)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/get_logs/:id",
    summary: "getJobLogs",
    tag: "job",
    params: jobId,
    query: z.object({ remove_ansi_warnings: queryBool.optional() }),
    response: { contentType: "text/plain", description: "the job's log" },
    handler: async (ctx, { params }) =>
      text(await getJobLogs(ctx.services, await ctx.membership(), params.id)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/get_root_job_id/:id",
    summary: "getRootJobId",
    tag: "job",
    params: jobId,
    response: z.string(),
    handler: async (ctx, { params }) =>
      json(await getRootJobId(ctx.services, await ctx.membership(), params.id)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/getupdate/:id",
    summary: "getJobUpdates",
    tag: "job",
    params: jobId,
    query: updateQuery,
    response: jobUpdateShape,
    handler: async (ctx, { params, query }) => {
      const membership = await ctx.membership();
      const update = await getJobUpdate(ctx.services, membership, params.id, logOffset(ctx));
      const progress = query.get_progress
        ? await getJobProgress(ctx.services, membership, params.id)
        : undefined;
      return json(await windmillUpdate(ctx, update, progress));
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/getupdate_sse/:id",
    summary: "getJobUpdatesSse",
    tag: "job",
    params: jobId,
    query: updateQuery,
    response: { contentType: "text/event-stream", description: "JobUpdate events until the job ends" },
    handler: sse,
  }),

  defineRoute({
    // What `wmill script run` reports while a job waits.
    method: "GET",
    pattern: "/api/w/:workspace/jobs/queue/position/:scheduled_for",
    summary: "getQueuePosition",
    tag: "job",
    params: z.object({ workspace: z.string(), scheduled_for: queryInt }),
    response: z.object({ position: z.number().optional() }),
    handler: async (ctx, { params }) => {
      const position = await queuePosition(ctx.services, await ctx.membership(), params.scheduled_for);
      return json(position === null ? {} : { position });
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/jobs/queue/scheduled_for/:id",
    summary: "getScheduledFor",
    tag: "job",
    params: jobId,
    response: z.number(),
    handler: async (ctx, { params }) =>
      json(await jobScheduledFor(ctx.services, await ctx.membership(), params.id)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/job_metrics/get_progress/:id",
    summary: "getJobProgress",
    tag: "job",
    params: jobId,
    response: z.number().nullable(),
    handler: async (ctx, { params }) =>
      json(await getJobProgress(ctx.services, await ctx.membership(), params.id)),
  }),

  defineRoute({
    // windmill-client's setProgress (from inside the job, with its token).
    method: "POST",
    pattern: "/api/w/:workspace/job_metrics/set_progress/:id",
    summary: "setJobProgress",
    tag: "job",
    params: jobId,
    body: z.object({
      percent: z.number({ error: "must be a number from 0 to 99" }),
      flow_job_id: z.string().nullish(),
    }),
    response: { contentType: "text/plain", description: "Job progress updated" },
    handler: async (ctx, { params, body }) => {
      await setJobProgress(ctx.services, await ctx.membership(), params.id, body.percent);
      return text("Job progress updated");
    },
  }),

  defineRoute({
    // `wmill queues`: completed jobs per tag (requests per second, over 30 s to 24 h).
    method: "GET",
    pattern: "/api/jobs/completed/count_by_tag",
    summary: "countJobsByTag",
    tag: "job",
    query: z.object({ horizon_secs: queryInt.optional(), workspace_id: z.string().optional() }),
    response: z.array(z.object({ tag: z.string(), count: z.number() })),
    handler: async (ctx, { query }) =>
      json(
        await countCompletedJobsByTag(ctx.services, await ctx.principal(), {
          horizonSecs: query.horizon_secs,
          workspaceId: query.workspace_id || undefined,
        }),
      ),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/jobs/db_clock",
    summary: "getDbClock",
    tag: "job",
    response: z.number(),
    handler: async (ctx) => {
      await ctx.principal();
      return json(await databaseClock(ctx.services));
    },
  }),

  listRoute("/api/w/:workspace/jobs/list", "listJobs", "all"),
  listRoute("/api/w/:workspace/jobs/queue/list", "listQueue", "queue"),
  listRoute("/api/w/:workspace/jobs/completed/list", "listCompletedJobs", "completed"),
];
