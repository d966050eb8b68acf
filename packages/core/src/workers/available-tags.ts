import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { requireSuperadmin } from "../instance-admin.ts";
import { requireMembership } from "../workspaces.ts";
import { availableTags, formatCustomTag, loadCustomTags } from "./custom-tags.ts";

export interface ListCustomTagsInput {
  /** Only the tags this workspace may use (the caller must belong to it). */
  workspace?: string;
  /** Windmill's `show_workspace_restriction`: the raw `gpu(ws1+ws2)` entries (superadmins only). */
  showRestrictions?: boolean;
}

/**
 * Default tags plus custom tags, for any signed-in user. Which workspaces a restricted tag is
 * for names other tenants, so only superadmins see the restrictions themselves.
 */
export async function listCustomTags(
  ctx: CoreContext,
  principal: Principal,
  input: ListCustomTagsInput = {},
): Promise<string[]> {
  if (input.showRestrictions) requireSuperadmin(principal, "see which workspaces a tag is restricted to");
  if (input.workspace !== undefined) await requireMembership(ctx, principal, input.workspace);
  const tags = await loadCustomTags(ctx.pool);
  const names = availableTags(tags, input.workspace ?? null);
  if (!input.showRestrictions) return names;
  const raw = new Map(tags.map((entry) => [entry.tag, formatCustomTag(entry)]));
  return names.map((name) => raw.get(name) ?? name);
}

/** The `custom_tags` setting as written (superadmins only), for the settings editor. */
export async function getCustomTagsSetting(ctx: CoreContext, principal: Principal): Promise<string[]> {
  requireSuperadmin(principal, "read instance settings");
  return (await loadCustomTags(ctx.pool)).map(formatCustomTag);
}
