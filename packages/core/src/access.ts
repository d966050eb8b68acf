import type { PermissionLevel } from "@millrace/db";
import type { CoreContext } from "./context.ts";
import { AppError, notFound } from "./errors.ts";
import { parsePath } from "./paths.ts";
import type { Membership } from "./membership.ts";

export type PathAccess = "read" | "write";

/**
 * Every user whose rights the caller must stay within: the caller alone, or (a job's token whose
 * code someone else deployed, see Membership.bounds) the caller and each bounding user, each with
 * their own role. A check passes only if it passes for each.
 */
export function eachMembership(membership: Membership): Membership[] {
  return membership.bounds ?? [membership];
}

/**
 * Who may see and change an item by its path (scripts, jobs of a script, variables, resources,
 * schedules), after the role check of the permission table. The rules, as in Windmill:
 *
 * - Workspace admins (and superadmins) read and write every path.
 * - `u/<user>/…` belongs to that user: only they (and admins) see or change it.
 * - `f/<folder>/…` follows the folder's permissions, granted to a user (`u/<user>`), a group
 *   (`g/<group>`) or everyone in the workspace (`g/all`): owners and writers read and write,
 *   viewers only read. A member with no permission on the folder does not see its items at all.
 * - Operators never write (their role stops them first), whatever the folder says.
 *
 * A member who may not read an item gets NOT_FOUND, so that guessing paths tells nothing; a
 * member refused a write gets FORBIDDEN (a write names a path, it reveals no item).
 */
export async function authorizePath(
  ctx: CoreContext,
  membership: Membership,
  path: string,
  access: PathAccess,
): Promise<void> {
  for (const each of eachMembership(membership)) await authorizePathFor(ctx, each, path, access);
}

async function authorizePathFor(
  ctx: CoreContext,
  membership: Membership,
  path: string,
  access: PathAccess,
): Promise<void> {
  const parsed = parsePath(path);
  if (membership.role === "admin") return;
  const username = membership.principal.username;
  if (parsed.kind === "u") {
    if (parsed.owner === username) return;
    if (access === "read") throw notFound(path);
    throw new AppError(
      "FORBIDDEN",
      `everything under u/${parsed.owner}/ belongs to ${parsed.owner}: save yours under u/${username}/ or in a folder you can write to`,
    );
  }
  const level = await folderLevel(ctx, membership, parsed.owner);
  if (access === "read") {
    if (!level) throw notFound(path);
    return;
  }
  if (level !== "owner" && level !== "writer") {
    if (!level && !(await folderExists(ctx, membership.workspace.id, parsed.owner))) {
      throw new AppError(
        "FORBIDDEN",
        `folder ${parsed.owner} does not exist: create it first, then write in it`,
      );
    }
    throw new AppError(
      "FORBIDDEN",
      `you may not write in folder f/${parsed.owner}/ (ask one of its owners for writer access)`,
    );
  }
}

async function folderExists(ctx: CoreContext, workspaceId: string, name: string): Promise<boolean> {
  const { rowCount } = await ctx.pool.query(`SELECT 1 FROM folder WHERE workspace_id = $1 AND name = $2`, [
    workspaceId,
    name,
  ]);
  return (rowCount ?? 0) > 0;
}

const RANK: Record<PermissionLevel, number> = { viewer: 1, writer: 2, owner: 3 };

function stronger(a: PermissionLevel | undefined, b: PermissionLevel): PermissionLevel {
  return a && RANK[a] >= RANK[b] ? a : b;
}

/**
 * The caller's strongest permission on each folder of the workspace, through their own grants,
 * their groups' and `g/all`. Admins are not special-cased here: callers check the role first.
 */
export async function folderLevels(
  ctx: CoreContext,
  membership: Membership,
  folder?: string,
): Promise<Map<string, PermissionLevel>> {
  if (!membership.bounds) return ownFolderLevels(ctx, membership, folder);
  // Bounded: the weakest level each folder has for all of them (an admin owns every folder).
  let levels: Map<string, PermissionLevel> | null = null;
  for (const each of membership.bounds) {
    if (each.role === "admin") continue;
    const own = await ownFolderLevels(ctx, each, folder);
    if (!levels) levels = own;
    else {
      const previous: Map<string, PermissionLevel> = levels;
      levels = new Map();
      for (const [name, level] of own) {
        const other = previous.get(name);
        if (other) levels.set(name, RANK[other] <= RANK[level] ? other : level);
      }
    }
  }
  if (levels) return levels;
  // Every one of them is an admin: they own every folder.
  const { rows } = await ctx.pool.query<{ name: string }>(
    "SELECT name FROM folder WHERE workspace_id = $1 AND ($2::text IS NULL OR name = $2)",
    [membership.workspace.id, folder ?? null],
  );
  return new Map(rows.map((row) => [row.name, "owner" as const]));
}

