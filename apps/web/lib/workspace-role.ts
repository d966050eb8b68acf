"use client";
import { useQuery } from "@tanstack/react-query";
import { can, type Action } from "@millrace/core/permissions";
import { useTRPC } from "@/lib/trpc";

export type WorkspaceRole = "admin" | "developer" | "operator";

/**
 * The caller's role in a workspace, from the workspace list (a superadmin is an admin in every
 * workspace). Undefined while loading: offer nothing that needs a role until it is known. The
 * server checks every action again; this only keeps the UI from offering what would be refused.
 */
export function useWorkspaceRole(workspace: string): WorkspaceRole | undefined {
  const trpc = useTRPC();
  const workspaces = useQuery(trpc.workspace.list.queryOptions());
  return workspaces.data?.find((w) => w.id === workspace)?.role as WorkspaceRole | undefined;
}

/** Admins and developers write scripts, schedules, variables and resources; operators run and read. */
export function canWrite(role: WorkspaceRole | undefined): boolean {
  return role === "admin" || role === "developer";
}

/**
 * Whether the role may take the action, by the server's own permission table; false while the
 * role is unknown, so that nothing is offered before it is.
 */
export function roleCan(role: WorkspaceRole | undefined, action: Action): boolean {
  return !!role && can(role, action);
}
