import {
  AppError,
  checkJobListParams,
  getJob,
  getJobUpdate,
  invalidInput,
  isFinished,
  JOB_LIST_PARAMS,
  listJobs,
  parseJobListQuery,
  streamJobUpdates,
  type JobListQuery,
  type JobUpdate,
  type ListJobsInput,
} from "@millrace/core";
import { json, logInternalError } from "../../http.ts";
import type { RestContext, Route } from "../router.ts";
import { windmillJob } from "../shapes.ts";

const HEARTBEAT_MS = 15_000;

function listQuery(ctx: RestContext): JobListQuery {
  checkJobListParams(ctx.url.searchParams.keys());
  const query: JobListQuery = {};
  for (const name of JOB_LIST_PARAMS) query[name] = ctx.url.searchParams.get(name);
  return query;
}

function listRoute(pattern: string, scope: ListJobsInput["scope"]): Route {
  return {
    method: "GET",
    pattern,
    handler: async (ctx) => {
      const membership = await ctx.membership();
      const jobs = await listJobs(ctx.services, membership, { ...parseJobListQuery(listQuery(ctx)), scope });
      return json(jobs.map((job) => windmillJob(job)));
    },
  };
}

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
function windmillUpdate(update: JobUpdate) {
  return {
    running: update.running,
    completed: update.completed,
    new_logs: update.newLogs,
    log_offset: update.logOffset,
    ...(update.job ? { job: windmillJob(update.job) } : {}),
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
            send(`id: ${next.value.logOffset}\ndata: ${JSON.stringify(windmillUpdate(next.value))}\n\n`);
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

export const jobReadRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/get/:id",
    handler: async (ctx) =>
      json(windmillJob(await getJob(ctx.services, await ctx.membership(), ctx.params.id ?? ""))),
  },

  {
    // Windmill's getCompletedJob (what `wmill flow run` and `wmill script run` poll): a 404 until
    // the job has finished.
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/completed/get/:id",
    handler: async (ctx) => {
      const job = await getJob(ctx.services, await ctx.membership(), ctx.params.id ?? "");
      if (!isFinished(job)) throw new AppError("NOT_FOUND", `job ${job.id} has not completed yet`);
      return json(windmillJob(job));
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/completed/get_result/:id",
    handler: async (ctx) => {
      const job = await getJob(ctx.services, await ctx.membership(), ctx.params.id ?? "", {
        withLogs: false,
      });
      if (!isFinished(job)) throw new AppError("NOT_FOUND", `job ${job.id} has not completed yet`);
      return json(job.result);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/getupdate/:id",
    handler: async (ctx) => {
      const update = await getJobUpdate(
        ctx.services,
        await ctx.membership(),
        ctx.params.id ?? "",
        logOffset(ctx),
      );
      return json(windmillUpdate(update));
    },
  },

  { method: "GET", pattern: "/api/w/:workspace/jobs_u/getupdate_sse/:id", handler: sse },

  listRoute("/api/w/:workspace/jobs/list", "all"),
  listRoute("/api/w/:workspace/jobs/queue/list", "queue"),
  listRoute("/api/w/:workspace/jobs/completed/list", "completed"),
];
