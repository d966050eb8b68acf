import {
  addBatchJobs,
  cancelJob,
  invalidInput,
  jobLineage,
  lookUpScriptAhead,
  rerunJobs,
  runPreview,
  runScriptByHash,
  runScriptByPath,
  waitForResult,
  type BatchRequest,
  type RunOptions,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryBool, queryInt } from "../define.ts";
import type { RestContext, Route } from "../router.ts";
import { runArgs } from "./params.ts";

// Run dates are kept to years 1 to 9999, which PostgreSQL, Prisma and JavaScript all hold.
const EARLIEST_RUN_DATE = Date.parse("0001-01-01T00:00:00Z");
const LATEST_RUN_DATE = Date.parse("9999-12-31T23:59:59Z");

/** The query string of Windmill's script runs (runScriptByPath / runScriptByHash). */
const runQuery = z.object({
  scheduled_for: z.string().optional(),
  scheduled_in_secs: queryInt.optional(),
  priority: queryInt.optional(),
  tag: z.string().optional(),
  /** windmill-client sends its job's own id (WM_JOB_ID) when a job starts another. */
  parent_job: z.string().optional(),
  root_job: z.string().optional(),
  skip_preprocessor: queryBool.optional(),
  invisible_to_owner: queryBool.optional(),
  /** Windmill lets the caller choose the new job's id; Millrace does not (refused by name). */
  job_id: z.string().optional(),
});
type RunQuery = z.output<typeof runQuery>;

/** When the run is due, from `scheduled_for` or `scheduled_in_secs` (null: now). */
function scheduledFor(query: RunQuery): Date | null {
  if (query.scheduled_for) {
    const when = new Date(query.scheduled_for);
    if (Number.isNaN(when.getTime()))
      throw invalidInput("scheduled_for", `not a valid date-time: "${query.scheduled_for}"`);
    if (when.getTime() < EARLIEST_RUN_DATE || when.getTime() > LATEST_RUN_DATE)
      throw invalidInput("scheduled_for", "must be between 0001-01-01 and 9999-12-31");
    return when;
  }
  const inSecs = query.scheduled_in_secs;
  if (inSecs === undefined) return null;
  if (inSecs < 0) throw invalidInput("scheduled_in_secs", "must not be negative");
  const when = new Date(Date.now() + inSecs * 1000);
  if (!(when.getTime() <= LATEST_RUN_DATE))
    throw invalidInput("scheduled_in_secs", "is too far ahead (the run would start after the year 9999)");
  return when;
}

function runOptions(query: RunQuery): RunOptions {
  if (query.job_id !== undefined)
    throw invalidInput("job_id", "choosing the new job's id is not supported by Millrace");
  return { scheduledFor: scheduledFor(query), priority: query.priority ?? null, tag: query.tag ?? null };
}

async function waitedResult(ctx: RestContext, jobId: string): Promise<Response> {
  const membership = await ctx.membership();
  const job = await waitForResult(ctx.services, membership, jobId, ctx.services.waitResultTimeoutMs);
  return json(job.result, job.status === "success" ? 200 : 500);
}

async function runByPath(ctx: RestContext, path: string, query: RunQuery, awaited = false): Promise<string> {
  const options = runOptions(query);
  // The script's lookup and the body's read overlap the membership's; neither is used before the
  // membership is checked, and its errors still come first.
  const scriptAhead = lookUpScriptAhead(ctx.services, ctx.params.workspace ?? "", path);
  const args = runArgs(ctx);
  args.catch(() => {});
  const membership = await ctx.membership();
  const lineage = await jobLineage(ctx.services, membership, query.parent_job, query.root_job);
  return runScriptByPath(ctx.services, membership, path, await args, {
    ...options,
    awaited,
    scriptAhead,
    lineage,
  });
}

const scriptPath = z.object({ workspace: z.string(), path: z.string() });

/** Windmill's per-path options of batch_rerun_jobs. */
const rerunOptions = z.record(
  z.string(),
  z.object({
    input_transforms: z
      .record(
        z.string(),
        z.object({ type: z.string().optional(), value: z.unknown().optional(), expr: z.string().optional() }),
      )
      .optional(),
    use_latest_version: z.boolean().optional(),
  }),
);

const RUN_ANSWER = { contentType: "text/plain", description: "the new job's id" };

const previewBody = z.object({
  language: z.string(),
  content: z.string(),
  args: z.unknown().optional(),
  path: z.string().nullish(),
  // Not in Windmill's Preview: a script's `timeout`, honoured instead of silently dropped.
  timeout: z.number().nullish(),
  tag: z.string().nullish(),
});

async function startPreview(ctx: RestContext, body: z.infer<typeof previewBody>): Promise<string> {
  return runPreview(ctx.services, await ctx.membership(), {
    language: body.language,
    content: body.content,
    args: body.args ?? {},
    path: body.path ?? null,
    timeout: body.timeout ?? null,
    tag: body.tag ?? null,
  });
}

