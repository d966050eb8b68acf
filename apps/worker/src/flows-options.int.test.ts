// Per-step and per-flow options of the flow engine with real workers: sleep, early_return,
// flow-level concurrency, priority inherited by the steps, and the flow's input schema.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  AppError,
  createFlow,
  runFlowByPath,
  repairOrphanedJobs,
  runFlowPreview,
  sweepFlows,
  waitForFlowResult,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";
import { bashStep as bash } from "./flow-modules.ts";

let services: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];

async function steps(flowId: string) {
  const { rows } = await services.pool.query<{
    flow_step_id: string;
    priority: number;
    scheduled_for: Date;
    started_at: Date;
    completed_at: Date;
  }>(
    `SELECT flow_step_id, priority, scheduled_for, started_at, completed_at FROM job
      WHERE parent_job_id = $1 ORDER BY created_at`,
    [flowId],
  );
  return rows;
}

describe("flow options with real workers", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    workers.push(await startTestWorker(services.database.url, { WORKER_TAGS: "bash", NUM_WORKERS: "4" }));
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await services?.close();
  });

  it("sleep: the next step is scheduled that many seconds after the step (static or an expression)", async () => {
    const id = await runFlowPreview(services, membership, {
      value: {
        modules: [
          bash("a", "echo 1", {}, { sleep: { type: "static", value: 2 } }),
          bash("b", "echo 1", {}, { sleep: { type: "javascript", expr: "result" } }),
          bash("c", "echo done"),
        ],
      },
      args: {},
    });
    const job = await waitForJob(services, membership, id, 30_000);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    const [a, b, c] = await steps(id);
    const gapB = b!.started_at.getTime() - a!.completed_at.getTime();
    const gapC = c!.started_at.getTime() - b!.completed_at.getTime();
    assert.ok(gapB >= 1900 && gapB < 6000, `a → b ${gapB} ms`);
    assert.ok(gapC >= 900 && gapC < 5000, `b → c ${gapC} ms`);
  });

  it("a step's slot is handed the flow's next step by the commit that records the step", async () => {
    // Four free slots: through the queue, the next step would go to the first free slot, not the
    // one the step just left. Each step's recorded start is when it really started.
    const id = await runFlowPreview(services, membership, {
      value: {
        modules: ["a", "b", "c", "d"].map((step, i) =>
          bash(step, 'p="$1"\necho "${p}' + step + '"', { p: i === 0 ? "flow_input.p" : "previous_result" }),
        ),
      },
      args: { p: ">" },
    });
    const job = await waitForJob(services, membership, id, 30_000);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.equal(job.result, ">abcd");
    const { rows } = await services.pool.query<{ worker_name: string; started_at: Date; completed_at: Date }>(
      "SELECT worker_name, started_at, completed_at FROM job WHERE parent_job_id = $1 ORDER BY created_at",
      [id],
    );
    assert.equal(rows.length, 4);
    assert.deepEqual(new Set(rows.map((row) => row.worker_name)).size, 1, JSON.stringify(rows));
    for (let i = 1; i < rows.length; i++) {
      assert.ok(
        rows[i]!.started_at >= rows[i - 1]!.completed_at,
        `step ${i} started before step ${i - 1} ended`,
      );
    }
  });

  it("early_return: run_wait_result answers the named step's result while the rest goes on", async () => {
    await createFlow(services, membership, {
      path: "u/t/early",
      summary: "early",
      value: {
        early_return: "quick",
        modules: [bash("quick", "echo fast-answer"), bash("slow", "sleep 3\necho late")],
      },
    });
    const started = performance.now();
    const id = await runFlowByPath(services, membership, "u/t/early", {});
    const early = await waitForFlowResult(services, membership, id, 20_000);
    const ms = performance.now() - started;
    assert.deepEqual(early, { status: "success", result: "fast-answer" });
    assert.ok(ms < 2500, `answered after ${ms} ms`);
    const { rows } = await services.pool.query("SELECT status FROM job WHERE id = $1", [id]);
    assert.equal(rows[0].status, "running", "the flow goes on after its early return");
    const done = await waitForJob(services, membership, id, 20_000);
    assert.equal(done.status, "success");
    assert.equal(done.result, "late");
  });

  it("concurrent_limit 1: the flow's runs wait for each other, and all complete", async () => {
    await createFlow(services, membership, {
      path: "u/t/one_at_a_time",
      summary: "limited",
      value: { concurrent_limit: 1, modules: [bash("s", "sleep 0.4\necho ok")] },
    });
    const ids = await Promise.all(
      [1, 2, 3].map(() => runFlowByPath(services, membership, "u/t/one_at_a_time", {})),
    );
    for (const id of ids)
      assert.equal((await waitForJob(services, membership, id, 30_000)).status, "success");
    const { rows } = await services.pool.query<{ started_at: Date; completed_at: Date }>(
      "SELECT started_at, completed_at FROM job WHERE id = ANY($1::uuid[]) ORDER BY started_at",
      [ids],
    );
    for (let i = 1; i < rows.length; i++) {
      assert.ok(rows[i]!.started_at >= rows[i - 1]!.completed_at, "runs of the flow did not overlap");
    }
  });

  it("a time window: a waiting run starts from the sweeper once the window has passed", async () => {
    await createFlow(services, membership, {
      path: "u/t/windowed",
      summary: "windowed",
      value: {
        concurrent_limit: 1,
        concurrency_time_window_s: 1,
        modules: [bash("s", "echo ok")],
      },
    });
    const first = await runFlowByPath(services, membership, "u/t/windowed", {});
    await waitForJob(services, membership, first, 10_000);
    const second = await runFlowByPath(services, membership, "u/t/windowed", {});
    const { rows } = await services.pool.query("SELECT status FROM job WHERE id = $1", [second]);
    assert.equal(rows[0].status, "queued", "within the window the second run waits");
    // A waiting flow run has no dispatch, and the orphan repair leaves it alone (no worker runs a flow job).
    await services.pool.query("UPDATE job SET scheduled_for = now() - interval '5 minutes' WHERE id = $1", [
      second,
    ]);
    assert.ok(!(await repairOrphanedJobs(services.pool, services.boss)).includes(second));
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.deepEqual((await sweepFlows(services.pool, services.boss)).started, [second]);
    assert.equal((await waitForJob(services, membership, second, 10_000)).status, "success");
  });

  it("priority: steps run at the flow's priority unless they set their own", async () => {
    const id = await runFlowPreview(services, membership, {
      value: { priority: 7, modules: [bash("a", "echo a"), bash("b", "echo b", {}, { priority: 3 })] },
      args: {},
    });
    await waitForJob(services, membership, id, 20_000);
    assert.deepEqual(
      (await steps(id)).map((s) => [s.flow_step_id, s.priority]),
      [
        ["a", 7],
        ["b", 3],
      ],
    );
  });

  it("the flow's input schema: a missing required argument or a wrong type is refused naming the field", async () => {
    await createFlow(services, membership, {
      path: "u/t/typed",
      summary: "typed",
      value: { modules: [bash("a", 'n="$1"\necho "$n"', { n: "flow_input.count" })] },
      schema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { count: { type: "integer" }, label: { type: "string", default: "x" } },
        required: ["count"],
        order: ["count", "label"],
      },
    });
    const missing = await runFlowByPath(services, membership, "u/t/typed", {}).catch((e: unknown) => e);
    assert.ok(missing instanceof AppError && missing.code === "INVALID_INPUT", String(missing));
    assert.equal(missing.field, "args.count");
    const wrong = await runFlowByPath(services, membership, "u/t/typed", { count: "many" }).catch(
      (e: unknown) => e,
    );
    assert.ok(wrong instanceof AppError && wrong.field === "args.count", String(wrong));
    const { rows } = await services.pool.query(
      "SELECT count(*)::int AS n FROM job WHERE script_path = 'u/t/typed'",
    );
    assert.equal(rows[0].n, 0, "a refused run stores no job");
    const id = await runFlowByPath(services, membership, "u/t/typed", { count: 4, extra: true });
    const job = await waitForJob(services, membership, id, 20_000);
    assert.equal(job.result, 4);
    const args = await services.pool.query("SELECT args FROM job WHERE id = $1", [id]);
    assert.deepEqual(args.rows[0].args, { count: 4, label: "x", extra: true });
  });
});
