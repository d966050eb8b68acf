import {
  createApiToken,
  createToken,
  invalidInput,
  principalOf,
  RateLimitedError,
  requireMembership,
  scopePathOf,
  signIn,
} from "@millrace/core";
import { requestIp } from "../../auth/principal.ts";
import { readJson, readObject, text } from "../../http.ts";
import type { Route } from "../router.ts";
import { MILLRACE_VERSION, optionalString, requiredString } from "./params.ts";
import { createWebhookTokenFromBody } from "./webhooks.ts";

export const authRoutes: Route[] = [
  { method: "GET", pattern: "/api/version", handler: async () => text(`Millrace v${MILLRACE_VERSION}`) },

  {
    method: "POST",
    pattern: "/api/auth/login",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      let user;
      try {
        user = await signIn(ctx.services, {
          email: requiredString(body, "email"),
          password: requiredString(body, "password"),
          ip: requestIp(ctx.request.headers),
        });
      } catch (error) {
        if (!(error instanceof RateLimitedError)) throw error;
        return new Response(error.message, {
          status: 429,
          headers: {
            "content-type": "text/plain; charset=utf-8",
            "retry-after": String(error.retryAfterSecs),
          },
        });
      }
      const token = await createApiToken(ctx.services, principalOf(user), {
        label: "login",
        kind: "session",
        expiresAt: new Date(Date.now() + 7 * 24 * 3600 * 1000),
      });
      const response = text(token);
      response.headers.set(
        "set-cookie",
        `token=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${7 * 24 * 3600}`,
      );
      return response;
    },
  },

  {
    method: "POST",
    pattern: "/api/users/tokens/create",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      // Windmill's webhook tokens: `scopes: ["run:script/<path>"]` with the script's workspace_id.
      const scopePath = scopePathOf(body.scopes);
      if (scopePath) {
        const workspace = requiredString(body, "workspace_id");
        const membership = await requireMembership(ctx.services, await ctx.principal(), workspace);
        return createWebhookTokenFromBody(membership, ctx.services, body, scopePath);
      }
      const expiration = optionalString(body, "expiration");
      const expiresAt = expiration ? new Date(expiration) : null;
      if (expiresAt && Number.isNaN(expiresAt.getTime()))
        throw invalidInput("expiration", "not a valid date-time");
      const token = await createToken(ctx.services, await ctx.principal(), {
        label: optionalString(body, "label") ?? null,
        expiresAt,
        workspaceId: optionalString(body, "workspace_id") ?? null,
      });
      return text(token, 201);
    },
  },
];
