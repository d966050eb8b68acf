import type { WorkspaceRole } from "@millrace/db";
import { AppError } from "./errors.ts";

/**
 * The one permission table: which workspace roles may do what. Every tRPC procedure and REST
 * route goes through `requirePermission` with one of these actions.
 */
export const PERMISSIONS = {
  "workspace.read": ["admin", "developer", "operator"],
  "workspace.manage": ["admin"],
  "script.read": ["admin", "developer", "operator"],
  "script.write": ["admin", "developer"],
  "job.read": ["admin", "developer", "operator"],
  "job.run": ["admin", "developer", "operator"],
  // Running code that is not deployed (editor previews) is authoring, not operating.
  "job.preview": ["admin", "developer"],
  // Operators read variables and resources (their jobs need them) but do not change them.
  "variable.read": ["admin", "developer", "operator"],
  "variable.write": ["admin", "developer"],
  "resource.read": ["admin", "developer", "operator"],
  "resource.write": ["admin", "developer"],
  // Operators see schedules and their runs but do not create or change them.
  "schedule.read": ["admin", "developer", "operator"],
  "schedule.write": ["admin", "developer"],
  // People: everyone sees who is in the workspace; only admins change membership, roles or groups.
  "member.read": ["admin", "developer", "operator"],
  "member.manage": ["admin"],
  "group.read": ["admin", "developer", "operator"],
  "group.manage": ["admin"],
  // Folders: developers may create one (they become its owner); editing one also needs ownership
  // of that folder (checked in people/folders.ts), which admins always have.
  "folder.read": ["admin", "developer", "operator"],
  "folder.write": ["admin", "developer"],
  // Everyone reads their own audit rows; only admins read everybody's.
  "audit.read": ["admin", "developer", "operator"],
  "audit.read_all": ["admin"],
  "governance.read": ["admin"],
} as const satisfies Record<string, readonly WorkspaceRole[]>;

export type Action = keyof typeof PERMISSIONS;

export function can(role: WorkspaceRole, action: Action): boolean {
  return (PERMISSIONS[action] as readonly WorkspaceRole[]).includes(role);
}

export function requirePermission(membership: { role: WorkspaceRole }, action: Action): void {
  if (!can(membership.role, action)) {
    throw new AppError("FORBIDDEN", `your role (${membership.role}) may not ${action.replace(".", " ")}`);
  }
}
