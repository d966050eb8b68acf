import type { Route } from "../router.ts";
import { authRoutes } from "./auth.ts";
import { jobReadRoutes } from "./jobs-read.ts";
import { jobRunRoutes } from "./jobs-run.ts";
import { scriptRoutes } from "./scripts.ts";
import { settingRoutes } from "./settings.ts";
import { workerRoutes } from "./workers.ts";
import { workspaceRoutes } from "./workspaces.ts";

export const routes: Route[] = [
  ...authRoutes,
  ...workspaceRoutes,
  ...scriptRoutes,
  ...jobRunRoutes,
  ...jobReadRoutes,
  ...workerRoutes,
  ...settingRoutes,
];
