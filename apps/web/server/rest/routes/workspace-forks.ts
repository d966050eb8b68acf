import {
  compareWorkspaceFork,
  createWorkspaceFork,
  createWorkspaceForkBranch,
  deleteWorkspace,
  resetForkDiffTally,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute, queryBool } from "../define.ts";
import type { Route } from "../router.ts";

// `wmill workspace fork` / `delete-fork` / `merge`: see core workspace-forks.ts.

/** windmill-client's CreateWorkspaceFork (datatables and ducklakes do not exist here). */
const createForkBody = z.object({
  id: z.string(),
  name: z.string(),
  color: z.string().nullish(),
  forked_datatables: z.array(z.unknown()).nullish(),
  shared_ducklakes: z.array(z.string()).nullish(),
});

const hiddenShape = z.object({
  total: z.number(),
  by_kind: z.record(z.string(), z.number()),
  items: z.array(z.object({ kind: z.string(), path: z.string() })),
});

/** windmill-client's WorkspaceComparison. */
const comparisonShape = z.object({
  all_ahead_items_visible: z.boolean(),
  all_behind_items_visible: z.boolean(),
  skipped_comparison: z.boolean(),
  diffs: z.array(
    z.object({
      kind: z.string(),
      path: z.string(),
      ahead: z.number(),
      behind: z.number(),
      has_changes: z.boolean(),
      exists_in_source: z.boolean(),
      exists_in_fork: z.boolean(),
    }),
  ),
  summary: z.object({
    total_diffs: z.number(),
    total_ahead: z.number(),
    total_behind: z.number(),
    scripts_changed: z.number(),
    flows_changed: z.number(),
    apps_changed: z.number(),
    resources_changed: z.number(),
    variables_changed: z.number(),
    resource_types_changed: z.number(),
    folders_changed: z.number(),
    schedules_changed: z.number(),
    triggers_changed: z.number(),
    datatable_migrations_changed: z.number(),
    conflicts: z.number(),
  }),
  hidden_ahead: hiddenShape,
  hidden_behind: hiddenShape,
});

const noneHidden = () => ({ total: 0, by_kind: {}, items: [] });

export const workspaceForkRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/workspaces/create_fork",
    summary: "createWorkspaceFork",
    tag: "workspace",
    body: createForkBody,
    response: { contentType: "text/plain", description: "Created forked workspace <id>" },
    handler: async (ctx, { body }) => {
      const id = await createWorkspaceFork(ctx.services, await ctx.membership(), {
        id: body.id,
        name: body.name,
      });
      return text(`Created forked workspace ${id}`, 201);
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/workspaces/create_workspace_fork_branch",
    summary: "createWorkspaceForkGitBranch",
    tag: "workspace",
    body: createForkBody,
    response: z.array(z.string()),
    handler: async (ctx, { body }) =>
      json(await createWorkspaceForkBranch(await ctx.membership(), { id: body.id, name: body.name })),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/workspaces/compare/:target_workspace_id",
    summary: "compareWorkspaces",
    tag: "workspace",
    params: z.object({ workspace: z.string(), target_workspace_id: z.string() }),
    response: comparisonShape,
    handler: async (ctx, { params }) => {
      const comparison = await compareWorkspaceFork(
        ctx.services,
        await ctx.membership(),
        params.target_workspace_id,
      );
      const diffs = comparison.diffs;
      const changed = (kind: string) => diffs.filter((d) => d.kind === kind).length;
      return json({
        // Admins of both sides only (see core): every item is visible to the caller.
        all_ahead_items_visible: true,
        all_behind_items_visible: true,
        skipped_comparison: comparison.skipped,
        diffs,
        summary: {
          total_diffs: diffs.length,
          total_ahead: diffs.reduce((n, d) => n + d.ahead, 0),
          total_behind: diffs.reduce((n, d) => n + d.behind, 0),
          scripts_changed: changed("script"),
          flows_changed: changed("flow"),
          apps_changed: 0,
          resources_changed: changed("resource"),
          variables_changed: changed("variable"),
          resource_types_changed: changed("resource_type"),
          folders_changed: changed("folder"),
          schedules_changed: changed("schedule"),
          triggers_changed: 0,
          datatable_migrations_changed: 0,
          conflicts: diffs.filter((d) => d.ahead > 0 && d.behind > 0).length,
        },
        hidden_ahead: noneHidden(),
        hidden_behind: noneHidden(),
      });
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/workspaces/reset_diff_tally/:fork_workspace_id",
    summary: "resetDiffTally",
    tag: "workspace",
    params: z.object({ workspace: z.string(), fork_workspace_id: z.string() }),
    response: { contentType: "text/plain", description: "Reset the diff tally of <fork>" },
    handler: async (ctx, { params }) => {
      await resetForkDiffTally(ctx.services, await ctx.membership(), params.fork_workspace_id);
      return text(`Reset the diff tally of ${params.fork_workspace_id}`);
    },
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/workspaces/delete/:workspace",
    summary: "deleteWorkspace",
    tag: "workspace",
    params: z.object({ workspace: z.string() }),
    query: z.object({ only_delete_forks: queryBool.optional() }),
    response: { contentType: "text/plain", description: "Deleted workspace <id>" },
    handler: async (ctx, { params, query }) => {
      await deleteWorkspace(ctx.services, await ctx.principal(), params.workspace, {
        onlyDeleteForks: query.only_delete_forks === true,
      });
      return text(`Deleted workspace ${params.workspace}`);
    },
  }),
];
