// The claim and the completion touch hundreds of job rows per statement. Their plans must look the
// rows up by primary key whatever the table's statistics say: statistics gathered while the queue
// was empty once made PostgreSQL scan every queued job once per claimed job (5,000 x 400
// comparisons, a claim of 400 jobs took 450 ms instead of 10).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createDb, type Pool } from "@millrace/db";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import type { Membership } from "../membership.ts";
import { claimJobs } from "./claim.ts";
import { completeJobs } from "./complete.ts";
import { enqueueJobs, noopJob } from "./enqueue.ts";
import { listJobs, type ListJobsInput } from "./queries.ts";

let services: TestServices;
let member: Membership;

interface PlanNode {
  "Node Type": string;
  Operation?: string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Plans?: PlanNode[];
}

/**
 * A pool that records the plans of every statement before running it: the plan for its values
 * and, when it has parameters, its generic plan, which a prepared statement (the claim, the
 * completion) may switch to after five executions.
 */
function explaining(pool: Pool, plans: PlanNode[]): Pool {
  const query = async (config: string | { text: string; values?: unknown[] }, values?: unknown[]) => {
    const text = typeof config === "string" ? config : config.text;
    const params = typeof config === "string" ? values : config.values;
    const explain = async (options: string, explained?: unknown[]) => {
      const { rows } = await pool.query<{ "QUERY PLAN": { Plan: PlanNode }[] }>(
        `EXPLAIN (${options}) ${text}`,
        explained,
      );
      plans.push(rows[0]!["QUERY PLAN"][0]!.Plan);
    };
    await explain("FORMAT JSON", params);
    if (params?.length) await explain("GENERIC_PLAN, FORMAT JSON");
    return pool.query(config as string, values);
  };
  return { query } as unknown as Pool;
}

function* nodes(plan: PlanNode): Generator<PlanNode> {
  yield plan;
  for (const child of plan.Plans ?? []) yield* nodes(child);
}

/** How the job rows an UPDATE of `job` writes are found: the scans of `job` under it. */
function jobScansOfUpdates(plans: PlanNode[]): string[] {
  const scans: string[] = [];
  for (const plan of plans) {
    for (const node of nodes(plan)) {
      if (node["Node Type"] !== "ModifyTable" || node.Operation !== "Update") continue;
      if (node["Relation Name"] !== "job") continue;
      for (const below of nodes(node)) {
        if (below !== node && below["Relation Name"] === "job")
          scans.push(`${below["Node Type"]}${below["Index Name"] ? ` using ${below["Index Name"]}` : ""}`);
      }
    }
  }
  return scans;
}

