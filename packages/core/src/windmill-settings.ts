// Windmill's workspace settings and instance groups, as Millrace has them. Millrace has none of
// Windmill's per-workspace integrations (Slack, a workspace webhook, error and success handlers,
// auto-invite, an AI assistant, large file storage, default scripts, instance groups, muting of
// critical alerts): `wmill sync push` of a workspace's settings, and the clients' calls that set
// them, are answered as Windmill answers them when what they ask for is what Millrace does
// (nothing set); anything else is refused with a 400 naming the setting, never silently dropped.
import type { Principal } from "./auth/principal.ts";
import { invalidInput } from "./errors.ts";
import { requireSuperadmin } from "./instance-admin.ts";
import { requirePermission } from "./permissions.ts";
import type { Membership } from "./workspaces.ts";

/** Unset, in Windmill's terms: absent, null, "", false, an empty list, or an object of such. */
export function isUnsetSetting(value: unknown): boolean {
  if (value === undefined || value === null || value === "" || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.values(value).every(isUnsetSetting);
  return false;
}

/** Windmill's WorkspaceSettings of a Millrace workspace: none of its integrations is set. */
export function windmillWorkspaceSettings(membership: Membership): {
  workspace_id: string;
  mute_critical_alerts: boolean;
} {
  requirePermission(membership, "workspace.read");
  return { workspace_id: membership.workspace.id, mute_critical_alerts: false };
}

/**
 * An edit of a Windmill setting Millrace does not have (`what`, e.g. "workspace webhook"), by a
 * workspace admin: accepted when it leaves the setting unset, refused naming `field` otherwise.
 */
export function editUnsupportedSetting(
  membership: Membership,
  field: string,
  value: unknown,
  what: string,
): void {
  requirePermission(membership, "workspace.manage");
  if (!isUnsetSetting(value)) {
    throw invalidInput(field, `Millrace has no ${what}: only leaving it unset is accepted`);
  }
}

/** Windmill's instance groups (groups of the identity provider): Millrace has none. */
export function exportInstanceGroups(principal: Principal): never[] {
  requireSuperadmin(principal, "export instance groups");
  return [];
}

/** Replacing the instance groups with `groups`: only with none, since Millrace has none. */
export function overwriteInstanceGroups(principal: Principal, groups: unknown[]): void {
  requireSuperadmin(principal, "overwrite instance groups");
  if (groups.length > 0) {
    throw invalidInput("body", "Millrace has no instance groups: only an empty list is accepted");
  }
}
