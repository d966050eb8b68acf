import type pg from "pg";
import { createClient } from "@millrace/db";
import type { JobsContext } from "../jobs/run.ts";
import { SCHEDULE_CHANGED_CHANNEL } from "./schedules.ts";
import { msUntilNextTick, runDueSchedules, type TickOutcome } from "./tick.ts";

export interface ScheduleTickerOptions {
  /** Longest sleep between two looks at the schedule table (a missed NOTIFY costs at most this). */
  maxSleepMs?: number;
  log?: (message: string) => void;
  onTick?: (outcome: TickOutcome) => void;
}

export interface ScheduleTicker {
  stop(): Promise<void>;
}

/**
 * Every server runs one ticker. It sleeps until the earliest `next_run_at` (at most `maxSleepMs`),
 * runs what is due, and is woken early by a NOTIFY whenever a schedule is created or changed.
 * Several tickers racing for the same tick is expected: the compare-and-set in runDueSchedules
 * lets exactly one of them start the job, so there is no leader to fail over.
 */
export function startScheduleTicker(
  ctx: JobsContext,
  databaseUrl: string,
  options: ScheduleTickerOptions = {},
): ScheduleTicker {
  const maxSleepMs = options.maxSleepMs ?? 1000;
  const log = options.log ?? (() => {});
  let stopped = false;
  let wake: (() => void) | null = null;
  let listener: pg.Client | null = null;
  let reconnectTimer: NodeJS.Timeout | null = null;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  const listen = async () => {
    if (stopped) return;
    const client = createClient(databaseUrl, { application_name: "millrace-schedules" });
    const retry = () => {
      if (listener === client) listener = null;
      void client.end().catch(() => {});
      if (!stopped && !reconnectTimer) {
        reconnectTimer = setTimeout(() => {
          reconnectTimer = null;
          void listen();
        }, 1000);
      }
    };
    client.on("error", retry);
    client.on("notification", () => wake?.());
    try {
      await client.connect();
      await client.query(`LISTEN ${SCHEDULE_CHANGED_CHANNEL}`);
      if (stopped) {
        await client.end();
        return;
      }
      listener = client;
      // A change made while the listener was down is picked up now rather than after a sleep.
      wake?.();
    } catch {
      retry();
    }
  };

  const loop = (async () => {
    while (!stopped) {
      try {
        for (const outcome of await runDueSchedules(ctx)) {
          options.onTick?.(outcome);
          if (outcome.error) log(`schedule ${outcome.workspaceId}/${outcome.path}: ${outcome.error}`);
          if (outcome.skipped > 0) {
            log(`schedule ${outcome.workspaceId}/${outcome.path}: skipped ${outcome.skipped} missed tick(s)`);
          }
        }
        if (stopped) break;
        const ms = await msUntilNextTick(ctx);
        // +2 ms: wake just after the tick, not a hair before it by the database's clock.
        await sleep(ms === null ? maxSleepMs : Math.min(ms + 2, maxSleepMs));
      } catch (error) {
        if (stopped) break;
        log(`schedule ticker: ${error instanceof Error ? error.message : String(error)}`);
        await sleep(maxSleepMs);
      }
    }
  })();

  void listen();
  return {
    async stop() {
      stopped = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      wake?.();
      await loop;
      const client = listener;
      listener = null;
      await client?.end().catch(() => {});
    },
  };
}
