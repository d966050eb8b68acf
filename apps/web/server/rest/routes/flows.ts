// Windmill's flow endpoints (windmill-client: createFlow, updateFlow, getFlowByPath, listFlows,
// existsFlowByPath, archiveFlowByPath, deleteFlowByPath, getFlowHistory, runFlowByPath,
// runWaitResultFlowByPath, runFlowPreview): thin adapters over packages/core/src/flows.
import {
  AppError,
  archiveFlow,
  createFlow,
  deleteFlowIfPresent,
  flowExists,
  flowHistory,
  flowVersion,
  getFlow,
  listFlows,
  runFlowByPath,
  runFlowPreview,
  updateFlow,
  waitForFlowResult,
} from "@millrace/core";
import { z } from "zod";
import { json, readJson, text } from "../../http.ts";
import type { RestContext, Route } from "../router.ts";
import { intParam, runArgs } from "./params.ts";

/** Parses a JSON body with `schema`; the first problem becomes a 400 naming its field. */
async function body<T>(ctx: RestContext, schema: z.ZodType<T>): Promise<T> {
  const parsed = schema.safeParse(await readJson(ctx.request));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join(".") || "body";
  throw new AppError("INVALID_INPUT", `${field}: ${issue.message}`, field);
}

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

function boolParam(ctx: RestContext, name: string): boolean | undefined {
  const value = ctx.url.searchParams.get(name);
  return value === null ? undefined : value === "true";
}

async function runByPath(ctx: RestContext): Promise<string> {
  const args = runArgs(ctx);
  args.catch(() => {});
  const membership = await ctx.membership();
  return runFlowByPath(ctx.services, membership, ctx.params.path ?? "", await args);
}

export const flowRoutes: Route[] = [
  {
    method: "POST",
    pattern: "/api/w/:workspace/flows/create",
    handler: async (ctx) => {
      const input = await body(ctx, flowBody);
      const flow = await createFlow(ctx.services, await ctx.membership(), input);
      return text(flow.path, 201);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/flows/update/*path",
    handler: async (ctx) => {
      const input = await body(ctx, flowBody);
      const flow = await updateFlow(ctx.services, await ctx.membership(), ctx.params.path ?? "", input);
      return text(flow.path);
    },
  },

  {
    // Windmill's getFlowVersion (`wmill flow show-version`); before flows/get/*path, which would
    // take `v/<id>` for a path.
    method: "GET",
    pattern: "/api/w/:workspace/flows/get/v/:version",
    handler: async (ctx) =>
      json(await flowVersion(ctx.services, await ctx.membership(), ctx.params.version ?? "")),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/flows/get/*path",
    handler: async (ctx) => json(await getFlow(ctx.services, await ctx.membership(), ctx.params.path ?? "")),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/flows/list",
    handler: async (ctx) =>
      json(
        await listFlows(ctx.services, await ctx.membership(), {
          page: intParam(ctx, "page"),
          perPage: intParam(ctx, "per_page"),
          pathStart: ctx.url.searchParams.get("path_start") ?? undefined,
          pathExact: ctx.url.searchParams.get("path_exact") ?? undefined,
          createdBy: ctx.url.searchParams.get("created_by") ?? undefined,
          showArchived: boolParam(ctx, "show_archived"),
          orderDesc: boolParam(ctx, "order_desc"),
        }),
      ),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/flows/exists/*path",
    handler: async (ctx) =>
      json(await flowExists(ctx.services, await ctx.membership(), ctx.params.path ?? "")),
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/flows/archive/*path",
    handler: async (ctx) => {
      const path = ctx.params.path ?? "";
      const { archived } = await body(ctx, archiveBody);
      await archiveFlow(ctx.services, await ctx.membership(), path, archived ?? true);
      return text(`Flow ${path} ${archived === false ? "unarchived" : "archived"}`);
    },
  },

  {
    method: "DELETE",
    pattern: "/api/w/:workspace/flows/delete/*path",
    handler: async (ctx) => {
      const path = ctx.params.path ?? "";
      // As Windmill: a flow that is not there is no error (wmill deletes a folder file by file).
      await deleteFlowIfPresent(ctx.services, await ctx.membership(), path);
      return text(`Flow ${path} deleted`);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/flows/history/p/*path",
    handler: async (ctx) =>
      json(
        await flowHistory(ctx.services, await ctx.membership(), ctx.params.path ?? "", {
          page: intParam(ctx, "page"),
          perPage: intParam(ctx, "per_page"),
        }),
      ),
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/f/*path",
    handler: async (ctx) => text(await runByPath(ctx), 201),
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run_wait_result/f/*path",
    handler: async (ctx) => {
      const id = await runByPath(ctx);
      // A flow with early_return answers its named step's result as soon as that step is done.
      const job = await waitForFlowResult(
        ctx.services,
        await ctx.membership(),
        id,
        ctx.services.waitResultTimeoutMs,
      );
      return json(job.result, job.status === "success" ? 200 : 500);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/preview_flow",
    handler: async (ctx) => {
      const input = await body(ctx, previewBody);
      const id = await runFlowPreview(ctx.services, await ctx.membership(), {
        value: input.value,
        args: input.args ?? {},
        path: input.path ?? null,
      });
      return text(id, 201);
    },
  },
];
