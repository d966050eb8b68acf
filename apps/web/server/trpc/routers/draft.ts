import { z } from "zod";
import { discardDraft, getDraft, saveDraft } from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";

// `path` is "" for the draft of a script not deployed yet (see packages/core/src/drafts.ts).
const pathInput = z.object({ path: z.string().max(255) });

/** The caller's own drafts of scripts: saved as the editor types, restored when they come back. */
export const draftRouter = router({
  get: workspaceProcedure.input(pathInput).query(async ({ ctx, input }) => {
    const draft = await getDraft(ctx.services, ctx.membership, input.path);
    return draft && { path: draft.path, value: draft.value, updatedAt: draft.updatedAt.toISOString() };
  }),
  save: workspaceProcedure
    .input(pathInput.extend({ value: z.record(z.string(), z.unknown()) }))
    .mutation(async ({ ctx, input }) => {
      const draft = await saveDraft(ctx.services, ctx.membership, input);
      return { path: draft.path, updatedAt: draft.updatedAt.toISOString() };
    }),
  discard: workspaceProcedure.input(pathInput).mutation(async ({ ctx, input }) => {
    await discardDraft(ctx.services, ctx.membership, input.path);
    return { discarded: input.path };
  }),
});
