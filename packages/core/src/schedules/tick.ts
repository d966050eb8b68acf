import { withTransaction } from "@millrace/db";
import { SUPERADMIN_SECRET_PRINCIPAL } from "../auth/tokens.ts";
import { AppError } from "../errors.ts";
import { runFlowForTrigger } from "../flows/engine/trigger.ts";
import { runScriptByPath, type JobsContext } from "../jobs/run.ts";
import { principalOf } from "../users.ts";
import { requireMembership, type Membership } from "../workspaces.ts";
import { parseCron, tickAfter, tickAtOrBefore } from "./cron.ts";

/**
 * A tick later than this is counted as missed (the servers were down), not merely late. Late
 * ticks (a busy server, a pause of a few seconds) each still run, so nothing is skipped; missed
 * ones collapse into a single run, so a restart never starts a storm of jobs.
 */
export const MISSED_TICK_GRACE_MS = 5000;

export interface TickOutcome {
  workspaceId: string;
  path: string;
  /** The tick this run was for (its job's `scheduled_for`). */
  tick: Date;
  jobId: string | null;
  /** Why no job could be started (recorded on the schedule; the tick still counts as done). */
  error: string | null;
  /** Missed ticks skipped after downtime. */
  skipped: number;
}

interface DueRow {
  workspace_id: string;
  path: string;
  schedule: string;
  timezone: string;
  next_run_at: Date;
  db_now: Date;
}

