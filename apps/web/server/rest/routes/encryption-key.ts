// Windmill's workspace encryption key, as `wmill sync pull --include-key` reads it and `wmill sync
// push` sets it (see packages/core/src/secrets/workspace-key.ts for what the key is and how a
// change re-encrypts the workspace's secrets).
import { getWorkspaceEncryptionKey, setWorkspaceEncryptionKey } from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { Route } from "../router.ts";
import { callMeta, textAnswer } from "./params.ts";

export const encryptionKeyRoutes: Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/workspaces/encryption_key",
    summary: "getWorkspaceEncryptionKey",
    tag: "workspace",
    response: z.object({ key: z.string() }),
    handler: async (ctx) =>
      json(await getWorkspaceEncryptionKey(ctx.services, await ctx.membership(), callMeta(ctx))),
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/workspaces/encryption_key",
    summary: "setWorkspaceEncryptionKey",
    tag: "workspace",
    body: z.object({ new_key: z.string(), skip_reencrypt: z.boolean().nullish() }),
    response: textAnswer("what was re-encrypted"),
    handler: async (ctx, { body }) => {
      const result = await setWorkspaceEncryptionKey(
        ctx.services,
        await ctx.membership(),
        { newKey: body.new_key, skipReencrypt: body.skip_reencrypt ?? false },
        callMeta(ctx),
      );
      return text(
        `Updated workspace encryption key: ${result.reencrypted} secrets re-encrypted, ` +
          `${result.kept} already under it`,
      );
    },
  }),
];
