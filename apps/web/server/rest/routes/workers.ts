import {
  deleteWorkerGroupConfig,
  getWorkerGroupConfig,
  listCustomTags,
  listWorkerGroupConfigs,
  listWorkers,
  notFound,
  queueCounts,
  queueStats,
  updateWorkerGroupConfig,
} from "@millrace/core";
import { DEFAULT_TAGS } from "@millrace/runtime";
import { json, readJson, text } from "../../http.ts";
import type { RestContext, Route } from "../router.ts";
import { intParam } from "./params.ts";

// Windmill names a worker group's config `worker__<group>` in its config table.
const WORKER_PREFIX = "worker__";

function groupName(ctx: RestContext): string {
  const name = ctx.params.name ?? "";
  if (!name.startsWith(WORKER_PREFIX)) {
    throw notFound(`config ${name} (Millrace keeps worker group configs only, named worker__<group>)`);
  }
  return name.slice(WORKER_PREFIX.length);
}

async function deleteConfig(ctx: RestContext): Promise<Response> {
  const group = groupName(ctx);
  await deleteWorkerGroupConfig(ctx.services, await ctx.principal(), group);
  return text(`Deleted config ${WORKER_PREFIX}${group}`);
}

export const workerRoutes: Route[] = [
  {
    method: "GET",
    pattern: "/api/workers/list",
    handler: async (ctx) =>
      json(
        await listWorkers(ctx.services, await ctx.principal(), {
          pingSinceSecs: intParam(ctx, "ping_since"),
          page: intParam(ctx, "page"),
          perPage: intParam(ctx, "per_page"),
        }),
      ),
  },

  {
    method: "GET",
    pattern: "/api/workers/queue_counts",
    handler: async (ctx) => json(await queueCounts(ctx.services, await ctx.principal())),
  },

  {
    method: "GET",
    pattern: "/api/workers/queue_stats",
    handler: async (ctx) => json(await queueStats(ctx.services, await ctx.principal())),
  },

  {
    method: "GET",
    pattern: "/api/workers/custom_tags",
    handler: async (ctx) =>
      json(
        await listCustomTags(ctx.services, await ctx.principal(), {
          workspace: ctx.url.searchParams.get("workspace") || undefined,
          showRestrictions: ctx.url.searchParams.get("show_workspace_restriction") === "true",
        }),
      ),
  },

  {
    method: "GET",
    pattern: "/api/w/:workspace/workers/custom_tags",
    handler: async (ctx) =>
      json(await listCustomTags(ctx.services, await ctx.principal(), { workspace: ctx.params.workspace })),
  },

  {
    method: "GET",
    pattern: "/api/workers/get_default_tags",
    handler: async (ctx) => {
      await ctx.principal();
      return json(DEFAULT_TAGS);
    },
  },

  {
    method: "GET",
    pattern: "/api/configs/list_worker_groups",
    handler: async (ctx) => {
      const groups = await listWorkerGroupConfigs(ctx.services, await ctx.principal());
      return json(groups.map((group) => ({ name: group.name, config: group.config })));
    },
  },

  {
    method: "GET",
    pattern: "/api/configs/get/:name",
    // Windmill answers null for a group without a config.
    handler: async (ctx) =>
      json(await getWorkerGroupConfig(ctx.services, await ctx.principal(), groupName(ctx))),
  },

  {
    method: "POST",
    pattern: "/api/configs/update/:name",
    handler: async (ctx) => {
      const group = groupName(ctx);
      const principal = await ctx.principal();
      await updateWorkerGroupConfig(ctx.services, principal, group, await readJson(ctx.request));
      return text(`Updated config ${WORKER_PREFIX}${group}`);
    },
  },

  { method: "DELETE", pattern: "/api/configs/delete/:name", handler: deleteConfig },
  // windmill-client's deleteConfig sends DELETE to the update path.
  { method: "DELETE", pattern: "/api/configs/update/:name", handler: deleteConfig },
];
