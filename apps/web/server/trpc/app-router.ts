import { authedProcedure, mergeRouters, router } from "./init.ts";
import { jobRunRouter } from "./routers/job-run.ts";
import { jobReadRouter } from "./routers/job.ts";
import { scriptRouter } from "./routers/script.ts";
import { workerRouter } from "./routers/worker.ts";
import { workspaceRouter } from "./routers/workspace.ts";

export const appRouter = router({
  me: authedProcedure.query(({ ctx }) => ({
    email: ctx.principal.email,
    username: ctx.principal.username,
    isSuperAdmin: ctx.principal.isSuperAdmin,
  })),
  workspace: workspaceRouter,
  script: scriptRouter,
  job: mergeRouters(jobReadRouter, jobRunRouter),
  worker: workerRouter,
});

export type AppRouter = typeof appRouter;
