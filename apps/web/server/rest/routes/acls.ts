// Windmill's granular ACLs (`acls/add|remove/<kind>/<path>`), as `wmill sync push` sends them:
// for a group's members (`group_`) and a folder's grants (`folder`). Millrace grants access per
// folder, so any other kind (a variable's or a resource's own extra_perms) is refused naming it.
import { checkGroupAcl, getGranularAcls, invalidInput, setFolderPermission } from "@millrace/core";
import { z } from "zod";
import { json, text } from "../../http.ts";
import { defineRoute } from "../define.ts";
import type { RestContext, Route } from "../router.ts";
import { textAnswer } from "./params.ts";

function principalOf(owner: string): string {
  return owner.includes("/") ? owner : `u/${owner}`;
}

const aclParams = z.object({ workspace: z.string(), kind: z.string(), path: z.string() });
type AclParams = z.infer<typeof aclParams>;

async function change(ctx: RestContext, params: AclParams, ownerName: string, write: boolean, add: boolean) {
  const owner = principalOf(ownerName);
  const { kind, path } = params;
  const membership = await ctx.membership();
  if (kind === "group_") {
    await checkGroupAcl(ctx.services, membership, path, owner, add ? "add" : "remove");
  } else if (kind === "folder") {
    await setFolderPermission(
      ctx.services,
      membership,
      path,
      owner,
      add ? (write ? "writer" : "viewer") : null,
    );
  } else {
    throw invalidInput(
      "kind",
      `Millrace grants access per folder and group membership, not per ${kind || "item"}: use kind folder or group_`,
    );
  }
  return text(`${add ? "added" : "removed"} ${owner} on ${kind}/${path}`);
}

export const aclRoutes: Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/acls/add/:kind/*path",
    summary: "addGranularAcls",
    tag: "granular_acl",
    params: aclParams,
    body: z.object({ owner: z.string(), write: z.boolean().nullish() }),
    response: textAnswer("added <owner> on <kind>/<path>"),
    handler: (ctx, { params, body }) => change(ctx, params, body.owner, body.write ?? false, true),
  }),
  defineRoute({
    method: "POST",
    pattern: "/api/w/:workspace/acls/remove/:kind/*path",
    summary: "removeGranularAcls",
    tag: "granular_acl",
    params: aclParams,
    body: z.object({ owner: z.string() }),
    response: textAnswer("removed <owner> on <kind>/<path>"),
    handler: (ctx, { params, body }) => change(ctx, params, body.owner, false, false),
  }),
  defineRoute({
    method: "GET",
    pattern: "/api/w/:workspace/acls/get/:kind/*path",
    summary: "getGranularAcls",
    tag: "granular_acl",
    params: aclParams,
    response: z.record(z.string(), z.boolean()),
    handler: async (ctx, { params }) =>
      json(await getGranularAcls(ctx.services, await ctx.membership(), params.kind, params.path)),
  }),
];