describe("claim and completion plans", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership: member } = await createTestMember(services, "plans-ws"));
  });
  after(() => services.close());

  it("read each status group of a runs list from its index, not the whole table", async () => {
    // A list is a Prisma query, which compares the status with a cast PostgreSQL cannot match with
    // an index predicate on the status: the lists' indexes name the timestamps (list-order.ts).
    const ws = member.workspace.id;
    await services.pool.query(
      `INSERT INTO job (id, workspace_id, kind, script_path, language, tag, status, created_by, permissioned_as,
         created_at, scheduled_for, started_at, completed_at)
       SELECT gen_random_uuid(), $1, 'script', 'f/plans/s' || (n % 20), 'bash', 'plans-list',
              (CASE WHEN n % 500 = 0 THEN 'running' WHEN n % 2 = 0 THEN 'queued' ELSE 'success' END)::job_status,
              'alice', 'u/alice', t, t,
              CASE WHEN n % 500 = 0 OR n % 2 = 1 THEN t END, CASE WHEN n % 2 = 1 AND n % 500 <> 0 THEN t END
         FROM (SELECT n, now() - n * interval '1 second' AS t FROM generate_series(1, 6000) AS n) AS s`,
      [ws],
    );
    await services.pool.query("ANALYZE job");
    const plans: PlanNode[] = [];
    // Prisma's adapter sends each query through the pool's query(): explain the job reads first.
    const pool = new Proxy(services.pool, {
      get(target, property) {
        if (property === "query") {
          return async (config: { text: string; values?: unknown[] }) => {
            if (/^SELECT[\s\S]*FROM "public"\."job"/.test(config.text)) {
              const { rows } = await target.query<{ "QUERY PLAN": { Plan: PlanNode }[] }>(
                `EXPLAIN (FORMAT JSON) ${config.text}`,
                config.values,
              );
              plans.push(rows[0]!["QUERY PLAN"][0]!.Plan);
            }
            return target.query(config as never);
          };
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const listed = { ...services, db: createDb(pool as Pool) };
    const lists: ListJobsInput[] = [
      {},
      { success: true },
      { scriptPathExact: { in: ["f/plans/s3"] } },
      { running: false, perPage: 100, page: 3 },
      { scope: "queue" },
    ];
    for (const input of lists) {
      plans.length = 0;
      const jobs = await listJobs(listed, member, input);
      assert.ok(jobs.length > 0, JSON.stringify(input));
      assert.ok(plans.length > 0, "no job list query seen");
      const scans = plans.flatMap((plan) =>
        [...nodes(plan)].filter((node) => node["Relation Name"] === "job").map((node) => node["Node Type"]),
      );
      assert.ok(!scans.includes("Seq Scan"), `${JSON.stringify(input)}: ${JSON.stringify(plans)}`);
    }
  });

  it("look job rows up by primary key after statistics gathered on an empty queue", async () => {
    const job = (tag: string) => noopJob(member.workspace.id, tag, {}, "alice");
    // A history of finished jobs, analyzed while nothing is queued or running.
    const done = await enqueueJobs(
      services.pool,
      services.boss,
      Array.from({ length: 2000 }, () => job("plans-history")),
    );
    const names = done.map((_, i) => `w${i}`);
    for (let i = 0; i < names.length; i += 500) {
      const claimed = await claimJobs(services.pool, services.boss, "plans-history", names.slice(i, i + 500));
      await completeJobs(
        services.pool,
        services.boss,
        claimed.map((c) => ({ job: c, outcome: { status: "success", result: null }, pendingLog: "" })),
      );
    }
    await services.pool.query("ANALYZE job");

    // Then a burst.
    await enqueueJobs(
      services.pool,
      services.boss,
      Array.from({ length: 400 }, () => job("plans-burst")),
    );
    const claimPlans: PlanNode[] = [];
    const claimed = await claimJobs(
      services.pool,
      services.boss,
      "plans-burst",
      names.slice(0, 400),
      explaining(services.pool, claimPlans),
    );
    assert.equal(claimed.length, 400);
    const completionPlans: PlanNode[] = [];
    await completeJobs(
      explaining(services.pool, completionPlans),
      services.boss,
      claimed.map((c) => ({ job: c, outcome: { status: "success", result: null }, pendingLog: "" })),
    );
    const { rows } = await services.pool.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM job WHERE tag = 'plans-burst' AND status = 'success'",
    );
    assert.equal(rows[0]!.count, 400);

    // The claim's CTE is sized at one row: only a primary key lookup is right. The completion's
    // arrays are sized right, and a sequential scan of this small table is a fair choice too.
    const claimScans = jobScansOfUpdates(claimPlans);
    assert.equal(claimPlans.length, 2, "the claim's plan for its values and its generic plan");
    assert.deepEqual(
      claimScans,
      ["Index Scan using job_pkey", "Index Scan using job_pkey"],
      JSON.stringify(claimPlans),
    );
    const completionScans = jobScansOfUpdates(completionPlans);
    assert.ok(completionScans.length > 0, "no UPDATE of job in the completion's plan");
    assert.deepEqual(
      completionScans.filter((scan) => !["Index Scan using job_pkey", "Seq Scan"].includes(scan)),
      [],
      JSON.stringify(completionPlans),
    );
  });

  it("find a queue's dispatches by id after a VACUUM found the queue drained", async () => {
    const tag = "plans-drained";
    const job = () => noopJob(member.workspace.id, tag, {}, "alice");
    const names = Array.from({ length: 400 }, (_, i) => `d${i}`);
    // A burst drained, then the queue's table vacuumed while empty (as autovacuum does): its
    // statistics say it holds no rows.
    await enqueueJobs(services.pool, services.boss, Array.from({ length: 800 }, job));
    while ((await claimJobs(services.pool, services.boss, tag, names)).length > 0);
    const { rows } = await services.pool.query<{ table: string }>(
      "SELECT format('pgboss.%I', table_name) AS table FROM pgboss.queue WHERE name = $1",
      [tag],
    );
    const queueTable = rows[0]!.table;
    await services.pool.query(`VACUUM ${queueTable}`);
    const stats = await services.pool.query<{ reltuples: number }>(
      `SELECT reltuples FROM pg_class WHERE oid = '${queueTable}'::regclass`,
    );
    assert.equal(stats.rows[0]!.reltuples, 0);

    // Then the next burst.
    await enqueueJobs(services.pool, services.boss, Array.from({ length: 2000 }, job));
    const claimPlans: PlanNode[] = [];
    const claimed = await claimJobs(
      services.pool,
      services.boss,
      tag,
      names,
      explaining(services.pool, claimPlans),
    );
    assert.equal(claimed.length, 400);
    assert.equal(claimPlans.length, 2, "the claim's plan for its values and its generic plan");
    const relation = queueTable.replace(/^pgboss\./, "");
    for (const plan of claimPlans) {
      const deletes = [...nodes(plan)].filter(
        (node) => node.Operation === "Delete" && node["Relation Name"] === relation,
      );
      assert.equal(deletes.length, 1, JSON.stringify(plan));
      // Every read of the queue's table under the DELETE but the fetch's own (the due jobs in
      // order) finds the fetched rows by id: a scan of the tag's queued jobs joined with the
      // fetched ids compares each with every one (400 x 2,000 here).
      const reads = [...nodes(deletes[0]!)].filter(
        (node) =>
          node !== deletes[0] &&
          node["Relation Name"] === relation &&
          !/start_after/.test(node["Index Cond"] ?? ""),
      );
      assert.ok(reads.length > 0, JSON.stringify(plan));
      for (const read of reads) {
        assert.equal(read["Node Type"], "Index Scan", JSON.stringify(plan));
        assert.match(read["Index Cond"] ?? "", /\bid = ANY\b/, JSON.stringify(plan));
      }
    }
  });
});
