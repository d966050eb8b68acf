import {
  createWebhookToken,
  invalidInput,
  listWebhookTokens,
  revokeWebhookToken,
  webhookScope,
  type Membership,
} from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";
import { textAnswer, workspacePath } from "./params.ts";

function expiration(raw: string | null | undefined): Date | null {
  if (!raw) return null;
  const date = new Date(raw);
  if (Number.isNaN(date.getTime())) throw invalidInput("expiration", `not a valid date-time: "${raw}"`);
  return date;
}

/** windmill-client's TruncatedToken. */
const truncatedTokenShape = z.object({
  label: z.string().optional(),
  expiration: z.string().optional(),
  token_prefix: z.string(),
  created_at: z.string(),
  last_used_at: z.string(),
  scopes: z.array(z.string()),
  email: z.string(),
  workspace_id: z.string(),
  read_only: z.boolean(),
});

/**
 * Creates a token that may only run `path` (Windmill's `run:script/<path>` scope). Shared with
 * `POST /api/users/tokens/create` when it is sent such a scope.
 */
export async function createWebhookTokenFromBody(
  membership: Membership,
  services: Parameters<typeof createWebhookToken>[0],
  body: { label?: string | null; expiration?: string | null },
  path: string,
): Promise<Response> {
  const token = await createWebhookToken(services, membership, {
    path,
    label: body.label ?? null,
    expiresAt: expiration(body.expiration),
  });
  return text(token, 201);
}

export const webhookRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/webhooks/tokens/create",
    summary: "create a token that may only run the script or flow at path (Millrace's webhook token)",
    tag: "webhook",
    body: z.object({ path: z.string(), label: z.string().nullish(), expiration: z.string().nullish() }),
    response: textAnswer("the new token"),
    handler: async (ctx, { body }) =>
      createWebhookTokenFromBody(await ctx.membership(), ctx.services, body, body.path),
  }),

  defineRoute({
    method: "DELETE",
    pattern: "/api/w/:workspace/webhooks/tokens/delete/:token_prefix",
    summary: "revoke a webhook token",
    tag: "webhook",
    params: z.object({ workspace: z.string(), token_prefix: z.string() }),
    response: textAnswer("webhook token <token_prefix> revoked"),
    handler: async (ctx, { params }) => {
      await revokeWebhookToken(ctx.services, await ctx.membership(), params.token_prefix);
      return text(`webhook token ${params.token_prefix} revoked`);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/scripts/list_tokens/*path",
    summary: "listTokensOfScript",
    tag: "webhook",
    params: workspacePath,
    response: z.array(truncatedTokenShape),
    handler: async (ctx, { params }) => {
      const membership = await ctx.membership();
      const tokens = await listWebhookTokens(ctx.services, membership, params.path);
      return json(
        tokens.map((token) => ({
          label: token.label ?? undefined,
          expiration: token.expiresAt?.toISOString(),
          token_prefix: token.tokenPrefix,
          created_at: token.createdAt.toISOString(),
          last_used_at: (token.lastUsedAt ?? token.createdAt).toISOString(),
          scopes: [webhookScope(token.path)],
          email: token.ownerEmail,
          workspace_id: membership.workspace.id,
          read_only: false,
        })),
      );
    },
  }),
];
