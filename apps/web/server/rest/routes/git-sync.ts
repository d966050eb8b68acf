// Millrace's own sync routes (Windmill has none of these: its git sync is enterprise-only):
// the git sync link of a workspace, `millrace sync pull/push` (the repository files as JSON), and
// restore (superadmins; from files or straight from a git remote).
import {
  AppError,
  applyWindmillGitSyncSettings,
  deleteGitSyncSettings,
  getGitSyncStatus,
  readRepositoryFiles,
  requirePermission,
  requestGitSync,
  restoreWorkspaceFiles,
  setGitSyncSettings,
  type RestoreReport,
} from "@millrace/core";
import { z } from "zod";
import { textAnswer } from "./params.ts";
import { errorResponse, json, text } from "../../http.ts";
import {
  restoreSourceFiles,
  gitRestoreSourceSchema,
  gitSyncSettingsSchema,
  repositoryFilesSchema,
} from "../../restore-from-git.ts";
import { defineRoute } from "../define.ts";
import type { RestContext, Route } from "../router.ts";

const pushBody = z.strictObject({
  files: repositoryFilesSchema,
  yes: z.boolean().optional(),
  dry_run: z.boolean().optional(),
  plain_secrets: z.boolean().optional(),
});

const restoreBody = z
  .strictObject({
    files: repositoryFilesSchema.optional(),
    git: gitRestoreSourceSchema.optional(),
    workspace_id: z.string().optional(),
    yes: z.boolean().optional(),
    dry_run: z.boolean().optional(),
    plain_secrets: z.boolean().optional(),
  })
  .refine((b) => (b.files === undefined) !== (b.git === undefined), {
    message: "send either files or git",
    path: ["files"],
  });

type Progress = (phase: string, done: number, total: number) => void;

/**
 * Runs a restore or push. Asked with `Accept: application/x-ndjson` (the CLI's progress bar), the
 * answer is a stream of `{"progress": {phase, done, total}}` lines and a last line
 * `{"status", "report"}` or `{"status", "error"}`, the status being what the plain answer's would
 * be; otherwise the plain answer (reportResponse).
 */
function reportOrStream(
  ctx: RestContext,
  route: string,
  run: (onProgress: Progress) => Promise<RestoreReport>,
): Promise<Response> | Response {
  if (!(ctx.request.headers.get("accept") ?? "").includes("application/x-ndjson"))
    return run(() => {}).then(reportResponse);
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (line: unknown) => controller.enqueue(encoder.encode(`${JSON.stringify(line)}\n`));
      try {
        const response = reportResponse(
          await run((phase, done, total) => send({ progress: { phase, done, total } })),
        );
        send({ status: response.status, report: await response.json() });
      } catch (error) {
        const response = errorResponse(error, { route });
        send({ status: response.status, error: await response.text() });
      } finally {
        controller.close();
      }
    },
  });
  return new Response(stream, { status: 200, headers: { "content-type": "application/x-ndjson" } });
}

/** 200 applied, 400 refused (every problem listed), 409 needs `yes` (the diff is in the body). */
function reportResponse(report: RestoreReport): Response {
  if (report.errors.length > 0)
    return json(
      {
        error: { message: `the repository has ${report.errors.length} problem(s): nothing was applied` },
        ...report,
      },
      400,
    );
  if (report.needsConfirmation)
    return json(
      {
        error: { message: "the workspace differs from the repository: send yes to apply the diff" },
        ...report,
      },
      409,
    );
  return json(report);
}

/** A restore's or push's report (RestoreReport): 200 applied, 400 refused, 409 needs `yes`. */
const restoreReportAnswer = {
  contentType: "application/json",
  description:
    "the report (200 applied, 400 refused with every problem, 409 needs yes); with Accept: application/x-ndjson, progress lines then the status and report",
};

const gitSyncStatusShape = z.record(z.string(), z.unknown());

