// What `wmill queues` reads besides the queue itself: completed jobs per tag over a horizon, and
// the database's clock (the CLI compares scheduled_for with it, not with the caller's clock).
import { prepared } from "@millrace/db";
import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { invalidInput } from "../errors.ts";
import { requireSuperadmin } from "../instance-admin.ts";
import { requirePermission } from "../permissions.ts";
import { requireMembership } from "../workspaces.ts";

/** Windmill's default horizon for count_by_tag. */
export const DEFAULT_TAG_COUNT_HORIZON_SECS = 3600;
/** A week: the completed_at index keeps any horizon cheap, but a count over years says little. */
const MAX_TAG_COUNT_HORIZON_SECS = 7 * 24 * 3600;

export interface TagCount {
  tag: string;
  count: number;
}

/**
 * Jobs completed in the last `horizonSecs` seconds, per tag: of one workspace for its members, of
 * every workspace for superadmins (without `workspaceId`).
 */
export async function countCompletedJobsByTag(
  ctx: CoreContext,
  principal: Principal,
  input: { horizonSecs?: number; workspaceId?: string },
): Promise<TagCount[]> {
  const horizon = input.horizonSecs ?? DEFAULT_TAG_COUNT_HORIZON_SECS;
  if (!Number.isInteger(horizon) || horizon < 1 || horizon > MAX_TAG_COUNT_HORIZON_SECS) {
    throw invalidInput(
      "horizon_secs",
      `must be a whole number of seconds from 1 to ${MAX_TAG_COUNT_HORIZON_SECS}`,
    );
  }
  if (input.workspaceId === undefined) {
    requireSuperadmin(principal, "count every workspace's jobs (pass workspace_id for one of yours)");
  } else {
    requirePermission(await requireMembership(ctx, principal, input.workspaceId), "job.read");
  }
  const { rows } = await ctx.pool.query<{ tag: string; count: string }>(
    prepared(
      `SELECT tag, count(*) AS count FROM job
        WHERE completed_at > now() - make_interval(secs => $1) AND ($2::text IS NULL OR workspace_id = $2)
        GROUP BY tag ORDER BY tag`,
      [horizon, input.workspaceId ?? null],
    ),
  );
  return rows.map((row) => ({ tag: row.tag, count: Number(row.count) }));
}

/** The database's clock, in milliseconds since the epoch (Windmill's db_clock). */
export async function databaseClock(ctx: Pick<CoreContext, "pool">): Promise<number> {
  const { rows } = await ctx.pool.query<{ ms: string }>(
    prepared("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms", []),
  );
  return Number(rows[0]!.ms);
}
