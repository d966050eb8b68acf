import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runPreview } from "../jobs/run.ts";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import type { Membership } from "../membership.ts";
import { renderKedaQuery } from "./keda-query.ts";

let services: TestServices;
let membership: Membership;

async function queue(tag: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push(await runPreview(services, membership, { language: "bash", content: "echo hi", args: {}, tag }));
  return ids;
}

async function waiting(tags: string[], cap?: number): Promise<number> {
  const { rows } = await services.pool.query<{ waiting: string }>(renderKedaQuery({ tags, cap }));
  assert.equal(rows.length, 1);
  return Number(rows[0]!.waiting);
}

before(async () => {
  services = await createTestServices();
  ({ membership } = await createTestMember(services, "keda"));
});
after(() => services?.close());

describe("the KEDA query", () => {
  it("counts each group's waiting jobs on a live database", async () => {
    // Two groups: "gpu" serves gpu-a and gpu-b, "etl" serves etl. No worker runs, so every job
    // the API enqueued stays queued, as a backlog does.
    const [gpuFirst] = await queue("gpu-a", 3);
    await queue("gpu-b", 2);
    const etl = await queue("etl", 4);
    await queue("other", 1);
    assert.equal(await waiting(["gpu-a", "gpu-b"]), 5);
    assert.equal(await waiting(["etl"]), 4);

    // Not waiting: a job scheduled for later, a running job, a finished job.
    await services.pool.query(`UPDATE job SET scheduled_for = now() + interval '1 hour' WHERE id = $1`, [
      gpuFirst,
    ]);
    await services.pool.query(`UPDATE job SET status = 'running' WHERE id = $1`, [etl[0]]);
    await services.pool.query(`UPDATE job SET status = 'success', completed_at = now() WHERE id = $1`, [
      etl[1],
    ]);
    assert.equal(await waiting(["gpu-a", "gpu-b"]), 4);
    assert.equal(await waiting(["etl"]), 2);
    assert.equal(await waiting(["idle"]), 0);

    // The cap bounds the count (KEDA cannot use more than maxReplicaCount × targetQueryValue).
    assert.equal(await waiting(["gpu-a", "gpu-b"], 3), 3);
    assert.equal(await waiting(["gpu-a", "gpu-b"], 100), 4);
  });

  it("reads the queue index, not the table", async () => {
    // With sequential scans priced out, a plan that cannot use an index still falls back to one:
    // the assertion is that the index it picks is the queue's partial index.
    const client = await services.pool.connect();
    try {
      await client.query("SET enable_seqscan = off");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN ${renderKedaQuery({ tags: ["gpu-a", "gpu-b"], cap: 1000 })}`,
      );
      const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
      assert.match(plan, /job_status_tag_priority_scheduled_for_idx/);
    } finally {
      client.release();
    }
  });
});
