// Flow runs started by a trigger rather than by a person: a schedule's tick or a webhook. The run
// itself is the engine's (run.ts's `runFlowByPath`, as the schedule's owner or the webhook
// token's principal); this only records what started it on the flow job, as enqueue does for
// script jobs (job.trigger_kind, schedule_path, scheduled_for). A schedule's tick passes its
// transaction, so the flow job commits together with the schedule's advance, as a script's does.
import type { PoolClient } from "@millrace/db";
import type { JobsContext } from "../../jobs/run.ts";
import type { Membership } from "../../membership.ts";
import { runFlowByPath } from "./run.ts";

export interface FlowTrigger {
  kind: "schedule" | "webhook";
  /** The schedule that ticked (kind "schedule"). */
  schedulePath?: string;
  /** The tick the run is for (kind "schedule"). */
  scheduledFor?: Date;
}

/**
 * Runs the flow deployed at `path` as `membership` for `trigger`; returns the flow job's id. With
 * `transaction`, everything is written in the caller's transaction.
 */
export async function runFlowForTrigger(
  ctx: JobsContext,
  membership: Membership,
  path: string,
  args: unknown,
  trigger: FlowTrigger,
  transaction?: PoolClient,
): Promise<string> {
  const id = await runFlowByPath(ctx, membership, path, args, { transaction });
  await (transaction ?? ctx.pool).query(
    `UPDATE job SET trigger_kind = $2, schedule_path = COALESCE($3, schedule_path),
            scheduled_for = COALESCE($4::timestamptz, scheduled_for)
      WHERE id = $1`,
    [id, trigger.kind, trigger.schedulePath ?? null, trigger.scheduledFor ?? null],
  );
  return id;
}
