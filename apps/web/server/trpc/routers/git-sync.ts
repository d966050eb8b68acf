import { z } from "zod";
import {
  AppError,
  deleteGitSyncSettings,
  getGitSyncStatus,
  requestGitSync,
  restoreWorkspaceFiles,
  setGitSyncSettings,
  SYNC_KINDS,
  type GitSyncStatus,
} from "@millrace/core";
import {
  restoreSourceFiles,
  gitRestoreSourceSchema,
  gitSyncSettingsSchema,
  repositoryFilesSchema,
} from "../../restore-from-git.ts";
import { authedProcedure, router, workspaceProcedure } from "../init.ts";

/** Dates as ISO strings (the tRPC link sends plain JSON); the kinds for the form's checkboxes. */
function statusView(status: GitSyncStatus) {
  const iso = (date: Date | null) => (date ? new Date(date).toISOString() : null);
  return {
    ...status,
    last_commit_at: iso(status.last_commit_at),
    last_error_at: iso(status.last_error_at),
    next_attempt_at: iso(status.next_attempt_at),
    runs: status.runs.map((run) => ({
      ...run,
      started_at: new Date(run.started_at).toISOString(),
      finished_at: iso(run.finished_at),
    })),
    kinds: [...SYNC_KINDS] as string[],
  };
}

export type GitSyncStatusView = ReturnType<typeof statusView>;

// Thin adapters over core: core checks the permission (workspace.manage) and the settings.
export const gitSyncRouter = router({
  status: workspaceProcedure.query(async ({ ctx }) =>
    statusView(await getGitSyncStatus(ctx.services, ctx.membership)),
  ),

  /** `password` undefined keeps the stored one; null or "" removes it. */
  save: workspaceProcedure
    .input(gitSyncSettingsSchema.extend({ workspace: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const { workspace: _workspace, ...settings } = input;
      return statusView(await setGitSyncSettings(ctx.services, ctx.membership, settings));
    }),

  unlink: workspaceProcedure.mutation(async ({ ctx }) => {
    await deleteGitSyncSettings(ctx.services, ctx.membership);
    return { unlinked: true };
  }),

  syncNow: workspaceProcedure.mutation(async ({ ctx }) => {
    await requestGitSync(ctx.services, ctx.membership);
    return { requested: true };
  }),

  /**
   * Restore (superadmins) from a git remote (the Restore page) or from files. Without `yes` a
   * workspace that exists and differs is not touched: the report carries the diff to confirm.
   * Problems of the repository come back in `errors` (nothing applied), not as an error.
   */
  restore: authedProcedure
    .input(
      z
        .object({
          git: gitRestoreSourceSchema.optional(),
          files: repositoryFilesSchema.optional(),
          workspaceId: z.string().optional(),
          yes: z.boolean().optional(),
          dryRun: z.boolean().optional(),
        })
        .refine((b) => (b.files === undefined) !== (b.git === undefined), {
          message: "send either files or git",
          path: ["git"],
        }),
    )
    .mutation(async ({ ctx, input }) => {
      // Before the remote is contacted: only superadmins make the server clone anything.
      if (!ctx.principal.isSuperAdmin) throw new AppError("FORBIDDEN", "only superadmins restore workspaces");
      const files = await restoreSourceFiles(input);
      return restoreWorkspaceFiles(ctx.services, ctx.principal, files, {
        scope: "instance",
        workspaceId: input.workspaceId || undefined,
        yes: input.yes,
        dryRun: input.dryRun,
      });
    }),
});
