// Windmill's flow endpoints (windmill-client: createFlow, updateFlow, getFlowByPath, listFlows,
// existsFlowByPath, archiveFlowByPath, deleteFlowByPath, getFlowHistory, runFlowByPath,
// runWaitResultFlowByPath, runFlowPreview): thin adapters over packages/core/src/flows.
import {
  archiveFlow,
  createFlow,
  deleteFlowIfPresent,
  flowExists,
  flowHistory,
  flowVersion,
  getFlow,
  getFlowUserState,
  listFlows,
  runFlowByPath,
  runFlowPreview,
  setFlowUserState,
  updateFlow,
  waitForFlowResult,
  type DeployedFlowAnswer,
  type TriggerEvent,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryBool, queryInt } from "../define.ts";
import type { RestContext, Route } from "../router.ts";
import { runArgs, textAnswer, workspacePath } from "./params.ts";

// OpenFlowWPath / EditFlow (plus deployment_message): the flow's value is checked by core, which
// names the step and field at fault. Fields Millrace does not use yet pass through.
const flowBody = z.looseObject({
  path: z.string().optional(),
  summary: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
  value: z.unknown(),
  schema: z.record(z.string(), z.unknown()).nullable().optional(),
  deployment_message: z.string().nullable().optional(),
  // Millrace's conflict protection: the version_id (flows/get) the update replaces.
  parent_version: z.number().int().nullable().optional(),
});

const archiveBody = z.looseObject({ archived: z.boolean().optional() });

const previewBody = z.looseObject({
  value: z.unknown(),
  args: z.record(z.string(), z.unknown()).nullable().optional(),
  path: z.string().nullable().optional(),
});

/** windmill-client's Flow (OpenFlow with its path and who deployed it). */
const windmillFlowShape = z.object({
  workspace_id: z.string(),
  path: z.string(),
  summary: z.string(),
  description: z.string(),
  value: z.record(z.string(), z.unknown()),
  schema: z.record(z.string(), z.unknown()).nullable(),
  archived: z.boolean(),
  edited_by: z.string(),
  edited_at: z.string(),
  version_id: z.number(),
  extra_perms: z.record(z.string(), z.boolean()),
});

/** A run's arguments: a JSON object, or any other body as `{ body }` (read from the request). */
const runArgsBody = "the arguments: a JSON object, or any other body as { body }";

// Credentials never reach a preprocessor.
const HIDDEN_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);

/**
 * The trigger event a flow's preprocessor receives for a run through this API, as Windmill's
 * webhooks give it; none when the caller asked to skip it (Windmill's UI does).
 */
function webhookEvent(ctx: RestContext, args: unknown): TriggerEvent | null {
  const url = new URL(ctx.request.url);
  const skip = url.searchParams.get("skip_preprocessor");
  if (skip === "true" || skip === "1") return null;
  const query = Object.fromEntries([...url.searchParams].filter(([name]) => name !== "skip_preprocessor"));
  const headers = Object.fromEntries(
    [...ctx.request.headers].filter(([name]) => !HIDDEN_HEADERS.has(name.toLowerCase())),
  );
  return { kind: "webhook", body: args, raw_string: JSON.stringify(args), query, headers };
}

/** `awaited`: run_wait_result, whose caller learns nothing before the flow's end (RunOptions.awaited). */
async function runByPath(ctx: RestContext, path: string, awaited = false): Promise<string> {
  const args = runArgs(ctx);
  args.catch(() => {});
  const membership = await ctx.membership();
  const given = await args;
  return runFlowByPath(ctx.services, membership, path, given, { awaited, event: webhookEvent(ctx, given) });
}

/**
 * A deploy's answer: the path, as Windmill's (wmill reads it as text), and what will fail when the
 * flow runs (hub scripts, scripts not deployed yet) in `x-millrace-warnings`, URI-encoded JSON.
 */
function deployed(flow: DeployedFlowAnswer, status: number): Response {
  const response = text(flow.path, status);
  if (flow.warnings.length > 0) {
    response.headers.set("x-millrace-warnings", encodeURIComponent(JSON.stringify(flow.warnings)));
  }
  return response;
}

async function startFlowPreview(ctx: RestContext, body: z.infer<typeof previewBody>): Promise<string> {
  return runFlowPreview(ctx.services, await ctx.membership(), {
    value: body.value,
    args: body.args ?? {},
    path: body.path ?? null,
  });
}

/** run_wait_result: 200 with the result, 500 with the error when the flow failed. */
async function waitedFlowResult(ctx: RestContext, id: string): Promise<Response> {
  // A flow with early_return answers its named step's result as soon as that step is done.
  const job = await waitForFlowResult(
    ctx.services,
    await ctx.membership(),
    id,
    ctx.services.waitResultTimeoutMs,
  );
  return json(job.result, job.status === "success" ? 200 : 500);
}

const userStateParams = z.object({ workspace: z.string(), id: z.string(), key: z.string() });