/** The schedule's jobs run as the user who last created or edited it (`u/<username>`). */
export async function runAs(
  ctx: JobsContext,
  workspaceId: string,
  permissionedAs: string,
): Promise<Membership> {
  const username = permissionedAs.replace(/^u\//, "");
  if (username === SUPERADMIN_SECRET_PRINCIPAL.username) {
    return requireMembership(ctx, SUPERADMIN_SECRET_PRINCIPAL, workspaceId);
  }
  const user = await ctx.db.user.findUnique({ where: { username } });
  if (!user || user.disabled) {
    throw new AppError(
      "FORBIDDEN",
      `the schedule runs as ${permissionedAs}, who is no longer an active user`,
    );
  }
  return requireMembership(ctx, principalOf(user), workspaceId).catch((error: unknown) => {
    if (error instanceof AppError && error.code === "NOT_FOUND") {
      throw new AppError("FORBIDDEN", `the schedule runs as ${permissionedAs}, who is no longer a member`);
    }
    throw error;
  });
}

/**
 * Runs one due tick, exactly once however many servers try at the same time: the transaction
 * moves `next_run_at` forward only if it still equals the tick this server saw (compare-and-set)
 * and writes the job in the same transaction. A server that loses the race updates no row and
 * starts nothing; a server that dies mid-way commits nothing, and the tick stays due for the
 * others.
 */
async function runTick(ctx: JobsContext, due: DueRow): Promise<TickOutcome | null> {
  const base = { workspaceId: due.workspace_id, path: due.path };
  const claim = (next: Date | null, last: Date | null, error: string | null) =>
    ctx.pool.query(
      `UPDATE schedule SET next_run_at = $4::timestamptz, last_run_at = COALESCE($5::timestamptz, last_run_at),
         error = $6
       WHERE workspace_id = $1 AND path = $2 AND next_run_at = $3::timestamptz AND enabled`,
      [due.workspace_id, due.path, due.next_run_at, next, last, error],
    );
  let cron;
  try {
    cron = parseCron(due.schedule, due.timezone);
  } catch (error) {
    // Stored crons were valid when saved; a time zone can still vanish from a newer ICU. Stop
    // the schedule with the reason rather than retrying it forever.
    const message = error instanceof Error ? error.message : String(error);
    await claim(null, null, message);
    return { ...base, tick: due.next_run_at, jobId: null, error: message, skipped: 0 };
  }
  let tick = due.next_run_at;
  let next = tickAfter(cron, tick);
  let skipped = 0;
  if (next && next.getTime() <= due.db_now.getTime() - MISSED_TICK_GRACE_MS) {
    // Downtime: of all the missed ticks, only the most recent one runs (now), then the schedule
    // resumes at its first tick after now.
    const latest = tickAtOrBefore(cron, due.db_now) ?? tick;
    // Counted up to 1000: a figure for the log, not worth walking a year of per-second ticks.
    skipped = cron.nextRuns(1000, tick).filter((t) => t.getTime() < latest.getTime()).length;
    tick = latest;
    next = tickAfter(cron, tick);
  }
  return withTransaction(ctx.pool, async (client) => {
    const { rows } = await client.query<{
      script_path: string;
      is_flow: boolean;
      args: Record<string, unknown>;
      permissioned_as: string;
    }>(
      `UPDATE schedule SET next_run_at = $4::timestamptz, last_run_at = $5::timestamptz, error = NULL
        WHERE workspace_id = $1 AND path = $2 AND next_run_at = $3::timestamptz AND enabled
        RETURNING script_path, is_flow, args, permissioned_as`,
      [due.workspace_id, due.path, due.next_run_at, next, tick],
    );
    const claimed = rows[0];
    if (!claimed) return null;
    await client.query("SAVEPOINT schedule_job");
    try {
      const membership = await runAs(ctx, due.workspace_id, claimed.permissioned_as);
      if (claimed.is_flow) {
        // The flow job (and its first step) is written in this transaction, like a script's job:
        // it commits with the schedule's advance or not at all, so a tick never runs twice.
        const jobId = await runFlowForTrigger(
          ctx,
          membership,
          claimed.script_path,
          claimed.args,
          { kind: "schedule", schedulePath: due.path, scheduledFor: tick },
          client,
        );
        return { ...base, tick, jobId, error: null, skipped };
      }
      const jobId = await runScriptByPath(ctx, membership, claimed.script_path, claimed.args, {
        scheduledFor: tick,
        schedulePath: due.path,
        transaction: client,
      });
      return { ...base, tick, jobId, error: null, skipped };
    } catch (error) {
      // The tick is spent either way (the next one may succeed); the schedule shows why.
      await client.query("ROLLBACK TO SAVEPOINT schedule_job");
      const message = error instanceof Error ? error.message : String(error);
      if (!(error instanceof AppError)) console.error(`schedule ${due.workspace_id}/${due.path}:`, error);
      await client.query("UPDATE schedule SET error = $3 WHERE workspace_id = $1 AND path = $2", [
        due.workspace_id,
        due.path,
        message.slice(0, 2000),
      ]);
      return { ...base, tick, jobId: null, error: message, skipped };
    }
  });
}

/**
 * Runs every due tick of every workspace (a late schedule catches up tick by tick, see
 * MISSED_TICK_GRACE_MS). Safe to call from any number of servers at once. Time is the database's
 * clock, so servers with skewed clocks still agree on what is due.
 */
export async function runDueSchedules(
  ctx: JobsContext,
  options: { batch?: number } = {},
): Promise<TickOutcome[]> {
  const batch = options.batch ?? 100;
  const outcomes: TickOutcome[] = [];
  // Bounded: a schedule that keeps being due (catching up) is picked up again on the next call.
  for (let round = 0; round < 20; round++) {
    const { rows } = await ctx.pool.query<DueRow>(
      `SELECT workspace_id, path, schedule, timezone, next_run_at AT TIME ZONE 'UTC' AS next_run_at, now() AS db_now
         FROM schedule
        WHERE enabled AND next_run_at <= now() AT TIME ZONE 'UTC'
        ORDER BY next_run_at
        LIMIT $1`,
      [batch],
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      const outcome = await runTick(ctx, row);
      if (outcome) outcomes.push(outcome);
    }
  }
  return outcomes;
}

/** Milliseconds until the earliest enabled schedule is due (by the database's clock), or null. */
export async function msUntilNextTick(ctx: Pick<JobsContext, "pool">): Promise<number | null> {
  const { rows } = await ctx.pool.query<{ ms: number | null }>(
    `SELECT (EXTRACT(EPOCH FROM (min(next_run_at) - now() AT TIME ZONE 'UTC')) * 1000)::float8 AS ms
       FROM schedule WHERE enabled AND next_run_at IS NOT NULL`,
  );
  const ms = rows[0]?.ms;
  return ms === null || ms === undefined ? null : Math.max(0, ms);
}
