import {
  archiveScriptByPath,
  deleteScriptByPath,
  deployScript,
  diffScriptsWithDeployed,
  getScriptByHash,
  getScriptByPath,
  listScripts,
  listScriptVersions,
  requirePermission,
  scriptExists,
  type ScriptVersion,
} from "@millrace/core";
import { z } from "zod";
import { createHash } from "node:crypto";
import { json, text } from "../../http.ts";
import { defineRoute, queryBool, queryInt } from "../define.ts";
import type { Route } from "../router.ts";
import { windmillScript } from "../shapes.ts";

const scriptPath = z.object({ workspace: z.string(), path: z.string() });

/** windmill-client's Script, as windmillScript answers it (content left out of lists). */
const windmillScriptShape = z.object({
  workspace_id: z.string(),
  hash: z.string(),
  path: z.string(),
  parent_hashes: z.array(z.string()),
  summary: z.string(),
  description: z.string(),
  content: z.string().optional(),
  created_by: z.string(),
  created_at: z.string(),
  archived: z.boolean(),
  schema: z.unknown(),
  deleted: z.boolean(),
  is_template: z.boolean(),
  extra_perms: z.record(z.string(), z.boolean()),
  lock: z.string().optional(),
  language: z.string(),
  kind: z.literal("script"),
  starred: z.boolean(),
  tag: z.string().optional(),
  timeout: z.number().optional(),
  priority: z.number().optional(),
  concurrent_limit: z.number().optional(),
  concurrency_time_window_s: z.number().optional(),
  concurrency_key: z.string().optional(),
  retry: z.unknown().optional(),
  memory_limit_mb: z.number().optional(),
  has_preprocessor: z.boolean(),
  ws_error_handler_muted: z.boolean(),
});

/** windmill-client's ScriptHistory: one version of a path. */
const scriptHistoryShape = z.object({
  script_hash: z.string(),
  deployment_msg: z.string().optional(),
  created_at: z.string(),
  created_by: z.string(),
});

function scriptHistory(version: ScriptVersion): z.infer<typeof scriptHistoryShape> {
  return {
    script_hash: version.hash,
    created_at: version.createdAt.toISOString(),
    created_by: version.createdBy,
  };
}

/** Windmill's NewScript: what `wmill script push` and `sync push` send (other fields are ignored). */
const newScriptBody = z.object({
  path: z.string(),
  content: z.string(),
  language: z.string(),
  summary: z.string().nullish(),
  description: z.string().nullish(),
  parent_hash: z.string().nullish(),
  tag: z.string().nullish(),
  timeout: z.number().nullish(),
  priority: z.number().nullish(),
  concurrent_limit: z.number().nullish(),
  concurrency_time_window_s: z.number().nullish(),
  concurrency_key: z.string().nullish(),
  retry: z.unknown().optional(),
  memory_limit_mb: z.number().nullish(),
  dedicated_worker: z.boolean().nullish(),
  schema: z.unknown().optional(),
  lock: z.string().nullish(),
});

