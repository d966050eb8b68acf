import {
  createWorkspaceDependencies,
  getLatestWorkspaceDependencies,
  listWorkspaceDependencies,
  removeWorkspaceDependencies,
  type WorkspaceDependenciesView,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";
import { textAnswer } from "./params.ts";

// `wmill dependencies push` and `wmill sync push` of a repository's `dependencies/` folder.

/** windmill-client's WorkspaceDependencies. */
const dependenciesShape = z.object({
  id: z.number(),
  archived: z.boolean(),
  name: z.string().optional(),
  description: z.string().optional(),
  content: z.string(),
  language: z.string(),
  workspace_id: z.string(),
  created_at: z.string(),
});

function windmillDependencies(row: WorkspaceDependenciesView): z.infer<typeof dependenciesShape> {
  return {
    id: row.id,
    archived: row.archived,
    name: row.name ?? undefined,
    description: row.description ?? undefined,
    content: row.content,
    language: row.language,
    workspace_id: row.workspaceId,
    created_at: row.createdAt.toISOString(),
  };
}

const byLanguage = z.object({ workspace: z.string(), language: z.string() });
const nameQuery = z.object({ name: z.string().optional() });

export const workspaceDependencyRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/workspace_dependencies/create",
    summary: "createWorkspaceDependencies",
    tag: "workspace_dependencies",
    body: z.object({
      language: z.string(),
      name: z.string().nullish(),
      description: z.string().nullish(),
      content: z.string(),
      workspace_id: z.string().optional(),
    }),
    response: textAnswer("the new version's id"),
    handler: async (ctx, { body }) => {
      const row = await createWorkspaceDependencies(ctx.services, await ctx.membership(), body);
      return text(String(row.id), 201);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/workspace_dependencies/list",
    summary: "listWorkspaceDependencies",
    tag: "workspace_dependencies",
    response: z.array(dependenciesShape),
    handler: async (ctx) =>
      json((await listWorkspaceDependencies(ctx.services, await ctx.membership())).map(windmillDependencies)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/workspace_dependencies/get_latest/:language",
    summary: "getLatestWorkspaceDependencies",
    tag: "workspace_dependencies",
    params: byLanguage,
    query: nameQuery,
    response: dependenciesShape,
    handler: async (ctx, { params, query }) =>
      json(
        windmillDependencies(
          await getLatestWorkspaceDependencies(
            ctx.services,
            await ctx.membership(),
            params.language,
            query.name,
          ),
        ),
      ),
  }),

  ...(["archive", "delete"] as const).map((how) =>
    defineRoute({
      method: "POST",
      pattern: `/api/w/:workspace/workspace_dependencies/${how}/:language`,
      summary: how === "archive" ? "archiveWorkspaceDependencies" : "deleteWorkspaceDependencies",
      tag: "workspace_dependencies",
      params: byLanguage,
      query: nameQuery,
      response: textAnswer(`${how === "archive" ? "Archived" : "Deleted"} workspace dependencies`),
      handler: async (ctx, { params, query }) => {
        await removeWorkspaceDependencies(
          ctx.services,
          await ctx.membership(),
          how,
          params.language,
          query.name,
        );
        return text(
          `${how === "archive" ? "Archived" : "Deleted"} workspace dependencies for ${params.language}`,
        );
      },
    }),
  ),
];
