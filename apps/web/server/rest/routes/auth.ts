import {
  checkReadiness,
  createApiToken,
  createToken,
  invalidInput,
  principalOf,
  RateLimitedError,
  READY_RETRY_AFTER_SECS,
  requireMembership,
  scopePathOf,
  signIn,
} from "@millrace/core";
import { z } from "zod";
import { requestIp } from "../../auth/principal.ts";
import { text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";
import { MILLRACE_VERSION, textAnswer } from "./params.ts";
import { createWebhookTokenFromBody } from "./webhooks.ts";

export const authRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/version",
    summary: "backendVersion",
    tag: "settings",
    auth: "public",
    offline: true,
    response: textAnswer("Millrace v<version>"),
    handler: async () => text(`Millrace v${MILLRACE_VERSION}`),
  }),

  // The readiness probe (load balancers, Kubernetes): 200 when this server's database answers.
  // A server whose database cannot be reached at all never gets this far: the router answers 503
  // for it (errorResponse), with the same Retry-After.
  defineRoute({
    method: "GET",
    pattern: "/api/ready",
    summary: "ready",
    tag: "settings",
    auth: "public",
    response: textAnswer("`ready`; 503 with retry-after and the reason while the database does not answer"),
    handler: async (ctx) => {
      const readiness = await checkReadiness(ctx.services.pool);
      if (readiness.ready) return text("ready");
      return new Response(readiness.reason, {
        status: 503,
        headers: {
          "content-type": "text/plain; charset=utf-8",
          "retry-after": String(READY_RETRY_AFTER_SECS),
        },
      });
    },
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/auth/login",
    summary: "login",
    tag: "user",
    auth: "public",
    body: z.object({ email: z.string(), password: z.string() }),
    response: textAnswer(
      "a session token (also set as the `token` cookie); 429 with retry-after when rate-limited",
    ),
    handler: async (ctx, { body }) => {
      let user;
      try {
        user = await signIn(ctx.services, {
          email: body.email,
          password: body.password,
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
  }),

  defineRoute({
    method: "POST",
    pattern: "/api/users/tokens/create",
    summary: "createToken",
    tag: "user",
    // windmill-client's NewToken.
    body: z.object({
      label: z.string().nullish(),
      expiration: z.string().nullish(),
      scopes: z.array(z.string(), { error: "must be a list of strings" }).nullish(),
      workspace_id: z.string().nullish(),
    }),
    response: textAnswer("the new token"),
    handler: async (ctx, { body }) => {
      // Windmill's webhook tokens: `scopes: ["run:script/<path>"]` with the script's workspace_id.
      const scopePath = scopePathOf(body.scopes);
      if (scopePath) {
        if (!body.workspace_id) throw invalidInput("workspace_id", "is required");
        const membership = await requireMembership(ctx.services, await ctx.principal(), body.workspace_id);
        return createWebhookTokenFromBody(membership, ctx.services, body, scopePath);
      }
      const expiresAt = body.expiration ? new Date(body.expiration) : null;
      if (expiresAt && Number.isNaN(expiresAt.getTime()))
        throw invalidInput("expiration", "not a valid date-time");
      const token = await createToken(ctx.services, await ctx.principal(), {
        label: body.label ?? null,
        expiresAt,
        workspaceId: body.workspace_id ?? null,
      });
      return text(token, 201);
    },
  }),
];
