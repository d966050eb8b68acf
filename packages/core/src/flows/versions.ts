// Windmill's flow endpoints beyond the store's own: one deployed version by its id
// (flows/get/v/{version}, what `wmill flow show-version` prints) and a delete that answers alike
// whether or not the flow is there (what `wmill sync push` expects).
import { authorizePath } from "../access.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { parsePath } from "../paths.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import { deleteFlow, type StoredFlow } from "./store.ts";

/** One deployed version of a flow by its id, for whoever may read the flow's path. */
export async function flowVersion(
  ctx: CoreContext,
  membership: Membership,
  version: string,
): Promise<StoredFlow & { id: number; deployment_msg?: string }> {
  requirePermission(membership, "script.read");
  if (!/^\d{1,18}$/.test(version)) throw invalidInput("version", `must be a version id, got "${version}"`);
  const { rows } = await ctx.pool.query(
    `SELECT id, path, summary, description, value, schema, deployment_msg, created_by, created_at
       FROM flow_version WHERE workspace_id = $1 AND id = $2`,
    [membership.workspace.id, version],
  );
  const row = rows[0];
  if (!row) throw notFound(`flow version ${version}`);
  await authorizePath(ctx, membership, row.path, "read").catch((error: unknown) => {
    throw error instanceof AppError && error.code === "NOT_FOUND"
      ? notFound(`flow version ${version}`)
      : error;
  });
  return {
    id: Number(row.id),
    workspace_id: membership.workspace.id,
    path: row.path,
    summary: row.summary,
    description: row.description,
    value: row.value,
    schema: row.schema ?? null,
    archived: false,
    edited_by: row.created_by,
    edited_at: new Date(row.created_at).toISOString(),
    version_id: Number(row.id),
    extra_perms: {},
    ...(row.deployment_msg ? { deployment_msg: row.deployment_msg } : {}),
  };
}

/**
 * Windmill's flows/delete/{path}: deletes the flow when there is one and answers alike when there
 * is none (`wmill sync push` deletes a removed flow folder once per file in it). The caller must
 * still be allowed to write the path; false when nothing was there.
 */
export async function deleteFlowIfPresent(
  ctx: CoreContext,
  membership: Membership,
  path: string,
): Promise<boolean> {
  requirePermission(membership, "script.write");
  parsePath(path);
  await authorizePath(ctx, membership, path, "write");
  const { rows } = await ctx.pool.query("SELECT 1 FROM flow WHERE workspace_id = $1 AND path = $2", [
    membership.workspace.id,
    path,
  ]);
  if (rows.length === 0) return false;
  await deleteFlow(ctx, membership, path).catch((error: unknown) => {
    // Deleted meanwhile by someone else: the outcome the caller asked for.
    if (!(error instanceof AppError && error.code === "NOT_FOUND")) throw error;
  });
  return true;
}
