import { restartFlowAtStep } from "@millrace/core";
import { z } from "zod";
import { text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";
import { textAnswer } from "./params.ts";

// Windmill's restartFlowAtStep: a new run of a finished flow run that starts at a top-level step,
// the steps before it keeping the original run's results (flows/engine/restart.ts).
export const flowRestartRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/jobs/restart/f/:id",
    summary: "restartFlowAtStep",
    tag: "job",
    params: z.object({ workspace: z.string(), id: z.string() }),
    body: z.object({
      step_id: z.string().min(1),
      branch_or_iteration_n: z.number().int().nonnegative().nullish(),
      flow_version: z.number().int().nonnegative().nullish(),
      nested_path: z.array(z.unknown()).nullish(),
    }),
    response: textAnswer("the new job's id"),
    handler: async (ctx, { params, body }) => {
      const id = await restartFlowAtStep(ctx.services, await ctx.membership(), params.id, {
        step_id: body.step_id,
        branch_or_iteration_n: body.branch_or_iteration_n,
        flow_version: body.flow_version,
        nested_path: body.nested_path,
      });
      return text(id, 201);
    },
  }),
];
