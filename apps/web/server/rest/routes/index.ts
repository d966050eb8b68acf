import type { Route } from "../router.ts";
import { authRoutes } from "./auth.ts";
import { jobReadRoutes } from "./jobs-read.ts";
import { jobRunRoutes } from "./jobs-run.ts";
import { scriptRoutes } from "./scripts.ts";
import { workspaceRoutes } from "./workspaces.ts";

export const routes: Route[] = [
  ...authRoutes,
  ...workspaceRoutes,
  ...scriptRoutes,
  ...jobRunRoutes,
  ...jobReadRoutes,
];
