// windmill-client's getGranularAcls (`acls/get/<kind>/<path>`): who holds a grant on an item, as
// principal → may write. Millrace grants access per folder and per group membership, so a folder
// answers its grants, a group its members (readers: groups take no grants of their own), and any
// other kind of item none (its access comes from its folder or owner, never from grants of its own).
import type { CoreContext } from "../context.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import { getFolder } from "./folders.ts";
import { getGroup } from "./groups.ts";

export async function getGranularAcls(
  ctx: CoreContext,
  membership: Membership,
  kind: string,
  path: string,
): Promise<Record<string, boolean>> {
  if (kind === "folder") {
    const folder = await getFolder(ctx, membership, path);
    return Object.fromEntries(folder.permissions.map((p) => [p.principal, p.level !== "viewer"]));
  }
  if (kind === "group_") {
    const group = await getGroup(ctx, membership, path);
    return Object.fromEntries(group.members.map((username) => [`u/${username}`, false]));
  }
  requirePermission(membership, "workspace.read");
  return {};
}
