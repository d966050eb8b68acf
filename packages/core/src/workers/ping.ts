import type { Pool } from "@millrace/db";
import { parseZombieSettings, ZOMBIE_SETTINGS_KEY, type ZombieSettings } from "../maintenance/zombies.ts";

/** One worker slot's heartbeat. */
export interface SlotPing {
  name: string;
  currentJobId: string | null;
  jobsExecuted: number;
  /** Share of time running jobs over 15 s, 5 min and 30 min (0..1). */
  occupancy15s: number;
  occupancy5m: number;
  occupancy30m: number;
}

export interface WorkerPingInput {
  group: string;
  tags: readonly string[];
  host: string;
  memoryBytes: number | null;
  version: string;
  sandbox: string;
  slots: readonly SlotPing[];
  /** The token of an agent worker whose slots these are (null: a database worker). */
  agentTokenId?: string | null;
}

/**
 * One statement upserting a worker_ping row per slot: what the workers list and the zombie
 * monitor read. A slot that stops pinging is dead after ZOMBIE_JOB_TIMEOUT. Database workers
 * call it directly; the server calls it for agent workers (see agentPing).
 *
 * Once it resolves, the rows are committed (an autocommitted statement on a pool without
 * asynchronous commit): the zombie monitor cannot count these slots as silent before
 * `timeoutSecs` after the moment the statement was sent. Answers the zombie monitor's published
 * settings (null: no leader published any yet), from which workers fence themselves (fence.ts).
 */
export async function pingWorkers(
  pool: Pool,
  ping: WorkerPingInput,
): Promise<{ zombie: ZombieSettings | null }> {
  const { slots } = ping;
  const { rows } = await pool.query<{ zombie: unknown }>(
    `WITH pinged AS (INSERT INTO worker_ping (name, worker_group, tags, host, current_job_id, jobs_executed, memory_bytes,
       occupancy_15s, occupancy_5m, occupancy_30m, version, sandbox, agent_token_id, last_ping_at)
     SELECT s.name, $2, $3, $4, s.current_job_id, s.jobs_executed, $5, s.o15, s.o5m, s.o30m, $6, $12, $13, now()
       FROM unnest($1::text[], $7::uuid[], $8::int[], $9::float8[], $10::float8[], $11::float8[])
         AS s(name, current_job_id, jobs_executed, o15, o5m, o30m)
     ON CONFLICT (name) DO UPDATE SET worker_group = EXCLUDED.worker_group, tags = EXCLUDED.tags,
       host = EXCLUDED.host, current_job_id = EXCLUDED.current_job_id, jobs_executed = EXCLUDED.jobs_executed,
       memory_bytes = EXCLUDED.memory_bytes, occupancy_15s = EXCLUDED.occupancy_15s,
       occupancy_5m = EXCLUDED.occupancy_5m, occupancy_30m = EXCLUDED.occupancy_30m,
       version = EXCLUDED.version, sandbox = EXCLUDED.sandbox, agent_token_id = EXCLUDED.agent_token_id,
       last_ping_at = now()
     RETURNING 1)
     SELECT (SELECT value FROM instance_setting WHERE key = $14) AS zombie, (SELECT count(*) FROM pinged) AS n`,
    [
      slots.map((slot) => slot.name),
      ping.group,
      ping.tags,
      ping.host,
      ping.memoryBytes,
      ping.version,
      slots.map((slot) => slot.currentJobId),
      slots.map((slot) => slot.jobsExecuted),
      slots.map((slot) => slot.occupancy15s),
      slots.map((slot) => slot.occupancy5m),
      slots.map((slot) => slot.occupancy30m),
      ping.sandbox,
      ping.agentTokenId ?? null,
      ZOMBIE_SETTINGS_KEY,
    ],
  );
  return { zombie: parseZombieSettings(rows[0]?.zombie) };
}
