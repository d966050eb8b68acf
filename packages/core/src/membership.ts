// The caller's membership of a workspace, as a type of its own: workspaces.ts builds it, and the
// modules workspaces.ts itself imports (audit, access, paths) read it without importing back.
import type { Workspace, WorkspaceRole } from "@millrace/db";
import type { Principal } from "./auth/principal.ts";

/** A workspace as every request carries it: settings read on their own paths are left out. */
export type MemberWorkspace = Omit<Workspace, "largeFileStorage">;

export interface Membership {
  workspace: MemberWorkspace;
  /** The caller's role; when `bounds` is set, the lowest role among them. */
  role: WorkspaceRole;
  principal: Principal;
  /**
   * Set when the caller's rights are bounded by other users (Principal.boundedBy): the caller's
   * own membership first, then each bounding user's, each with its own role. Every check must
   * pass for each of them (see eachMembership in access.ts).
   */
  bounds?: Membership[];
}
