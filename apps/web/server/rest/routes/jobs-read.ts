import { AppError, getJob, isFinished, listJobs } from "@millrace/core";
import { json } from "../../http.ts";
import type { Route } from "../router.ts";
import { windmillJob } from "../shapes.ts";
import { intParam } from "./params.ts";

export const jobReadRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/get/:id",
    handler: async (ctx) =>
      json(windmillJob(await getJob(ctx.services, await ctx.membership(), ctx.params.id ?? ""))),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs_u/completed/get_result/:id",
    handler: async (ctx) => {
      const job = await getJob(ctx.services, await ctx.membership(), ctx.params.id ?? "");
      if (!isFinished(job)) throw new AppError("NOT_FOUND", `job ${job.id} has not completed yet`);
      return json(job.result);
    },
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/jobs/list",
    handler: async (ctx) => {
      const jobs = await listJobs(ctx.services, await ctx.membership(), {
        page: intParam(ctx, "page"),
        perPage: intParam(ctx, "per_page"),
        scriptPathExact: ctx.url.searchParams.get("script_path_exact") ?? undefined,
      });
      return json(jobs.map((job) => windmillJob(job)));
    },
  },
];
