// Windmill's workspace settings and instance groups, as Millrace has them. Millrace has none of
// Windmill's per-workspace integrations (Slack, a workspace webhook, error and success handlers,
// auto-invite, an AI assistant, default scripts, instance groups, muting of
// critical alerts): `wmill sync push` of a workspace's settings, and the clients' calls that set
// them, are answered as Windmill answers them when what they ask for is what Millrace does
// (nothing set); anything else is refused with a 400 naming the setting, never silently dropped.
import { recordAudit } from "./audit/index.ts";
import type { Principal } from "./auth/principal.ts";
import type { CoreContext } from "./context.ts";
import { invalidInput } from "./errors.ts";
import { requireSuperadmin } from "./instance-admin.ts";
import { requirePermission } from "./permissions.ts";
import type { Membership } from "./membership.ts";

/** Unset, in Windmill's terms: absent, null, "", false, an empty list, or an object of such. */
export function isUnsetSetting(value: unknown): boolean {
  if (value === undefined || value === null || value === "" || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.values(value).every(isUnsetSetting);
  return false;
}

/**
 * What operators may see and do in a Millrace workspace, in the terms of Windmill's
 * OperatorSettings. Millrace's roles are fixed (packages/core/src/permissions.ts): operators see
 * runs, schedules, resources, variables, their own audit rows, groups, folders, workers and
 * webhooks, and change no schedule.
 */
export const OPERATOR_SETTINGS = {
  runs: true,
  schedules: true,
  resources: true,
  variables: true,
  assets: true,
  audit_logs: true,
  triggers: true,
  groups: true,
  folders: true,
  workers: true,
  manage_schedules: false,
  manage_triggers: false,
} as const;

/** Windmill's WorkspaceSettings of a Millrace workspace: none of its integrations is set. */
export function windmillWorkspaceSettings(membership: Membership): {
  workspace_id: string;
  mute_critical_alerts: boolean;
  color?: string;
  operator_settings: typeof OPERATOR_SETTINGS;
} {
  requirePermission(membership, "workspace.read");
  return {
    workspace_id: membership.workspace.id,
    mute_critical_alerts: false,
    ...(membership.workspace.color ? { color: membership.workspace.color } : {}),
    operator_settings: OPERATOR_SETTINGS,
  };
}

/**
 * Windmill's updateOperatorSettings: accepted when it asks for what Millrace's operators have;
 * a different choice is refused naming the setting (Millrace's roles are not configurable).
 */
export function updateOperatorSettings(membership: Membership, settings: Record<string, unknown>): void {
  requirePermission(membership, "workspace.manage");
  checkOperatorSettings(settings);
}

/** Refuses, naming the setting, any operator setting other than Millrace's fixed one. */
export function checkOperatorSettings(settings: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(settings)) {
    if (value === undefined || value === null) continue;
    const fixed = (OPERATOR_SETTINGS as Record<string, boolean>)[name];
    if (fixed === undefined) throw invalidInput(name, "is not an operator setting");
    if (value !== fixed)
      throw invalidInput(
        name,
        `Millrace's operator role is fixed: ${name} is ${fixed} (see docs/security.md), not configurable`,
      );
  }
}

/** A workspace color as stored: `#rrggbb` or null (none); refused naming `color` otherwise. */
export function workspaceColor(color: string | null | undefined): string | null {
  const value = color || null;
  if (value !== null && !/^#[0-9a-fA-F]{6}$/.test(value))
    throw invalidInput("color", "must be #rrggbb, e.g. #336699");
  return value;
}

/** Windmill's changeWorkspaceColor: a #rrggbb color shown beside the workspace's name, or none. */
export async function changeWorkspaceColor(
  ctx: CoreContext,
  membership: Membership,
  color: string | null | undefined,
): Promise<void> {
  requirePermission(membership, "workspace.manage");
  const value = workspaceColor(color);
  await ctx.db.workspace.update({ where: { id: membership.workspace.id }, data: { color: value } });
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: membership.workspace.id,
    operation: "workspaces.change_color",
    resource: membership.workspace.id,
    parameters: { color: value },
  });
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