/** Windmill's BatchInfo: what add_batch_jobs starts n of. */
const batchBody = z.object({
  kind: z.enum(["noop", "script", "rawscript", "flow"]),
  path: z.string().nullish(),
  tag: z.string().nullish(),
  rawscript: z.object({ content: z.string(), language: z.string(), path: z.string().nullish() }).nullish(),
  flow_value: z.unknown().optional(),
  dedicated_worker: z.boolean().nullish(),
});

function batchRequest(body: z.infer<typeof batchBody>): BatchRequest {
  const path = () => {
    if (!body.path) throw invalidInput("path", `is required with kind "${body.kind}"`);
    return body.path;
  };
  switch (body.kind) {
    case "noop":
      return { kind: "noop", tag: body.tag };
    case "script":
      return { kind: "script", path: path(), tag: body.tag };
    case "rawscript":
      if (!body.rawscript) throw invalidInput("rawscript", 'is required with kind "rawscript"');
      return { kind: "rawscript", rawscript: { ...body.rawscript, args: {}, tag: body.tag } };
    case "flow":
      if (body.flow_value !== undefined)
        throw invalidInput("flow_value", "is not supported by Millrace: deploy the flow and give its path");
      return { kind: "flow", path: path() };
  }
}

export const jobRunRoutes: Route[] = [
  defineRoute({
    // Many identical jobs at once (load tests, fan-outs): one statement for all of them.
    method: "POST",
    pattern: "/api/w/:workspace/jobs/add_batch_jobs/:n",
    summary: "addBatchJobs",
    tag: "job",
    params: z.object({ workspace: z.string(), n: queryInt }),
    body: batchBody,
    response: z.array(z.string()),
    handler: async (ctx, { params, body }) =>
      json(await addBatchJobs(ctx.services, await ctx.membership(), batchRequest(body), params.n)),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/p/*path",
    summary: "runScriptByPath",
    tag: "job",
    params: scriptPath,
    query: runQuery,
    response: RUN_ANSWER,
    handler: async (ctx, { params, query }) => text(await runByPath(ctx, params.path, query), 201),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run_wait_result/p/*path",
    summary: "runWaitResultScriptByPath",
    tag: "job",
    params: scriptPath,
    query: runQuery,
    response: z.unknown(),
    handler: async (ctx, { params, query }) =>
      waitedResult(ctx, await runByPath(ctx, params.path, query, true)),
  }),

  defineRoute({
    // For callers that can only GET (links, some webhook senders): the args in `payload`.
    method: "GET",
    pattern: "/api/w/:workspace/jobs/run_wait_result/p/*path",
    summary: "runWaitResultScriptByPathGet",
    tag: "job",
    params: scriptPath,
    query: runQuery.extend({ payload: z.string().optional() }),
    response: z.unknown(),
    handler: async (ctx, { params, query }) =>
      waitedResult(ctx, await runByPath(ctx, params.path, query, true)),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/h/:hash",
    summary: "runScriptByHash",
    tag: "job",
    params: z.object({ workspace: z.string(), hash: z.string() }),
    query: runQuery,
    response: RUN_ANSWER,
    handler: async (ctx, { params, query }) => {
      const options = runOptions(query);
      const args = runArgs(ctx);
      args.catch(() => {});
      const membership = await ctx.membership();
      const lineage = await jobLineage(ctx.services, membership, query.parent_job, query.root_job);
      const id = await runScriptByHash(ctx.services, membership, params.hash, await args, {
        ...options,
        lineage,
      });
      return text(id, 201);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/preview",
    summary: "runScriptPreview",
    tag: "job",
    body: previewBody,
    response: RUN_ANSWER,
    handler: async (ctx, { body }) => text(await startPreview(ctx, body), 201),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run_wait_result/preview",
    summary: "runWaitResultScriptPreview",
    tag: "job",
    body: previewBody,
    response: z.unknown(),
    handler: async (ctx, { body }) => waitedResult(ctx, await startPreview(ctx, body)),
  }),

  defineRoute({
    // `wmill job rerun`: one line per job, the new job's id or `Error: …`.
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/batch_rerun_jobs",
    summary: "batchReRunJobs",
    tag: "job",
    body: z.object({
      job_ids: z.array(z.string()),
      script_options_by_path: rerunOptions.optional(),
      flow_options_by_path: rerunOptions.optional(),
    }),
    response: { contentType: "text/plain", description: "the new jobs' ids, one a line" },
    handler: async (ctx, { body }) => {
      const lines = await rerunJobs(ctx.services, await ctx.membership(), {
        jobIds: body.job_ids,
        scriptOptions: body.script_options_by_path,
        flowOptions: body.flow_options_by_path,
      });
      return text(lines.join("\n"), 201);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs_u/queue/cancel/:id",
    summary: "cancelQueuedJob",
    tag: "job",
    params: z.object({ workspace: z.string(), id: z.string() }),
    body: z.object({ reason: z.string().nullish() }),
    response: { contentType: "text/plain", description: "job <id> canceled" },
    handler: async (ctx, { params, body }) => {
      const { id, state } = await cancelJob(
        ctx.services,
        await ctx.membership(),
        params.id,
        body.reason ?? null,
      );
      return text(state === "canceled" ? `job ${id} canceled` : `job ${id} is being canceled`);
    },
  }),
];
