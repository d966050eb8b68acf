import { AppError } from "../errors.ts";

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
  /** The kind of bearer token the call came with (`api`, `session`, `webhook`, `job`). */
  tokenKind?: string;
  /** The caller's address, when the request came over HTTP (recorded in the audit log). */
  ip?: string;
}

/**
 * Refuses to mint a credential from a job's WM_TOKEN. A job runs as whoever started it, with code
 * someone else may have written: letting it create a token would turn a credential that dies
 * with the job into one that outlives it.
 */
export function refuseJobCredential(principal: Principal, what: string): void {
  if (principal.tokenKind === "job") {
    throw new AppError("FORBIDDEN", `a job's token cannot ${what}`);
  }
}

/** The caller as the job table records it (`created_by`), as in Windmill. */
export function actorName(principal: Principal): string {
  return principal.username;
}
