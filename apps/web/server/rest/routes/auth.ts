import { AppError, authenticate, createApiToken, invalidInput, principalOf } from "@millrace/core";
import { readJson, readObject, text } from "../../http.ts";
import type { Route } from "../router.ts";
import { MILLRACE_VERSION, optionalString, requiredString } from "./params.ts";

export const authRoutes: Route[] = [
  { method: "GET", pattern: "/api/version", handler: async () => text(`Millrace v${MILLRACE_VERSION}`) },

  {
    method: "POST",
    pattern: "/api/auth/login",
    handler: async (ctx) => {
      const body = readObject(await readJson(ctx.request));
      const user = await authenticate(
        ctx.services,
        requiredString(body, "email"),
        requiredString(body, "password"),
      );
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
      const expiration = optionalString(body, "expiration");
      const expiresAt = expiration ? new Date(expiration) : null;
      if (expiresAt && Number.isNaN(expiresAt.getTime()))
        throw invalidInput("expiration", "not a valid date-time");
      const principal = await ctx.principal();
      if (principal.username === "superadmin_secret") {
        throw new AppError(
          "INVALID_INPUT",
          "SUPERADMIN_SECRET is not a user; sign in as a user to create tokens",
        );
      }
      const token = await createApiToken(ctx.services, principal, {
        label: optionalString(body, "label") ?? null,
        expiresAt,
        workspaceId: optionalString(body, "workspace_id") ?? null,
      });
      return text(token, 201);
    },
  },
];