export const flowRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/flows/create",
    summary: "createFlow",
    tag: "flow",
    body: flowBody,
    response: textAnswer("the path of the new flow"),
    handler: async (ctx, { body }) => {
      return deployed(await createFlow(ctx.services, await ctx.membership(), body), 201);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/flows/update/*path",
    summary: "updateFlow",
    tag: "flow",
    params: workspacePath,
    body: flowBody,
    response: textAnswer("the path of the flow"),
    handler: async (ctx, { params, body }) => {
      return deployed(await updateFlow(ctx.services, await ctx.membership(), params.path, body), 200);
    },
  }),

  defineRoute({
    // Windmill's getFlowVersion (`wmill flow show-version`); before flows/get/*path, which would
    // take `v/<id>` for a path.
    method: "GET",
    pattern: "/api/w/:workspace/flows/get/v/:version",
    summary: "getFlowVersion",
    tag: "flow",
    params: z.object({ workspace: z.string(), version: z.string() }),
    response: windmillFlowShape.extend({ id: z.number(), deployment_msg: z.string().optional() }),
    handler: async (ctx, { params }) =>
      json(await flowVersion(ctx.services, await ctx.membership(), params.version)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/flows/get/*path",
    summary: "getFlowByPath",
    tag: "flow",
    params: workspacePath,
    // windmill-client's GetFlowByPathResponse: Flow & UserDraftOverlay (no drafts here).
    response: windmillFlowShape.extend({ is_draft: z.literal(false) }),
    handler: async (ctx, { params }) =>
      json({ ...(await getFlow(ctx.services, await ctx.membership(), params.path)), is_draft: false }),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/flows/list",
    summary: "listFlows",
    tag: "flow",
    query: z.object({
      page: queryInt.optional(),
      per_page: queryInt.optional(),
      path_start: z.string().optional(),
      path_exact: z.string().optional(),
      created_by: z.string().optional(),
      show_archived: queryBool.optional(),
      order_desc: queryBool.optional(),
    }),
    response: z.array(windmillFlowShape),
    handler: async (ctx, { query }) =>
      json(
        await listFlows(ctx.services, await ctx.membership(), {
          page: query.page,
          perPage: query.per_page,
          pathStart: query.path_start,
          pathExact: query.path_exact,
          createdBy: query.created_by,
          showArchived: query.show_archived,
          orderDesc: query.order_desc,
        }),
      ),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/flows/exists/*path",
    summary: "existsFlowByPath",
    tag: "flow",
    params: workspacePath,
    response: z.boolean(),
    handler: async (ctx, { params }) =>
      json(await flowExists(ctx.services, await ctx.membership(), params.path)),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/flows/archive/*path",
    summary: "archiveFlowByPath",
    tag: "flow",
    params: workspacePath,
    body: archiveBody,
    response: textAnswer("Flow <path> archived|unarchived"),
    handler: async (ctx, { params, body }) => {
      await archiveFlow(ctx.services, await ctx.membership(), params.path, body.archived ?? true);
      return text(`Flow ${params.path} ${body.archived === false ? "unarchived" : "archived"}`);
    },
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/flows/delete/*path",
    summary: "deleteFlowByPath",
    tag: "flow",
    params: workspacePath,
    response: textAnswer("Flow <path> deleted"),
    handler: async (ctx, { params }) => {
      // As Windmill: a flow that is not there is no error (wmill deletes a folder file by file).
      await deleteFlowIfPresent(ctx.services, await ctx.membership(), params.path);
      return text(`Flow ${params.path} deleted`);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/flows/history/p/*path",
    summary: "getFlowHistory",
    tag: "flow",
    params: workspacePath,
    query: z.object({ page: queryInt.optional(), per_page: queryInt.optional() }),
    response: z.array(
      z.object({
        id: z.number(),
        created_at: z.string(),
        created_by: z.string(),
        deployment_msg: z.string().optional(),
      }),
    ),
    handler: async (ctx, { params, query }) =>
      json(
        await flowHistory(ctx.services, await ctx.membership(), params.path, {
          page: query.page,
          perPage: query.per_page,
        }),
      ),
  }),

  defineRoute({
    // The body is the flow's arguments, JSON or not: read from the request (runArgs).
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/f/*path",
    summary: "runFlowByPath",
    tag: "job",
    params: workspacePath,
    response: textAnswer(`the new job's id (${runArgsBody})`),
    handler: async (ctx, { params }) => text(await runByPath(ctx, params.path), 201),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run_wait_result/f/*path",
    summary: "runWaitResultFlowByPath",
    tag: "job",
    params: workspacePath,
    response: {
      contentType: "application/json",
      description: `the flow's result; 500 with the error when it failed (${runArgsBody})`,
    },
    handler: async (ctx, { params }) => waitedFlowResult(ctx, await runByPath(ctx, params.path, true)),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/preview_flow",
    summary: "runFlowPreview",
    tag: "job",
    body: previewBody,
    response: textAnswer("the new job's id"),
    handler: async (ctx, { body }) => text(await startFlowPreview(ctx, body), 201),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run_wait_result/preview_flow",
    summary: "runWaitResultFlowPreview",
    tag: "job",
    body: previewBody,
    response: {
      contentType: "application/json",
      description: "the flow's result; 500 with the error when it failed",
    },
    handler: async (ctx, { body }) => waitedFlowResult(ctx, await startFlowPreview(ctx, body)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/jobs/flow/user_states/:id/:key",
    summary: "getFlowUserState",
    tag: "job",
    params: userStateParams,
    response: z.unknown(),
    handler: async (ctx, { params }) =>
      json(await getFlowUserState(ctx.services, await ctx.membership(), params.id, params.key)),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/flow/user_states/:id/:key",
    summary: "setFlowUserState",
    tag: "job",
    params: userStateParams,
    // The new value: any JSON.
    body: z.unknown(),
    response: textAnswer("flow user state <key> set"),
    handler: async (ctx, { params, body }) => {
      await setFlowUserState(ctx.services, await ctx.membership(), params.id, params.key, body);
      return text(`flow user state ${params.key} set`);
    },
  }),
];
