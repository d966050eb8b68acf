import {
  deleteWorkerGroupConfig,
  getWorkerGroupConfig,
  listAutoscalingEvents,
  listCustomTags,
  listWorkerGroupConfigs,
  listWorkers,
  notFound,
  queueCounts,
  queueStats,
  updateWorkerGroupConfig,
} from "@millrace/core";
import { DEFAULT_TAGS } from "@millrace/runtime";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryBool, queryInt } from "../define.ts";
import type { RestContext, Route } from "../router.ts";
import { textAnswer } from "./params.ts";

// Windmill names a worker group's config `worker__<group>` in its config table.
const WORKER_PREFIX = "worker__";

function groupName(name: string): string {
  if (!name.startsWith(WORKER_PREFIX)) {
    throw notFound(`config ${name} (Millrace keeps worker group configs only, named worker__<group>)`);
  }
  return name.slice(WORKER_PREFIX.length);
}

async function deleteConfig(ctx: RestContext, name: string): Promise<Response> {
  const group = groupName(name);
  await deleteWorkerGroupConfig(ctx.services, await ctx.principal(), group);
  return text(`Deleted config ${WORKER_PREFIX}${group}`);
}

/** windmill-client's WorkerPing, plus Millrace's sandbox. */
const workerPingShape = z.object({
  worker: z.string(),
  worker_instance: z.string(),
  worker_group: z.string(),
  custom_tags: z.array(z.string()),
  last_ping: z.number(),
  started_at: z.string(),
  ip: z.string(),
  host: z.string(),
  jobs_executed: z.number(),
  wm_version: z.string(),
  occupancy_rate: z.number().optional(),
  occupancy_rate_15s: z.number().optional(),
  occupancy_rate_5m: z.number().optional(),
  occupancy_rate_30m: z.number().optional(),
  memory_usage: z.number().optional(),
  sandbox: z.string(),
  agent: z.boolean(),
  current_job_id: z.string().optional(),
  last_job_id: z.string().optional(),
  last_job_workspace_id: z.string().optional(),
});

const configName = z.object({ name: z.string() });
/** A worker group's config (`worker_tags`, `init_bash`, …), checked by core naming the field. */
const workerGroupConfig = z.record(z.string(), z.unknown());

export const workerRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/workers/list",
    summary: "listWorkers",
    tag: "worker",
    query: z.object({
      ping_since: queryInt.optional(),
      page: queryInt.optional(),
      per_page: queryInt.optional(),
    }),
    response: z.array(workerPingShape),
    handler: async (ctx, { query }) =>
      json(
        await listWorkers(ctx.services, await ctx.principal(), {
          pingSinceSecs: query.ping_since,
          page: query.page,
          perPage: query.per_page,
        }),
      ),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/workers/queue_counts",
    summary: "getCountsOfJobsWaitingPerTag",
    tag: "worker",
    response: z.record(z.string(), z.number()),
    handler: async (ctx) => json(await queueCounts(ctx.services, await ctx.principal())),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/workers/queue_stats",
    summary: "per-tag queue depth and wait (Millrace's own)",
    tag: "worker",
    response: z.array(
      z.object({
        tag: z.string(),
        queued: z.number(),
        scheduled: z.number(),
        running: z.number(),
        oldest_queued_at: z.string().nullable(),
        oldest_wait_secs: z.number().nullable(),
        workers: z.number(),
      }),
    ),
    handler: async (ctx) => json(await queueStats(ctx.services, await ctx.principal())),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/workers/custom_tags",
    summary: "getCustomTags",
    tag: "worker",
    query: z.object({ workspace: z.string().optional(), show_workspace_restriction: queryBool.optional() }),
    response: z.array(z.string()),
    handler: async (ctx, { query }) =>
      json(
        await listCustomTags(ctx.services, await ctx.principal(), {
          workspace: query.workspace,
          showRestrictions: query.show_workspace_restriction ?? false,
        }),
      ),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/workers/custom_tags",
    summary: "getCustomTagsForWorkspace",
    tag: "worker",
    params: z.object({ workspace: z.string() }),
    response: z.array(z.string()),
    handler: async (ctx, { params }) =>
      json(await listCustomTags(ctx.services, await ctx.principal(), { workspace: params.workspace })),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/workers/get_default_tags",
    summary: "geDefaultTags",
    tag: "worker",
    response: z.array(z.string()),
    handler: async (ctx) => {
      await ctx.principal();
      return json(DEFAULT_TAGS);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/configs/list_worker_groups",
    summary: "listWorkerGroups",
    tag: "config",
    response: z.array(z.object({ name: z.string(), config: workerGroupConfig })),
    handler: async (ctx) => {
      const groups = await listWorkerGroupConfigs(ctx.services, await ctx.principal());
      return json(groups.map((group) => ({ name: group.name, config: group.config })));
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/configs/get/:name",
    summary: "getConfig",
    tag: "config",
    params: configName,
    // Windmill answers null for a group without a config.
    response: workerGroupConfig.nullable(),
    handler: async (ctx, { params }) =>
      json(await getWorkerGroupConfig(ctx.services, await ctx.principal(), groupName(params.name))),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/configs/update/:name",
    summary: "updateConfig",
    tag: "config",
    params: configName,
    // Any JSON: core checks it is a worker group config and names the field at fault.
    body: z.unknown(),
    response: textAnswer("Updated config worker__<group>"),
    handler: async (ctx, { params, body }) => {
      const group = groupName(params.name);
      await updateWorkerGroupConfig(ctx.services, await ctx.principal(), group, body);
      return text(`Updated config ${WORKER_PREFIX}${group}`);
    },
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/configs/delete/:name",
    summary: "delete a worker group's config",
    tag: "config",
    params: configName,
    response: textAnswer("Deleted config worker__<group>"),
    handler: (ctx, { params }) => deleteConfig(ctx, params.name),
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/configs/list_autoscaling_events/:worker_group",
    summary: "listAutoscalingEvents",
    tag: "config",
    params: z.object({ worker_group: z.string() }),
    query: z.object({ page: queryInt.optional(), per_page: queryInt.optional() }),
    response: z.array(
      z.object({
        id: z.number(),
        worker_group: z.string(),
        event_type: z.string(),
        desired_workers: z.number(),
        reason: z.string(),
        applied_at: z.string(),
      }),
    ),
    handler: async (ctx, { params, query }) =>
      json(
        await listAutoscalingEvents(
          ctx.services,
          await ctx.principal(),
          // The group's name, or its config's (worker__<group>).
          params.worker_group.replace(/^worker__/, ""),
          { page: query.page, perPage: query.per_page },
        ),
      ),
  }),
  // windmill-client's deleteConfig sends DELETE to the update path.
  defineRoute({
    method: "DELETE",
    pattern: "/api/configs/update/:name",
    summary: "deleteConfig",
    tag: "config",
    params: configName,
    response: textAnswer("Deleted config worker__<group>"),
    handler: (ctx, { params }) => deleteConfig(ctx, params.name),
  }),
];