async function ownFolderLevels(
  ctx: CoreContext,
  membership: Membership,
  folder?: string,
): Promise<Map<string, PermissionLevel>> {
  const { rows } = await ctx.pool.query<{ folder_name: string; level: PermissionLevel }>(
    `SELECT fp.folder_name, fp.level::text AS level
       FROM folder_permission fp
      WHERE fp.workspace_id = $1
        AND ($4::text IS NULL OR fp.folder_name = $4)
        AND (fp.principal = 'u/' || $2
             OR fp.principal = 'g/all'
             OR fp.principal IN (SELECT 'g/' || gm.group_name FROM group_member gm
                                  WHERE gm.workspace_id = $1 AND gm.user_id = $3::uuid))`,
    [membership.workspace.id, membership.principal.username, membership.principal.userId, folder ?? null],
  );
  const levels = new Map<string, PermissionLevel>();
  for (const row of rows) levels.set(row.folder_name, stronger(levels.get(row.folder_name), row.level));
  return levels;
}

export async function folderLevel(
  ctx: CoreContext,
  membership: Membership,
  folder: string,
): Promise<PermissionLevel | null> {
  if (membership.role === "admin") return "owner";
  return (await folderLevels(ctx, membership, folder)).get(folder) ?? null;
}

/**
 * The path prefixes the caller may read (`u/<me>/`, `f/<folder>/`…), for list queries; null
 * when the caller reads everything (admins).
 */
export async function readablePrefixes(ctx: CoreContext, membership: Membership): Promise<string[] | null> {
  let readable: string[] | null = null;
  for (const each of eachMembership(membership)) {
    if (each.role === "admin") continue;
    const folders = await ownFolderLevels(ctx, each);
    const own = [`u/${each.principal.username}/`, ...[...folders.keys()].map((name) => `f/${name}/`)];
    // No prefix holds another (`u/<user>/`, `f/<folder>/`): what all may read is what all list.
    readable = readable ? readable.filter((prefix) => own.includes(prefix)) : own;
  }
  return readable;
}

/** Escapes `_` and `%` so that a path prefix matches itself only in LIKE / Prisma's startsWith. */
export function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Jobs follow their script's path: a member other than an admin sees the jobs they started and
 * the jobs of paths they may read. Returns null when the caller sees every job.
 */
type JobsFilter = { OR: ({ createdBy: string } | { scriptPath: { startsWith: string } })[] };

export async function visibleJobsFilter(
  ctx: CoreContext,
  membership: Membership,
): Promise<JobsFilter | { AND: JobsFilter[] } | null> {
  const filters: JobsFilter[] = [];
  for (const each of eachMembership(membership)) {
    if (each.role === "admin") continue;
    const readable = (await readablePrefixes(ctx, each))!;
    filters.push({
      OR: [
        { createdBy: each.principal.username },
        ...readable.map((prefix) => ({ scriptPath: { startsWith: likePrefix(prefix) } })),
      ],
    });
  }
  if (filters.length === 0) return null;
  return filters.length === 1 ? filters[0]! : { AND: filters };
}

export async function canSeeJob(
  ctx: CoreContext,
  membership: Membership,
  job: { createdBy: string; scriptPath: string | null },
): Promise<boolean> {
  for (const each of eachMembership(membership)) {
    if (each.role === "admin" || job.createdBy === each.principal.username) continue;
    if (!job.scriptPath) return false;
    try {
      await authorizePathFor(ctx, each, job.scriptPath, "read");
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * For rules of the form "everyone sees their own rows, `seesAll` roles see every row" (audit log,
 * webhook tokens): null when the caller sees every row, else the one user whose own rows the
 * caller sees. `NOBODY` when bounded users would each see only their own (different) rows.
 */
export function ownRowsOnly(
  membership: Membership,
  seesAll: (role: Membership["role"]) => boolean,
): { userId: string; username: string } | null {
  const restricted = eachMembership(membership).filter((each) => !seesAll(each.role));
  if (restricted.length === 0) return null;
  const first = restricted[0]!.principal;
  return restricted.every((each) => each.principal.userId === first.userId) ? first : NOBODY;
}

/** Matches no user (ownRowsOnly's answer when no row is everyone's own): no username has a `-`. */
export const NOBODY = { userId: "ffffffff-ffff-ffff-ffff-ffffffffffff", username: "-nobody-" };
