import { authedProcedure, mergeRouters, router } from "./init.ts";
import { jobRunRouter } from "./routers/job-run.ts";
import { jobReadRouter } from "./routers/job.ts";
import { scriptRouter } from "./routers/script.ts";
import { draftRouter } from "./routers/draft.ts";
import { workbenchRouter } from "./routers/workbench.ts";
import { workerRouter } from "./routers/worker.ts";
import { fleetRouter } from "./routers/fleet.ts";
import { workspaceRouter } from "./routers/workspace.ts";
import { variableRouter } from "./routers/variable.ts";
import { resourceRouter } from "./routers/resource.ts";
import { scheduleRouter } from "./routers/schedule.ts";
import { webhookRouter } from "./routers/webhook.ts";
import { peopleRouter } from "./routers/people.ts";
import { auditRouter } from "./routers/audit.ts";
import { governanceRouter } from "./routers/governance.ts";
import { gitSyncRouter } from "./routers/git-sync.ts";
import { accessRouter } from "./routers/access.ts";
import { searchRouter } from "./routers/search.ts";
import { flowRouter } from "./routers/flow.ts";
import { objectStorageRouter } from "./routers/object-storage.ts";

export const appRouter = router({
  me: authedProcedure.query(({ ctx }) => ({
    email: ctx.principal.email,
    username: ctx.principal.username,
    isSuperAdmin: ctx.principal.isSuperAdmin,
  })),
  workspace: workspaceRouter,
  script: scriptRouter,
  draft: draftRouter,
  workbench: workbenchRouter,
  job: mergeRouters(jobReadRouter, jobRunRouter),
  worker: workerRouter,
  fleet: fleetRouter,
  variable: variableRouter,
  resource: resourceRouter,
  schedule: scheduleRouter,
  webhook: webhookRouter,
  people: peopleRouter,
  audit: auditRouter,
  governance: governanceRouter,
  gitSync: gitSyncRouter,
  access: accessRouter,
  search: searchRouter,
  flow: flowRouter,
  objectStorage: objectStorageRouter,
});

export type AppRouter = typeof appRouter;
