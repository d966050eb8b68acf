/**
 * Who is calling. Built once per request from a session or a bearer token; every core function
 * that reads or writes workspace data takes one.
 */
export interface Principal {
  userId: string;
  email: string;
  username: string;
  isSuperAdmin: boolean;
  /** Set when the credential only works in one workspace (scoped API tokens, job tokens). */
  workspaceScope?: string;
  /** Set when the credential may only run one script or flow path (webhook tokens). */
  pathScope?: string;
  /** The caller's address, when the request came over HTTP (recorded in the audit log). */
  ip?: string;
}

/** The caller as the job table records it (`created_by`), as in Windmill. */
export function actorName(principal: Principal): string {
  return principal.username;
}
