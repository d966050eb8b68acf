// What the Workers page shows of the autoscaler: each group's desired count and its last decisions.
import { prepared } from "@millrace/db";
import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { requireSuperadmin } from "../instance-admin.ts";
import { validateWorkerGroupName } from "../workers/group-config.ts";

const EVENTS_SHOWN = 100;

export interface AutoscalingGroupView {
  group: string;
  desired: number;
  lastChangeAt: Date | null;
  error: string | null;
}

export interface AutoscalingEventView {
  id: string;
  group: string;
  eventType: string;
  from: number;
  to: number;
  reason: string;
  integration: string;
  error: string | null;
  at: Date;
}

/** Superadmins only, like the group configs that drive it. */
export async function listAutoscaling(
  ctx: Pick<CoreContext, "pool">,
  principal: Principal,
): Promise<{ groups: AutoscalingGroupView[]; events: AutoscalingEventView[] }> {
  requireSuperadmin(principal, "read the autoscaling decisions");
  const [groups, events] = await Promise.all([
    ctx.pool.query<{ worker_group: string; desired: number; last_change_at: Date; error: string | null }>(
      prepared(
        "SELECT worker_group, desired, last_change_at, error FROM autoscaling_state ORDER BY worker_group",
        [],
      ),
    ),
    ctx.pool.query<{
      id: string;
      worker_group: string;
      event_type: string;
      from_workers: number;
      to_workers: number;
      reason: string;
      integration: string;
      error: string | null;
      at: Date;
    }>(
      prepared(
        `SELECT id, worker_group, event_type, from_workers, to_workers, reason, integration, error, at
           FROM autoscaling_event ORDER BY at DESC, id DESC LIMIT $1`,
        [EVENTS_SHOWN],
      ),
    ),
  ]);
  return {
    groups: groups.rows.map((row) => ({
      group: row.worker_group,
      desired: row.desired,
      // 'epoch' marks a group whose count never changed (run.ts).
      lastChangeAt: row.last_change_at.getTime() > 0 ? row.last_change_at : null,
      error: row.error,
    })),
    events: events.rows.map((row) => ({
      id: String(row.id),
      group: row.worker_group,
      eventType: row.event_type,
      from: row.from_workers,
      to: row.to_workers,
      reason: row.reason,
      integration: row.integration,
      error: row.error,
      at: row.at,
    })),
  };
}

/** Windmill's AutoscalingEvent, as `GET /api/configs/list_autoscaling_events/{worker_group}` answers. */
export interface WindmillAutoscalingEvent {
  id: number;
  worker_group: string;
  event_type: string;
  desired_workers: number;
  reason: string;
  applied_at: string;
}

/** One group's decisions, newest first, a page at a time (superadmins only). */
export async function listAutoscalingEvents(
  ctx: Pick<CoreContext, "pool">,
  principal: Principal,
  group: string,
  page: { page?: number; perPage?: number } = {},
): Promise<WindmillAutoscalingEvent[]> {
  requireSuperadmin(principal, "read the autoscaling decisions");
  validateWorkerGroupName(group, "worker_group");
  const perPage = Math.min(Math.max(page.perPage ?? 30, 1), 100);
  const offset = (Math.max(page.page ?? 1, 1) - 1) * perPage;
  const { rows } = await ctx.pool.query<{
    id: string;
    event_type: string;
    to_workers: number;
    reason: string;
    at: Date;
  }>(
    prepared(
      `SELECT id, event_type, to_workers, reason, at FROM autoscaling_event
        WHERE worker_group = $1 ORDER BY at DESC, id DESC LIMIT $2 OFFSET $3`,
      [group, perPage, offset],
    ),
  );
  return rows.map((row) => ({
    id: Number(row.id),
    worker_group: group,
    event_type: row.event_type,
    desired_workers: row.to_workers,
    reason: row.reason,
    applied_at: row.at.toISOString(),
  }));
}
