// Windmill's granular ACLs (`acls/add|remove/<kind>/<path>`), as `wmill sync push` sends them:
// for a group's members (`group_`) and a folder's grants (`folder`). Millrace grants access per
// folder, so any other kind (a variable's or a resource's own extra_perms) is refused naming it.
import { checkGroupAcl, invalidInput, setFolderPermission } from "@millrace/core";
import { readJson, readObject, text } from "../../http.ts";
import type { RestContext, Route } from "../router.ts";
import { requiredString } from "./params.ts";

function principalOf(owner: string): string {
  return owner.includes("/") ? owner : `u/${owner}`;
}

async function change(ctx: RestContext, add: boolean) {
  const body = readObject(await readJson(ctx.request));
  const owner = principalOf(requiredString(body, "owner"));
  const write = body.write ?? false;
  if (add && typeof write !== "boolean") throw invalidInput("write", "must be true or false");
  const kind = ctx.params.kind ?? "";
  const path = ctx.params.path ?? "";
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
  { method: "POST", pattern: "/api/w/:workspace/acls/add/:kind/*path", handler: (ctx) => change(ctx, true) },
  {
    method: "POST",
    pattern: "/api/w/:workspace/acls/remove/:kind/*path",
    handler: (ctx) => change(ctx, false),
  },
];
