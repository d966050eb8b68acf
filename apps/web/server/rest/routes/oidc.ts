import { issueJobIdToken, oidcDiscovery, oidcJwks } from "@millrace/core";
import { z } from "zod";
import { requestToken } from "../../auth/principal.ts";
import { serverEnv } from "../../env.ts";
import { json, text } from "../../http.ts";
import { defineRoute, queryInt } from "../define.ts";
import type { Route } from "../router.ts";
import { textAnswer } from "./params.ts";

// OIDC ID tokens for jobs (windmill-client's getIdToken) and the issuer's public documents, which
// cloud providers fetch without credentials: see core oidc.ts.

export const oidcRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/oidc/token/:audience",
    summary: "getOidcToken",
    tag: "oidc",
    params: z.object({ workspace: z.string(), audience: z.string() }),
    query: z.object({ expires_in: queryInt.optional() }),
    response: textAnswer("a signed JWT (ES256) for the calling job"),
    handler: async (ctx, { params, query }) => {
      const env = serverEnv();
      const token = await issueJobIdToken(ctx.services, await ctx.membership(), {
        rawInstanceKey: env.MILLRACE_SECRET_KEY,
        baseUrl: env.BASE_URL,
        callerToken: requestToken(ctx.request.headers, ctx.url),
        audience: params.audience,
        expiresInSecs: query.expires_in,
      });
      return text(token);
    },
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/oidc/jwks",
    summary: "the public keys of the instance's OIDC issuer",
    tag: "oidc",
    auth: "public",
    response: z.object({ keys: z.array(z.record(z.string(), z.string())) }),
    handler: async (ctx) => json(await oidcJwks(ctx.services, serverEnv().MILLRACE_SECRET_KEY)),
  }),

  defineRoute({
    method: "GET",
    pattern: "/api/oidc/.well-known/openid-configuration",
    summary: "the OIDC discovery document of the instance's issuer",
    tag: "oidc",
    auth: "public",
    response: z.object({ issuer: z.string(), jwks_uri: z.string() }).loose(),
    handler: async () => json(oidcDiscovery(serverEnv().BASE_URL)),
  }),
];