export const scriptRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/scripts/create",
    summary: "createScript",
    tag: "script",
    query: z.object({ skip_if_noop: queryBool.optional() }),
    body: newScriptBody,
    response: { contentType: "text/plain", description: "the hash of the new version (or of the latest)" },
    handler: async (ctx, { query, body }) => {
      const script = await deployScript(ctx.services, await ctx.membership(), {
        path: body.path,
        content: body.content,
        language: body.language,
        summary: body.summary ?? "",
        description: body.description ?? "",
        parentHash: body.parent_hash ?? null,
        tag: body.tag ?? null,
        timeout: body.timeout ?? null,
        priority: body.priority ?? null,
        concurrent_limit: body.concurrent_limit ?? null,
        concurrency_time_window_s: body.concurrency_time_window_s ?? null,
        concurrency_key: body.concurrency_key ?? null,
        retry: body.retry ?? null,
        memory_limit_mb: body.memory_limit_mb ?? null,
        dedicated_worker: body.dedicated_worker ?? null,
        schema: body.schema,
        lock: body.lock ?? null,
        skipIfNoop: query.skip_if_noop ?? false,
      });
      return text(script.hash, 201);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/get/p/*path",
    summary: "getScriptByPath",
    tag: "script",
    params: scriptPath,
    // windmill-client's Script & UserDraftOverlay: the deployed version, never a draft.
    response: windmillScriptShape.extend({ is_draft: z.literal(false) }),
    handler: async (ctx, { params }) =>
      json({
        ...windmillScript(await getScriptByPath(ctx.services, await ctx.membership(), params.path)),
        is_draft: false,
      }),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/raw/p/*path",
    summary: "rawScriptByPath",
    tag: "script",
    params: scriptPath,
    response: { contentType: "text/plain", description: "the code of the latest version" },
    handler: async (ctx, { params }) =>
      text((await getScriptByPath(ctx.services, await ctx.membership(), params.path)).content),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/exists/p/*path",
    summary: "existsScriptByPath",
    tag: "script",
    params: scriptPath,
    response: z.boolean(),
    handler: async (ctx, { params }) =>
      json(await scriptExists(ctx.services, await ctx.membership(), params.path)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/history/p/*path",
    summary: "getScriptHistoryByPath",
    tag: "script",
    params: scriptPath,
    query: z.object({ page: queryInt.optional(), per_page: queryInt.optional() }),
    response: z.array(scriptHistoryShape),
    handler: async (ctx, { params, query }) => {
      const versions = await listScriptVersions(ctx.services, await ctx.membership(), params.path);
      const perPage = Math.min(Math.max(query.per_page ?? 100, 1), 1000);
      const page = Math.max(query.page ?? 1, 1);
      return json(versions.slice((page - 1) * perPage, page * perPage).map(scriptHistory));
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/get_latest_version/*path",
    summary: "getScriptLatestVersion",
    tag: "script",
    params: scriptPath,
    response: scriptHistoryShape,
    handler: async (ctx, { params }) => {
      const script = await getScriptByPath(ctx.services, await ctx.membership(), params.path);
      return json({
        script_hash: script.hash,
        created_at: script.createdAt.toISOString(),
        created_by: script.createdBy,
      });
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/scripts/archive/p/*path",
    summary: "archiveScriptByPath",
    tag: "script",
    params: scriptPath,
    response: { contentType: "text/plain", description: "Script <path> archived" },
    handler: async (ctx, { params }) => {
      await archiveScriptByPath(ctx.services, await ctx.membership(), params.path);
      return text(`Script ${params.path} archived`);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/scripts/delete/p/*path",
    summary: "deleteScriptByPath",
    tag: "script",
    params: scriptPath,
    response: { contentType: "text/plain", description: "Script <path> deleted" },
    handler: async (ctx, { params }) => {
      await deleteScriptByPath(ctx.services, await ctx.membership(), params.path);
      return text(`Script ${params.path} deleted`);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/get/h/:hash",
    summary: "getScriptByHash",
    tag: "script",
    params: z.object({ workspace: z.string(), hash: z.string() }),
    response: windmillScriptShape,
    handler: async (ctx, { params }) =>
      json(windmillScript(await getScriptByHash(ctx.services, await ctx.membership(), params.hash))),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/list",
    summary: "listScripts",
    tag: "script",
    query: z.object({
      page: queryInt.optional(),
      per_page: queryInt.optional(),
      path_start: z.string().optional(),
    }),
    response: z.array(windmillScriptShape),
    handler: async (ctx, { query }) => {
      const scripts = await listScripts(ctx.services, await ctx.membership(), {
        page: query.page,
        perPage: query.per_page,
        pathStart: query.path_start,
      });
      // With their code: windmill-client's Script requires it in lists too.
      return json(scripts.map((script) => windmillScript(script)));
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/list_paths",
    summary: "listScriptPaths",
    tag: "script",
    response: z.array(z.string()),
    handler: async (ctx) => {
      const membership = await ctx.membership();
      const paths: string[] = [];
      for (let page = 1; ; page++) {
        const scripts = await listScripts(ctx.services, membership, { page, perPage: 1000 });
        paths.push(...scripts.map((script) => script.path));
        if (scripts.length < 1000) return json(paths);
      }
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/list_search",
    summary: "listSearchScript",
    tag: "script",
    response: z.array(z.object({ path: z.string(), content: z.string() })),
    handler: async (ctx) => {
      const membership = await ctx.membership();
      const found: { path: string; content: string }[] = [];
      for (let page = 1; ; page++) {
        const scripts = await listScripts(ctx.services, membership, { page, perPage: 1000 });
        found.push(...scripts.map((script) => ({ path: script.path, content: script.content })));
        if (scripts.length < 1000) return json(found);
      }
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/raw/h/:hash",
    summary: "rawScriptByHash",
    tag: "script",
    params: z.object({ workspace: z.string(), hash: z.string() }),
    response: { contentType: "text/plain", description: "the code of that version" },
    handler: async (ctx, { params }) =>
      text((await getScriptByHash(ctx.services, await ctx.membership(), params.hash)).content),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/deployment_status/h/:hash",
    summary: "getScriptDeploymentStatus",
    tag: "script",
    params: z.object({ workspace: z.string(), hash: z.string() }),
    response: z.object({ lock: z.string().optional(), lock_error_logs: z.string().optional() }),
    handler: async (ctx, { params }) => {
      const script = await getScriptByHash(ctx.services, await ctx.membership(), params.hash);
      // No lock and no error yet: the version's dependency job is still running.
      return json({ lock: script.lock ?? undefined, lock_error_logs: script.lockError ?? undefined });
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/scripts/raw_temp/diff",
    summary: "diffRawScriptsWithDeployed",
    tag: "script",
    body: z.object({
      scripts: z.record(z.string(), z.string()),
      workspace_deps: z.array(z.object({ path: z.string() })).nullish(),
    }),
    response: z.array(z.string()),
    handler: async (ctx, { body }) =>
      json(
        await diffScriptsWithDeployed(
          ctx.services,
          await ctx.membership(),
          body.scripts,
          (body.workspace_deps ?? []).map((dep) => dep.path),
        ),
      ),
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/scripts/raw_temp/store",
    summary: "storeRawScriptTemp",
    tag: "script",
    body: z.string(),
    response: { contentType: "text/plain", description: "the SHA-256 of the content" },
    handler: async (ctx, { body }) => {
      // wmill hands the hash back as `temp_script_refs` of previews and lock jobs, for relative
      // imports of scripts not yet deployed; Millrace resolves no such references, so nothing
      // is kept: the answer is the content's hash, as the client expects.
      requirePermission(await ctx.membership(), "job.preview");
      return text(createHash("sha256").update(body).digest("hex"));
    },
  }),
];
