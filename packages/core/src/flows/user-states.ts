// windmill-client's getFlowUserState / setFlowUserState (`jobs/flow/user_states/<id>/<key>`):
// values a flow's steps keep for one run, under `user_states` in the flow job's flow_status. The
// update is one statement: the engine rewrites flow_status under the row's lock, so a state set
// while a step completes is kept (it waits for the lock and applies to the engine's new value).
import { canSeeJob } from "../access.ts";
import type { CoreContext } from "../context.ts";
import { invalidInput, notFound } from "../errors.ts";
import { isJobId } from "../jobs/queries.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";

const MAX_KEY_LENGTH = 255;
const MAX_STATE_BYTES = 64 * 1024;

function checkKey(key: string): void {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH)
    throw invalidInput("key", `must be 1 to ${MAX_KEY_LENGTH} characters`);
}

/** The flow job `id` of the caller's workspace, when the caller may see it; 404 otherwise. */
async function visibleFlowJob(ctx: CoreContext, membership: Membership, id: string): Promise<void> {
  if (!isJobId(id)) throw notFound(`flow job ${id}`);
  const { rows } = await ctx.pool.query<{ createdBy: string; scriptPath: string | null }>(
    `SELECT created_by AS "createdBy", script_path AS "scriptPath" FROM job
      WHERE id = $1 AND workspace_id = $2 AND kind IN ('flow', 'flowpreview')`,
    [id, membership.workspace.id],
  );
  const row = rows[0];
  if (!row || !(await canSeeJob(ctx, membership, row))) throw notFound(`flow job ${id}`);
}

/** The value kept under `key` for the flow run `id`, or null when none is. */
export async function getFlowUserState(
  ctx: CoreContext,
  membership: Membership,
  id: string,
  key: string,
): Promise<unknown> {
  requirePermission(membership, "job.read");
  checkKey(key);
  await visibleFlowJob(ctx, membership, id);
  const { rows } = await ctx.pool.query<{ value: unknown }>(
    `SELECT flow_status -> 'user_states' -> $2 AS value FROM job WHERE id = $1`,
    [id, key],
  );
  return rows[0]?.value ?? null;
}

/** Keeps `value` under `key` for the flow run `id` (those who may run jobs and see the run). */
export async function setFlowUserState(
  ctx: CoreContext,
  membership: Membership,
  id: string,
  key: string,
  value: unknown,
): Promise<void> {
  requirePermission(membership, "job.run");
  checkKey(key);
  const json = JSON.stringify(value ?? null);
  if (json.length > MAX_STATE_BYTES) throw invalidInput("body", "a flow user state is limited to 64 KiB");
  await visibleFlowJob(ctx, membership, id);
  await ctx.pool.query(
    `UPDATE job SET flow_status = jsonb_set(
        COALESCE(flow_status, '{}'::jsonb), '{user_states}',
        COALESCE(flow_status -> 'user_states', '{}'::jsonb) || jsonb_build_object($2::text, $3::jsonb))
      WHERE id = $1`,
    [id, key, json],
  );
}
