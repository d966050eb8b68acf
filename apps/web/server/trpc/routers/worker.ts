import { z } from "zod";
import {
  CUSTOM_TAGS_SETTING,
  deleteWorkerGroupConfig,
  getCustomTagsSetting,
  listAutoscaling,
  listCustomTags,
  listWorkerGroupConfigs,
  listWorkers,
  queueStats,
  setGlobalSetting,
  updateWorkerGroupConfig,
} from "@millrace/core";
import { authedProcedure, router } from "../init.ts";

// Thin adapters over core: authorization (superadmin or membership) happens there.
export const workerRouter = router({
  list: authedProcedure
    .input(z.object({ pingSinceSecs: z.number().int().positive().optional() }).optional())
    .query(({ ctx, input }) =>
      listWorkers(ctx.services, ctx.principal, { pingSinceSecs: input?.pingSinceSecs }),
    ),

  queueStats: authedProcedure.query(({ ctx }) => queueStats(ctx.services, ctx.principal)),

  groups: authedProcedure.query(async ({ ctx }) =>
    (await listWorkerGroupConfigs(ctx.services, ctx.principal)).map((group) => ({
      name: group.name,
      config: group.config,
      updatedAt: group.updatedAt.toISOString(),
    })),
  ),

  /** Each autoscaled group's desired count and the last decisions (from, to, why): superadmins. */
  autoscaling: authedProcedure.query(async ({ ctx }) => {
    const { groups, events } = await listAutoscaling(ctx.services, ctx.principal);
    return {
      groups: groups.map((group) => ({ ...group, lastChangeAt: group.lastChangeAt?.toISOString() ?? null })),
      events: events.map((event) => ({ ...event, at: event.at.toISOString() })),
    };
  }),

  // `config` is checked by core so that errors name the field inside it (`worker_tags[2]`).
  updateGroup: authedProcedure
    .input(z.object({ name: z.string(), config: z.unknown() }))
    .mutation(({ ctx, input }) =>
      updateWorkerGroupConfig(ctx.services, ctx.principal, input.name, input.config),
    ),

  deleteGroup: authedProcedure.input(z.object({ name: z.string() })).mutation(async ({ ctx, input }) => {
    await deleteWorkerGroupConfig(ctx.services, ctx.principal, input.name);
    return { deleted: input.name };
  }),

  /** The tags `workspace` may use; superadmins also get the setting as written. */
  customTags: authedProcedure
    .input(z.object({ workspace: z.string().min(1).optional() }))
    .query(async ({ ctx, input }) => ({
      available: await listCustomTags(ctx.services, ctx.principal, { workspace: input.workspace }),
      setting: ctx.principal.isSuperAdmin ? await getCustomTagsSetting(ctx.services, ctx.principal) : null,
    })),

  setCustomTags: authedProcedure
    .input(z.object({ value: z.unknown() }))
    .mutation(
      async ({ ctx, input }) =>
        (await setGlobalSetting(
          ctx.services,
          ctx.principal,
          CUSTOM_TAGS_SETTING,
          input.value ?? [],
        )) as string[],
    ),
});
