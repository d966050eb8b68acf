import { cancelJob, lookUpScriptAhead, runPreview, runScriptByPath, waitForResult } from "@millrace/core";
import { json, readJson, readObject, text } from "../../http.ts";
import type { RestContext, Route } from "../router.ts";
import { optionalString, requiredString, runArgs, runOptions } from "./params.ts";

async function waitedResult(ctx: RestContext, jobId: string): Promise<Response> {
  const membership = await ctx.membership();
  const job = await waitForResult(ctx.services, membership, jobId, ctx.services.waitResultTimeoutMs);
  return json(job.result, job.status === "success" ? 200 : 500);
}

async function runByPath(ctx: RestContext, awaited = false): Promise<string> {
  const options = runOptions(ctx);
  const path = ctx.params.path ?? "";
  // The script's lookup and the body's read overlap the membership's; neither is used before the
  // membership is checked, and its errors still come first.
  const scriptAhead = lookUpScriptAhead(ctx.services, ctx.params.workspace ?? "", path);
  const args = runArgs(ctx);
  args.catch(() => {});
  const membership = await ctx.membership();
  return runScriptByPath(ctx.services, membership, path, await args, { ...options, awaited, scriptAhead });
}

export const jobRunRoutes: Route[] = [
  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/p/*path",
    handler: async (ctx) => text(await runByPath(ctx), 201),
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run_wait_result/p/*path",
    handler: async (ctx) => waitedResult(ctx, await runByPath(ctx, true)),
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/preview",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const id = await runPreview(ctx.services, await ctx.membership(), {
        language: requiredString(body, "language"),
        content: requiredString(body, "content"),
        args: body.args ?? {},
        path: optionalString(body, "path") ?? null,
      });
      return text(id, 201);
    },
  },

  {
    method: "POST",
    pattern: "/api/w/:workspace/jobs_u/queue/cancel/:id",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const reason = optionalString(body, "reason") ?? null;
      const { id, state } = await cancelJob(
        ctx.services,
        await ctx.membership(),
        ctx.params.id ?? "",
        reason,
      );
      return text(state === "canceled" ? `job ${id} canceled` : `job ${id} is being canceled`);
    },
  },
];
