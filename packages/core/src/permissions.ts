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
  // Moving a workspace's jobs between instances (wmill jobs pull/push): every user's arguments,
  // results and logs.
  "job.transfer": ["admin"],
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

/**
 * Actions that change who may do what (members, roles, groups): people do them, a job's token
 * never does, whatever its user's role (the code it runs may be someone else's).
 */
const NOT_FOR_JOBS: readonly Action[] = ["member.manage", "group.manage"];

export function requirePermission(
  membership: {
    role: WorkspaceRole;
    principal?: { tokenKind?: string };
    bounds?: { role: WorkspaceRole }[];
  },
  action: Action,
): void {
  // `role` is already the lowest of a bounded caller's; each bound is checked all the same.
  for (const each of [membership, ...(membership.bounds ?? [])]) {
    if (!can(each.role, action)) {
      throw new AppError("FORBIDDEN", `your role (${each.role}) may not ${action.replace(".", " ")}`);
    }
  }
  if (membership.principal?.tokenKind === "job" && NOT_FOR_JOBS.includes(action)) {
    throw new AppError("FORBIDDEN", `a job's token cannot ${action.replace(".", " ")}`);
  }
}
