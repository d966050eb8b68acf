import { z } from "zod";
import { json } from "../../http.ts";
import { defineRoute } from "../define.ts";
import { openApiDocument } from "../openapi.ts";
import type { Route } from "../router.ts";
import { authRoutes } from "./auth.ts";
import { jobReadRoutes } from "./jobs-read.ts";
import { jobRunRoutes } from "./jobs-run.ts";
import { scriptRoutes } from "./scripts.ts";
import { settingRoutes } from "./settings.ts";
import { workerRoutes } from "./workers.ts";
import { agentWorkerRoutes } from "./agent-workers.ts";
import { workspaceRoutes } from "./workspaces.ts";
import { variableRoutes } from "./variables.ts";
import { resourceRoutes } from "./resources.ts";
import { scheduleRoutes } from "./schedules.ts";
import { webhookRoutes } from "./webhooks.ts";
import { userRoutes } from "./users.ts";
import { groupRoutes } from "./groups.ts";
import { folderRoutes } from "./folders.ts";
import { auditRoutes } from "./audit.ts";
import { governanceRoutes } from "./governance.ts";
import { syncRoutes } from "./sync.ts";
import { gitSyncRoutes } from "./git-sync.ts";
import { aclRoutes } from "./acls.ts";
import { flowRoutes } from "./flows.ts";
import { flowApprovalRoutes } from "./flow-approvals.ts";
import { dependencyRoutes } from "./dependencies.ts";
import { oidcRoutes } from "./oidc.ts";
import { workspaceDependencyRoutes } from "./workspace-dependencies.ts";
import { jobTransferRoutes } from "./jobs-transfer.ts";
import { windmillSettingRoutes } from "./windmill-settings.ts";
import { encryptionKeyRoutes } from "./encryption-key.ts";
import { workspaceForkRoutes } from "./workspace-forks.ts";
import { flowRestartRoutes } from "./flow-restart.ts";
import { objectStorageRoutes } from "./object-storage.ts";

export const routes: Route[] = [
  ...authRoutes,
  ...workspaceRoutes,
  ...scriptRoutes,
  ...jobRunRoutes,
  ...jobReadRoutes,
  ...workerRoutes,
  ...agentWorkerRoutes,
  ...settingRoutes,
  ...variableRoutes,
  ...resourceRoutes,
  ...scheduleRoutes,
  ...webhookRoutes,
  ...userRoutes,
  ...groupRoutes,
  ...folderRoutes,
  ...auditRoutes,
  ...governanceRoutes,
  ...syncRoutes,
  ...gitSyncRoutes,
  ...aclRoutes,
  ...flowRoutes,
  ...flowApprovalRoutes,
  ...dependencyRoutes,
  ...windmillSettingRoutes,
  ...jobTransferRoutes,
  ...workspaceForkRoutes,
  ...objectStorageRoutes,
  ...workspaceDependencyRoutes,
  ...oidcRoutes,
  ...flowRestartRoutes,
  ...encryptionKeyRoutes,
];

// The document describes the table it is part of, itself included.
routes.push(
  defineRoute({
    method: "GET",
    pattern: "/api/openapi.json",
    summary: "the OpenAPI document of this API, generated from its route table",
    tag: "meta",
    auth: "public",
    response: z.record(z.string(), z.unknown()),
    handler: async () => json(openApiDocument(routes)),
  }),
);
