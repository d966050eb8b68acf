// What keeping a job's mutable run state (worker, start) in a narrow table of its own would save
// (issue 38 item 5's next step, not built): the job row's claim and completion as Millrace writes
// them today, beside a claim that writes one row of a narrow table and a completion that moves
// that row into the job row, on a job table holding `RUN_STATE_COMPLETED` finished jobs and
// `RUN_STATE_QUEUED` queued ones (by default those of `npm run bench -- scale`). The
// statements are the row writes alone (no pg-boss dispatch, no tokens, no logs): the difference
// is what the change could take off the pipeline's path. `npm run bench -- run-state`.
import fs from "node:fs";
import path from "node:path";
import { createPool } from "@millrace/db";
import { startEmbeddedPostgres } from "@millrace/db/embedded";
import { migrateDeploy } from "@millrace/db/migrate";
import { insertCompleted, insertQueued } from "./scale.ts";

const COMPLETED = Number(process.env.RUN_STATE_COMPLETED ?? 10_000_000);
const QUEUED = Number(process.env.RUN_STATE_QUEUED ?? 1_000_000);
const JOBS = 20_000;
// A worker's claim and its completion batches are of this size in the no-op pipeline.
const BATCH = 400;
const ROUNDS = 3;

type Mode = "job row (today)" | "narrow run state";

const WRITES: Record<Mode, { claim: string; complete: string }> = {
  "job row (today)": {
    claim: `UPDATE job SET status = 'running', started_at = now(), worker_name = 'wk-bench'
              FROM unnest($1::uuid[]) AS u(id)
             WHERE job.id = u.id AND job.status IS NOT DISTINCT FROM 'queued'`,
    complete: `UPDATE job SET status = 'success', result = 'null', completed_at = now()
                 FROM unnest($1::uuid[]) AS u(id)
                WHERE job.id = u.id AND job.status IS NOT DISTINCT FROM 'running'`,
  },
  "narrow run state": {
    claim: `INSERT INTO bench_job_run (job_id, worker_name, started_at)
            SELECT id, 'wk-bench', now() FROM unnest($1::uuid[]) AS u(id)`,
    complete: `WITH run AS (DELETE FROM bench_job_run WHERE job_id = ANY($1::uuid[]) RETURNING *)
               UPDATE job SET status = 'success', result = 'null', completed_at = now(),
                      started_at = run.started_at, worker_name = run.worker_name
                 FROM run WHERE job.id = run.job_id`,
  },
};

export async function runStateBench(root: string, log: (line: string) => void = console.log): Promise<void> {
  const dir = path.join(root, ".data/bench-run-state-pg");
  fs.rmSync(dir, { recursive: true, force: true });
  const database = await startEmbeddedPostgres(dir, {
    port: Number(process.env.BENCH_RUN_STATE_PG_PORT ?? 5497),
  });
  // One connection: the statements are timed one at a time.
  const client = createPool(database.url, { max: 1, applicationName: "millrace-bench-run-state" });
  try {
    await migrateDeploy(database.url);
    const started = performance.now();
    // Filled as the scale bench fills it.
    await insertCompleted(client, COMPLETED, () => {});
    await insertQueued(client, QUEUED);
    await client.query("VACUUM ANALYZE job");
    await client.query(
      `CREATE TABLE bench_job_run (job_id uuid PRIMARY KEY, worker_name text NOT NULL,
                                   started_at timestamptz NOT NULL)`,
    );
    log(
      `\n13. A job's run state in a narrow table (not built): ${COMPLETED.toLocaleString("en")} finished and ` +
        `${QUEUED.toLocaleString("en")} queued jobs ` +
        `(filled in ${((performance.now() - started) / 1000).toFixed(0)} s), ${JOBS.toLocaleString("en")} jobs ` +
        `claimed and completed ${BATCH} a statement, ${ROUNDS} alternating rounds`,
    );
    const perJob: Record<Mode, { claim: number[]; complete: number[] }> = {
      "job row (today)": { claim: [], complete: [] },
      "narrow run state": { claim: [], complete: [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of Object.keys(WRITES) as Mode[]) {
        const tag = `run-state-${round}-${mode.length}`;
        const { rows } = await client.query<{ id: string }>(
          `INSERT INTO job (id, workspace_id, kind, script_path, language, content, tag, created_by,
                            permissioned_as, created_at, scheduled_for)
           SELECT gen_random_uuid(), 'ws' || (n % 10), 'script', 'f/bench/s' || (n % 50), 'bash', 'echo', $2,
                  'bench', 'u/bench', clock_timestamp(), now()
             FROM generate_series(1, $1::int) AS n
           RETURNING id`,
          [JOBS, tag],
        );
        const ids = rows.map((row) => row.id);
        let claimMs = 0;
        let completeMs = 0;
        for (let i = 0; i < ids.length; i += BATCH) {
          const batch = ids.slice(i, i + BATCH);
          let t = performance.now();
          await client.query(WRITES[mode].claim, [batch]);
          claimMs += performance.now() - t;
          t = performance.now();
          await client.query(WRITES[mode].complete, [batch]);
          completeMs += performance.now() - t;
        }
        perJob[mode].claim.push((claimMs * 1000) / JOBS);
        perJob[mode].complete.push((completeMs * 1000) / JOBS);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const us = (value: number) => `${value.toFixed(1)} µs`;
    for (const [mode, figures] of Object.entries(perJob)) {
      const claim = median(figures.claim);
      const complete = median(figures.complete);
      log(
        `   ${mode.padEnd(18)} claim ${us(claim).padStart(9)}   completion ${us(complete).padStart(9)}   ` +
          `both ${us(claim + complete).padStart(9)} per job (medians)`,
      );
    }
  } finally {
    await client.end().catch(() => {});
    await database.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
