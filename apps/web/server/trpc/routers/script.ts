import { z } from "zod";
import { deployScript, getScriptByPath, listScripts } from "@millrace/core";
import type { ArgCustomizations } from "@millrace/core";
import {
  archiveScriptByPath,
  can,
  deleteScriptByPath,
  getNewestScriptVersion,
  getScriptByHash,
  listSchedules,
  listScriptVersions,
  pathRights,
  unarchiveScriptByPath,
  writablePaths,
} from "@millrace/core";
import type { Script } from "@millrace/db";
import { inferSchema, isLanguage, SignatureError, type ArgSchema } from "@millrace/runtime";
import { authedProcedure, router, workspaceProcedure } from "../init.ts";

function scriptView(script: Script) {
  return {
    path: script.path,
    hash: script.hash,
    summary: script.summary,
    description: script.description,
    language: script.language,
    content: script.content,
    schema: script.schema as unknown as ArgSchema,
    tag: script.tag,
    createdBy: script.createdBy,
    createdAt: script.createdAt.toISOString(),
    // The settings the editor's settings panel shows (Windmill's field names, as deploy takes them).
    settings: {
      timeout: script.timeoutSecs,
      priority: script.priority,
      concurrent_limit: script.concurrentLimit,
      concurrency_time_window_s: script.concurrencyTimeWindowS,
      retry: script.retry as { constant?: { attempts: number; seconds: number } } | null,
      dedicated_worker: script.dedicatedWorker,
    },
    argCustomizations: (script.argCustomizations ?? null) as ArgCustomizations | null,
  };
}

export const scriptRouter = router({
  list: workspaceProcedure
    .input(z.object({ includeArchived: z.boolean().default(false) }))
    .query(async ({ ctx, input }) => {
      const scripts = await listScripts(ctx.services, ctx.membership, {
        perPage: 1000,
        includeArchived: input.includeArchived,
      });
      const writable = await writablePaths(
        ctx.services,
        ctx.membership,
        scripts.map((script) => script.path),
      );
      return scripts.map(({ content: _content, ...script }) => ({
        ...scriptView({ ...script, content: "" }),
        archived: script.archived,
        canWrite: writable.has(script.path),
      }));
    }),
  get: workspaceProcedure
    .input(z.object({ path: z.string() }))
    .query(async ({ ctx, input }) =>
      scriptView(await getScriptByPath(ctx.services, ctx.membership, input.path)),
    ),
  /**
   * The script page: the newest version at the path (archived or not), what the caller may do
   * with it, and the schedules that run it.
   */
  page: workspaceProcedure.input(z.object({ path: z.string() })).query(async ({ ctx, input }) => {
    const script = await getNewestScriptVersion(ctx.services, ctx.membership, input.path);
    const [rights, schedules] = await Promise.all([
      pathRights(ctx.services, ctx.membership, input.path),
      listSchedules(ctx.services, ctx.membership, { scriptPath: input.path, perPage: 100 }),
    ]);
    return {
      ...scriptView(script),
      archived: script.archived,
      ...rights,
      // New scripts (a fork) go under the caller's own u/ path, which any writer of scripts may use.
      canCreate: can(ctx.membership.role, "script.write"),
      schedules: schedules.map((schedule) => ({
        path: schedule.path,
        schedule: schedule.schedule,
        timezone: schedule.timezone,
        enabled: schedule.enabled,
        nextRunAt: schedule.nextRunAt?.toISOString() ?? null,
      })),
    };
  }),
  /** What the caller may do with the script at `path` (the editor offers Deploy only with canWrite). */
  access: workspaceProcedure
    .input(z.object({ path: z.string() }))
    .query(({ ctx, input }) => pathRights(ctx.services, ctx.membership, input.path)),
  /** Every deployed version at the path, newest first, without content. */
  versions: workspaceProcedure.input(z.object({ path: z.string() })).query(async ({ ctx, input }) => {
    const versions = await listScriptVersions(ctx.services, ctx.membership, input.path);
    return versions.map((version) => ({ ...version, createdAt: version.createdAt.toISOString() }));
  }),
  /** One version's content, for the diff between versions. */
  version: workspaceProcedure.input(z.object({ hash: z.string() })).query(async ({ ctx, input }) => {
    const script = await getScriptByHash(ctx.services, ctx.membership, input.hash);
    return {
      hash: script.hash,
      path: script.path,
      language: script.language,
      summary: script.summary,
      content: script.content,
      createdBy: script.createdBy,
      createdAt: script.createdAt.toISOString(),
    };
  }),
  archive: workspaceProcedure.input(z.object({ path: z.string() })).mutation(async ({ ctx, input }) => {
    await archiveScriptByPath(ctx.services, ctx.membership, input.path);
    return { path: input.path };
  }),
  unarchive: workspaceProcedure.input(z.object({ path: z.string() })).mutation(async ({ ctx, input }) => {
    await unarchiveScriptByPath(ctx.services, ctx.membership, input.path);
    return { path: input.path };
  }),
  delete: workspaceProcedure.input(z.object({ path: z.string() })).mutation(async ({ ctx, input }) => {
    await deleteScriptByPath(ctx.services, ctx.membership, input.path);
    return { path: input.path };
  }),
  deploy: workspaceProcedure
    .input(
      z.object({
        path: z.string(),
        summary: z.string().default(""),
        language: z.string(),
        content: z.string(),
        parentHash: z.string().nullable().default(null),
        // The editor's settings panel; checked by core, which names the field at fault.
        description: z.string().optional(),
        tag: z.string().nullable().optional(),
        timeout: z.number().nullable().optional(),
        priority: z.number().nullable().optional(),
        concurrent_limit: z.number().nullable().optional(),
        concurrency_time_window_s: z.number().nullable().optional(),
        retry: z.unknown().optional(),
        dedicated_worker: z.boolean().nullable().optional(),
        arg_customizations: z.record(z.string(), z.unknown()).nullable().optional(),
        // The editor's draft to delete besides the one at `path` ("" on the new-script page).
        draftPath: z.string().nullable().optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => scriptView(await deployScript(ctx.services, ctx.membership, input))),
  /** The input form as the editor types: no database, just the signature. */
  inferSchema: authedProcedure
    .input(z.object({ language: z.string(), content: z.string().max(512 * 1024) }))
    .query(({ input }) => {
      if (!isLanguage(input.language)) return { schema: null, error: `unknown language ${input.language}` };
      try {
        return { schema: inferSchema(input.language, input.content), error: null };
      } catch (error) {
        if (error instanceof SignatureError) return { schema: null, error: error.message };
        throw error;
      }
    }),
});
