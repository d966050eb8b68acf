import { z } from "zod";
import { createWebhookToken, listWebhookTokens, revokeWebhookToken } from "@millrace/core";
import { router, workspaceProcedure } from "../init.ts";

export const webhookRouter = router({
  tokens: workspaceProcedure.input(z.object({ path: z.string() })).query(async ({ ctx, input }) => {
    const tokens = await listWebhookTokens(ctx.services, ctx.membership, input.path);
    return tokens.map((token) => ({
      tokenPrefix: token.tokenPrefix,
      label: token.label,
      ownerEmail: token.ownerEmail,
      createdAt: token.createdAt.toISOString(),
      lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
      expiresAt: token.expiresAt?.toISOString() ?? null,
    }));
  }),

  /** The token's value is in this answer only; it is never shown again. */
  createToken: workspaceProcedure
    .input(z.object({ path: z.string(), label: z.string().max(200).optional() }))
    .mutation(async ({ ctx, input }) => ({
      token: await createWebhookToken(ctx.services, ctx.membership, {
        path: input.path,
        label: input.label ?? null,
      }),
    })),

  revokeToken: workspaceProcedure
    .input(z.object({ tokenPrefix: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await revokeWebhookToken(ctx.services, ctx.membership, input.tokenPrefix);
      return { tokenPrefix: input.tokenPrefix };
    }),
});
