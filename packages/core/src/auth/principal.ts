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
  /**
   * The kind of bearer token the call came with (`api`, `session`, `webhook`, `job`, `secret` for
   * SUPERADMIN_SECRET); none for a browser session (next-auth).
   */
  tokenKind?: string;
  /** For a job's token (`tokenKind` "job"): the job it was issued to. */
  jobId?: string;
  /** The caller's address, when the request came over HTTP (recorded in the audit log). */
  ip?: string;
  /**
   * A job token of a superadmin's job: it is admin of its own workspace (`workspaceScope`), as
   * its user is, but never a superadmin (a job's token stays within its workspace).
   */
  adminOfScope?: boolean;
  /**
   * Users whose rights bound the caller's: a job's token acts with the intersection of the rights
   * of the user it runs as and of each of these (the deployer of the code it runs, and the users
   * bounding the job that started it). Every membership, role and path check must pass for each.
   */
  boundedBy?: Principal[];
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

/**
 * Refuses what would record the caller alone as the author of something that later acts with
 * their rights (a script version others' schedules run, a schedule running as them) when the
 * caller's rights are bounded by other users: it would launder code or choices of those users
 * into the caller's full rights.
 */
export function refuseWhenBounded(principal: Principal, what: string): void {
  const others = principal.boundedBy?.filter((user) => user.userId !== principal.userId) ?? [];
  if (others.length > 0) {
    throw new AppError(
      "FORBIDDEN",
      `this job runs code deployed by ${others.map((user) => user.username).join(", ")}, not by ` +
        `${principal.username}: it cannot ${what} as ${principal.username}`,
    );
  }
}

/** The caller as the job table records it (`created_by`), as in Windmill. */
export function actorName(principal: Principal): string {
  return principal.username;
}
