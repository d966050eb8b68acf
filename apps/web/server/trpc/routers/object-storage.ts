import { z } from "zod";
import {
  editLargeFileStorage,
  objectStorageView,
  requirePermission,
  testObjectStorage,
} from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";

// Thin adapters over core (the Object storage page): core checks the setting and the rights.
export const objectStorageRouter = router({
  /** The setting for every member; the s3 resources to choose from for an admin. */
  get: workspaceProcedure.query(({ ctx }) => objectStorageView(ctx.services, ctx.membership)),

  /** Windmill's large_file_storage value (null or {} removes the storage), by an admin. */
  save: workspaceProcedure
    .input(z.object({ large_file_storage: z.unknown() }))
    .mutation(async ({ ctx, input }) => {
      await editLargeFileStorage(ctx.services, ctx.membership, input.large_file_storage ?? null);
      return objectStorageView(ctx.services, ctx.membership);
    }),

  /**
   * Writes and deletes a probe object in a storage (primary, or `storage` by name): of `setting`,
   * the form's unsaved large_file_storage value, else of the saved one.
   */
  test: workspaceProcedure
    .input(z.object({ storage: z.string().min(1).optional(), setting: z.unknown().optional() }))
    .mutation(async ({ ctx, input }) => {
      requirePermission(ctx.membership, "workspace.manage");
      const result = await testObjectStorage(ctx.services, ctx.membership, {
        storage: input.storage,
        setting: input.setting,
      });
      return { resourcePath: result.resourcePath, bucket: result.bucket };
    }),
});
