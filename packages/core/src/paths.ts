import { AppError, invalidInput } from "./errors.ts";
import type { Membership } from "./membership.ts";

const SEGMENT = /^[A-Za-z0-9_-]+$/;
export const MAX_PATH_LENGTH = 255;

export interface ParsedPath {
  kind: "u" | "f";
  /** The user (for `u/`) or folder (for `f/`) that owns the path. */
  owner: string;
  name: string;
}

/**
 * Paths are `u/<user>/<name>` or `f/<folder>/<name>` (names may nest: `f/ops/db/backup`). Segments
 * use letters, digits, `_` and `-`, so `..`, spaces and empty segments are refused.
 */
export function parsePath(path: string, field = "path"): ParsedPath {
  if (typeof path !== "string" || path.length === 0) throw invalidInput(field, "is required");
  if (path.length > MAX_PATH_LENGTH) throw invalidInput(field, `at most ${MAX_PATH_LENGTH} characters`);
  const segments = path.split("/");
  const [kind, owner, ...rest] = segments;
  if ((kind !== "u" && kind !== "f") || !owner || rest.length === 0) {
    throw invalidInput(field, `must look like u/<user>/<name> or f/<folder>/<name>, got "${path}"`);
  }
  for (const segment of segments) {
    if (!SEGMENT.test(segment)) {
      throw invalidInput(field, `segment "${segment}" may only contain letters, digits, _ and -`);
    }
  }
  return { kind, owner, name: rest.join("/") };
}

/**
 * Write access by path. `u/<user>/…` belongs to that user (admins may write anywhere); folder
 * permissions refine `f/…` in a later iteration (today any writer of the workspace may write there).
 */
export function requirePathWrite(membership: Membership, path: string): void {
  const parsed = parsePath(path);
  // Each user bounding the caller's rights too (see Membership.bounds).
  for (const each of membership.bounds ?? [membership]) {
    if (parsed.kind === "u" && parsed.owner !== each.principal.username && each.role !== "admin") {
      throw new AppError(
        "FORBIDDEN",
        `Only u/${parsed.owner}/ itself or a workspace admin may write under u/${parsed.owner}/.`,
      );
    }
  }
}
