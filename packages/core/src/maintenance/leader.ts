import type pg from "pg";
import { createClient } from "@millrace/db";

export interface LeaderTask {
  name: string;
  intervalMs: number;
  run(): Promise<void>;
}

// Arbitrary, fixed: the advisory lock every Millrace server competes for.
const LEADER_LOCK_KEY = 727_100_001;
const ACQUIRE_RETRY_MS = 5000;

/**
 * Runs instance-wide periodic tasks (zombie check, retention, schedules) on exactly one server at
 * a time. Leadership is a session-level advisory lock held on a dedicated connection: if the
 * leader dies or loses its connection, PostgreSQL releases the lock and another server takes over
 * within a few seconds.
 */
export function startLeaderLoop(
  databaseUrl: string,
  tasks: LeaderTask[],
  log: (message: string) => void,
): { stop(): Promise<void>; isLeader(): boolean } {
  let client: pg.Client | null = null;
  let leader = false;
  let stopped = false;
  const timers: NodeJS.Timeout[] = [];
  let retryTimer: NodeJS.Timeout | null = null;

  const stepDown = (reason: string) => {
    if (leader) log(`no longer the leader (${reason})`);
    leader = false;
    for (const timer of timers.splice(0)) clearInterval(timer);
    const dead = client;
    client = null;
    void dead?.end().catch(() => {});
    if (!stopped) retryTimer = setTimeout(() => void attempt(), ACQUIRE_RETRY_MS);
  };

  const attempt = async () => {
    if (stopped) return;
    const candidate = createClient(databaseUrl, { application_name: "millrace-leader" });
    candidate.on("error", () => stepDown("connection lost"));
    try {
      await candidate.connect();
      const { rows } = await candidate.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [
        LEADER_LOCK_KEY,
      ]);
      if (!rows[0]?.ok) {
        await candidate.end();
        retryTimer = setTimeout(() => void attempt(), ACQUIRE_RETRY_MS);
        return;
      }
    } catch {
      await candidate.end().catch(() => {});
      retryTimer = setTimeout(() => void attempt(), ACQUIRE_RETRY_MS);
      return;
    }
    client = candidate;
    leader = true;
    log("this server is now the leader (zombie monitor, retention)");
    for (const task of tasks) {
      let busy = false;
      const tick = async () => {
        if (busy || !leader) return;
        busy = true;
        try {
          await task.run();
        } catch (error) {
          log(`${task.name} failed: ${error instanceof Error ? error.message : String(error)}`);
        } finally {
          busy = false;
        }
      };
      void tick();
      timers.push(setInterval(() => void tick(), task.intervalMs));
    }
  };

  void attempt();
  return {
    isLeader: () => leader,
    async stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      for (const timer of timers.splice(0)) clearInterval(timer);
      leader = false;
      await client?.end().catch(() => {});
      client = null;
    },
  };
}
