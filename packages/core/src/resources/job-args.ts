import { withBounds } from "../auth/tokens.ts";
import { AppError } from "../errors.ts";
import { boundsOfJob } from "../secrets/job-token.ts";
import type { SecretsContext } from "../secrets/context.ts";
import { requireMembership, type Membership } from "../workspaces.ts";
import { resolveReference } from "./resources.ts";
import { parseReference } from "./value-schema.ts";

/**
 * The membership a job acts with when it reads variables and resources: the user it is
 * permissioned as (`u/<username>`), in the job's workspace only.
 */
export async function jobMembership(
  ctx: SecretsContext,
  workspaceId: string,
  permissionedAs: string,
  boundedBy: readonly string[] = [],
): Promise<Membership> {
  const username = /^u\/(.+)$/.exec(permissionedAs)?.[1];
  const { rows } = await ctx.pool.query<{
    id: string;
    email: string;
    username: string;
    is_super_admin: boolean;
  }>('SELECT id, email, username, is_super_admin FROM "user" WHERE username = $1 AND NOT disabled', [
    username ?? "",
  ]);
  const user = rows[0];
  if (!user)
    throw new AppError("FORBIDDEN", `the job runs as ${permissionedAs}, which is not an active user`);
  // As the job's WM_TOKEN would: in its workspace only, within the rights of its bounding users.
  const principal = await withBounds(
    ctx,
    {
      userId: user.id,
      email: user.email,
      username: user.username,
      isSuperAdmin: false,
      ...(user.is_super_admin ? { adminOfScope: true } : {}),
      workspaceScope: workspaceId,
      tokenKind: "job",
    },
    boundedBy,
  );
  return requireMembership(ctx, principal, workspaceId);
}

/**
 * Resolves top-level `$var:<path>` / `$res:<path>` string arguments of a job into their values,
 * with the rights of the job's user within those of the users bounding the job (the deployer of
 * its code, see boundsOfJob): a schedule's `$var:` argument never reaches code whose author may
 * not read it. Errors name the argument (`args.db: resource … not found`).
 */
export async function resolveJobArgs(
  ctx: SecretsContext,
  workspaceId: string,
  permissionedAs: string,
  args: Record<string, unknown>,
  job: { id: string } | null,
): Promise<Record<string, unknown>> {
  const names = Object.keys(args).filter((name) => parseReference(args[name]));
  if (names.length === 0) return args;
  const boundedBy = job ? await boundsOfJob(ctx.pool, job.id) : [];
  const membership = await jobMembership(ctx, workspaceId, permissionedAs, boundedBy);
  const resolved = { ...args };
  for (const name of names) {
    try {
      resolved[name] = await resolveReference(ctx, membership, args[name]);
    } catch (error) {
      if (error instanceof AppError)
        throw new AppError(error.code, `args.${name}: ${error.message}`, `args.${name}`);
      throw error;
    }
  }
  return resolved;
}
