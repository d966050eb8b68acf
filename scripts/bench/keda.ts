// Section 10: the query KEDA's postgresql scaler runs for each worker group (renderKedaQuery, the
// one the Helm chart renders), with a million queued jobs. KEDA polls it every pollingInterval
// (30 s by default) per group, so its cost is per group and per poll, whatever the backlog.
import path from "node:path";
import { renderKedaQuery } from "@millrace/core";
import { createPool } from "@millrace/db";
import { startEmbeddedPostgres } from "@millrace/db/embedded";
import { migrateDeploy } from "@millrace/db/migrate";
import { ms, summary } from "./stats.ts";

const QUEUED_JOBS = 1_000_000;
const TAGS = 20;
const RUNS = 50;
// maxReplicaCount 100 × targetQueryValue 10: the chart's cap for a large group.
const CAP = 1000;

export interface KedaBench {
  queued: number;
  insertSecs: number;
  groupWaiting: number;
  capped: ReturnType<typeof summary>;
  uncapped: ReturnType<typeof summary>;
  idle: ReturnType<typeof summary>;
  plan: string;
}

/**
 * `npm run bench -- keda` needs only a migrated database, not a running instance (whose first
 * start builds the web app): an embedded PostgreSQL of its own.
 */
export async function kedaBenchDatabase(root: string): Promise<{ url: string; stop(): Promise<void> }> {
  const database = await startEmbeddedPostgres(path.join(root, ".data/bench-keda-pg"), {
    port: Number(process.env.BENCH_KEDA_PG_PORT ?? 5497),
  });
  await migrateDeploy(database.url);
  return { url: database.url, stop: () => database.stop() };
}

export async function kedaBench(databaseUrl: string, workspace: string): Promise<KedaBench> {
  const pool = createPool(databaseUrl, { max: 2, applicationName: "millrace-bench-keda" });
  const timed = async (sql: string) => {
    const samples: number[] = [];
    for (let i = 0; i < RUNS + 5; i++) {
      const started = performance.now();
      await pool.query(sql);
      if (i >= 5) samples.push(performance.now() - started);
    }
    return summary(samples);
  };
  try {
    // Rows only, on tags no worker serves: a backlog nobody drains; a tenth is due later.
    const started = performance.now();
    await pool.query(
      `INSERT INTO job (id, workspace_id, kind, language, content, tag, created_by, permissioned_as, scheduled_for)
       SELECT gen_random_uuid(), $1, 'script', 'bash', 'echo', 'keda-backlog-' || (n % $2), 'bench', 'u/bench',
              CASE WHEN n % 10 = 0 THEN now() + interval '1 hour' ELSE now() - (n % 600) * interval '1 second' END
         FROM generate_series(1, $3) AS n`,
      [workspace, TAGS, QUEUED_JOBS],
    );
    // What autovacuum does on its own after such an insert: statistics and the visibility map that
    // lets the count read the index alone.
    await pool.query("VACUUM ANALYZE job");
    const insertSecs = (performance.now() - started) / 1000;
    // A group serving two of the twenty tags: a tenth of the backlog.
    const group = { tags: ["keda-backlog-3", "keda-backlog-7"] };
    const { rows } = await pool.query<{ waiting: string }>(renderKedaQuery(group));
    const plan = (
      await pool.query<{ "QUERY PLAN": string }>(`EXPLAIN ${renderKedaQuery({ ...group, cap: CAP })}`)
    ).rows
      .map((row) => row["QUERY PLAN"])
      .find((line) => /Index|Scan/.test(line))
      ?.trim();
    return {
      queued: QUEUED_JOBS,
      insertSecs,
      groupWaiting: Number(rows[0]!.waiting),
      capped: await timed(renderKedaQuery({ ...group, cap: CAP })),
      uncapped: await timed(renderKedaQuery(group)),
      idle: await timed(renderKedaQuery({ tags: ["keda-idle"], cap: CAP })),
      plan: plan ?? "?",
    };
  } finally {
    await pool.query("DELETE FROM job WHERE tag LIKE 'keda-backlog-%'").catch(() => {});
    await pool.end();
  }
}

export function printKedaBench(bench: KedaBench, section: string): void {
  console.log(
    `\n${section}. KEDA's query for a worker group with ${bench.queued.toLocaleString("en")} queued jobs (${TAGS} tags)`,
  );
  console.log(`   backlog inserted and vacuumed in ${bench.insertSecs.toFixed(1)} s`);
  console.log(`   plan: ${bench.plan}`);
  console.log(
    `   group of 2 tags, ${bench.groupWaiting.toLocaleString("en")} jobs waiting, capped at ${CAP} (as the chart renders it): ` +
      `p50 ${ms(bench.capped.p50)} p95 ${ms(bench.capped.p95)} (target < 10 ms)`,
  );
  console.log(
    `   the same group counted to the end (no cap): p50 ${ms(bench.uncapped.p50)} p95 ${ms(bench.uncapped.p95)}`,
  );
  console.log(`   an idle group (no job waiting): p50 ${ms(bench.idle.p50)} p95 ${ms(bench.idle.p95)}`);
}