export const gitSyncRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/git_sync/status",
    summary: "the workspace's git sync link and its last run (Millrace's own)",
    tag: "git_sync",
    response: gitSyncStatusShape,
    handler: async (ctx) => json(await getGitSyncStatus(ctx.services, await ctx.membership())),
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/git_sync/settings",
    summary: "link the workspace to a git repository (Millrace's own)",
    tag: "git_sync",
    body: gitSyncSettingsSchema,
    response: gitSyncStatusShape,
    handler: async (ctx, { body }) =>
      json(await setGitSyncSettings(ctx.services, await ctx.membership(), body)),
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/workspaces/edit_git_sync_config",
    summary: "editWorkspaceGitSyncConfig",
    tag: "git_sync",
    // Windmill's WorkspaceGitSyncSettings: its first repository becomes the workspace's link.
    body: z.object({
      git_sync_settings: z
        .object({
          repositories: z
            .array(
              z.looseObject({
                git_repo_resource_path: z.string(),
                settings: z
                  .looseObject({
                    include_path: z.array(z.string()).nullish(),
                    include_type: z.array(z.string()).nullish(),
                    exclude_path: z.array(z.string()).nullish(),
                  })
                  .nullish(),
              }),
            )
            .nullish(),
        })
        .loose()
        .nullish(),
    }),
    response: textAnswer("Edited the git sync settings of <workspace>"),
    handler: async (ctx, { body }) => {
      const membership = await ctx.membership();
      const settings = body.git_sync_settings;
      await applyWindmillGitSyncSettings(ctx.services, membership, {
        repositories: settings?.repositories?.map((repository) => ({
          git_repo_resource_path: repository.git_repo_resource_path,
          settings: repository.settings
            ? {
                include_path: repository.settings.include_path ?? undefined,
                include_type: repository.settings.include_type ?? undefined,
                exclude_path: repository.settings.exclude_path ?? undefined,
              }
            : null,
        })),
      });
      return text(`Edited the git sync settings of ${membership.workspace.id}`);
    },
  }),
  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/git_sync/settings",
    summary: "unlink the workspace from its git repository",
    tag: "git_sync",
    response: z.object({ unlinked: z.literal(true) }),
    handler: async (ctx) => {
      await deleteGitSyncSettings(ctx.services, await ctx.membership());
      return json({ unlinked: true });
    },
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/git_sync/run",
    summary: "run the workspace's git sync now",
    tag: "git_sync",
    response: z.object({ requested: z.literal(true) }),
    handler: async (ctx) => {
      await requestGitSync(ctx.services, await ctx.membership());
      return json({ requested: true }, 202);
    },
  }),
  defineRoute({
    // `millrace sync pull`: the files of the workspace's repository (admins: every path).
    method: "GET",
    pattern: "/api/w/:workspace/sync/files",
    summary: "the workspace as repository files (millrace sync pull)",
    tag: "sync",
    response: z.object({ files: z.record(z.string(), z.string()) }),
    handler: async (ctx) => {
      const membership = await ctx.membership();
      requirePermission(membership, "workspace.manage");
      const files = await readRepositoryFiles(ctx.services.pool, membership.workspace.id);
      return json({ files: Object.fromEntries([...files].sort(([a], [b]) => (a < b ? -1 : 1))) });
    },
  }),
  defineRoute({
    // `millrace sync push`: the workspace becomes the repository (checked whole, applied at once).
    method: "POST",
    pattern: "/api/w/:workspace/sync/push",
    summary: "make the workspace what the repository files say (millrace sync push)",
    tag: "sync",
    body: pushBody,
    response: restoreReportAnswer,
    handler: async (ctx, { body: input }) => {
      const membership = await ctx.membership();
      return reportOrStream(ctx, "POST /api/w/:workspace/sync/push", (onProgress) =>
        restoreWorkspaceFiles(ctx.services, membership.principal, new Map(Object.entries(input.files)), {
          scope: "workspace",
          workspaceId: membership.workspace.id,
          membership,
          yes: input.yes,
          dryRun: input.dry_run,
          plainSecrets: input.plain_secrets,
          onProgress,
        }),
      );
    },
  }),
  defineRoute({
    // Restore (superadmins): from files, or straight from a git remote the server clones.
    method: "POST",
    pattern: "/api/restore",
    summary: "restore workspaces from repository files or a git remote (superadmins)",
    tag: "sync",
    body: restoreBody,
    response: restoreReportAnswer,
    handler: async (ctx, { body: input }) => {
      const principal = await ctx.principal();
      if (!principal.isSuperAdmin) throw new AppError("FORBIDDEN", "only superadmins restore workspaces");
      return reportOrStream(ctx, "POST /api/restore", async (onProgress) => {
        onProgress("reading the repository", 0, 1);
        const files = await restoreSourceFiles(input);
        onProgress("checking", 0, files.size);
        return restoreWorkspaceFiles(ctx.services, principal, files, {
          scope: "instance",
          workspaceId: input.workspace_id,
          yes: input.yes,
          dryRun: input.dry_run,
          plainSecrets: input.plain_secrets,
          onProgress,
        });
      });
    },
  }),
];
