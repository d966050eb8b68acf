import {
  createWebhookToken,
  invalidInput,
  listWebhookTokens,
  revokeWebhookToken,
  webhookScope,
  type Membership,
} from "@millrace/core";
import { json, readJson, readObject, text } from "../../http.ts";
import type { Route } from "../router.ts";
import { optionalString, requiredString } from "./params.ts";

function expiration(body: Record<string, unknown>): Date | null {
  const raw = optionalString(body, "expiration");
  if (!raw) return null;
  const date = new Date(raw);
  if (Number.isNaN(date.getTime())) throw invalidInput("expiration", `not a valid date-time: "${raw}"`);
  return date;
}

/**
 * Creates a token that may only run `path` (Windmill's `run:script/<path>` scope). Shared with
 * `POST /api/users/tokens/create` when it is sent such a scope.
 */
export async function createWebhookTokenFromBody(
  membership: Membership,
  services: Parameters<typeof createWebhookToken>[0],
  body: Record<string, unknown>,
  path: string,
): Promise<Response> {
  const token = await createWebhookToken(services, membership, {
    path,
    label: optionalString(body, "label") ?? null,
    expiresAt: expiration(body),
  });
  return text(token, 201);
}

export const webhookRoutes: Route[] = [
  {
    method: "POST",
    pattern: "/api/w/:workspace/webhooks/tokens/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      return createWebhookTokenFromBody(
        await ctx.membership(),
        ctx.services,
        body,
        requiredString(body, "path"),
      );
    },
  },

  {
    method: "DELETE",
    pattern: "/api/w/:workspace/webhooks/tokens/delete/:token_prefix",
    handler: async (ctx) => {
      await revokeWebhookToken(ctx.services, await ctx.membership(), ctx.params.token_prefix ?? "");
      return text(`webhook token ${ctx.params.token_prefix} revoked`);
    },
  },

  {
    // Windmill's ScriptService.listTokensOfScript (TruncatedToken).
    method: "GET",
    pattern: "/api/w/:workspace/scripts/list_tokens/*path",
    handler: async (ctx) => {
      const membership = await ctx.membership();
      const tokens = await listWebhookTokens(ctx.services, membership, ctx.params.path ?? "");
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
  },
];
