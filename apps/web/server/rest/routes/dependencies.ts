import { lockRawDependencies, runFlowDependencies, runRawDependencies } from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";

// What `wmill generate-metadata` calls to lock a script's dependencies before it writes its
// `.script.lock`: it then polls the job (jobs_u/completed/get_result_maybe) for `{ lock }`.
const dependenciesBody = z.object({
  raw_scripts: z.array(z.object({ raw_code: z.string(), language: z.string(), script_path: z.string() })),
  entrypoint: z.string().nullish(),
  raw_workspace_dependencies: z.record(z.string(), z.string()).nullish(),
  temp_script_refs: z.record(z.string(), z.unknown()).nullish(),
});

export const dependencyRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/dependencies_async",
    summary: "runRawScriptDependenciesAsync",
    tag: "job",
    body: dependenciesBody,
    response: { contentType: "text/plain", description: "the id of the job that computes the lock" },
    handler: async (ctx, { body }) => {
      const id = await runRawDependencies(ctx.services, await ctx.membership(), {
        raw_scripts: body.raw_scripts,
        entrypoint: body.entrypoint,
      });
      return text(id, 201);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/dependencies",
    summary: "runRawScriptDependencies",
    tag: "job",
    body: dependenciesBody,
    response: z.object({ lock: z.string() }),
    handler: async (ctx, { body }) => {
      const lock = await lockRawDependencies(ctx.services, await ctx.membership(), {
        raw_scripts: body.raw_scripts,
        entrypoint: body.entrypoint,
      });
      return json({ lock }, 201);
    },
  }),

  // What `wmill generate-metadata` and `wmill flow generate-locks` call for a flow folder: the job's
  // result is `{ updated_flow_value }`, each inline step's `lock` filled (flows/dependencies.ts).
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/run/flow_dependencies_async",
    summary: "runFlowDependenciesAsync",
    tag: "job",
    body: z.object({
      flow_value: z.unknown(),
      path: z.string(),
      use_local_lockfiles: z.boolean().nullish(),
      raw_workspace_dependencies: z.record(z.string(), z.string()).nullish(),
      temp_script_refs: z.record(z.string(), z.unknown()).nullish(),
    }),
    response: { contentType: "text/plain", description: "the id of the job that computes the locks" },
    handler: async (ctx, { body }) => {
      const id = await runFlowDependencies(ctx.services, await ctx.membership(), {
        flow_value: body.flow_value,
        path: body.path,
      });
      return text(id, 201);
    },
  }),
];
