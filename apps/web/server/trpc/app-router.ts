import { authedProcedure, router } from "./init.ts";
import { jobRouter } from "./routers/job.ts";
import { scriptRouter } from "./routers/script.ts";
import { workspaceRouter } from "./routers/workspace.ts";

export const appRouter = router({
  me: authedProcedure.query(({ ctx }) => ({
    email: ctx.principal.email,
    username: ctx.principal.username,
    isSuperAdmin: ctx.principal.isSuperAdmin,
  })),
  workspace: workspaceRouter,
  script: scriptRouter,
  job: jobRouter,
});

export type AppRouter = typeof appRouter;
