// Parallel loops and branches and sub-flows (packages/core/src/flows/engine): each parallel
// iteration, branch or sub-flow runs as a child flow job under the flow job, with real workers.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  cancelJob,
  createFlow,
  runFlowByPath,
  runFlowPreview,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";
import { bashStep as bash, type StepModule as Module } from "./flow-modules.ts";

let services: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];

function loop(id: string, iterator: string, modules: Module[], extra: Module = {}): Module {
  return {
    id,
    value: {
      type: "forloopflow",
      iterator: { type: "javascript", expr: iterator },
      skip_failures: false,
      parallel: true,
      modules,
      ...extra,
    },
  };
}

async function preview(modules: Module[], args: Record<string, unknown> = {}, timeoutMs = 60_000) {
  const id = await runFlowPreview(services, membership, { value: { modules }, args });
  return waitForJob(services, membership, id, timeoutMs);
}

async function descendants(flowId: string) {
  const { rows } = await services.pool.query<{
    id: string;
    parent_job_id: string;
    kind: string;
    flow_step_id: string;
    status: string;
    args: Record<string, unknown>;
    started_at: Date;
    completed_at: Date;
  }>(
    `WITH RECURSIVE tree AS (
       SELECT id FROM job WHERE parent_job_id = $1
       UNION ALL SELECT j.id FROM job j JOIN tree t ON j.parent_job_id = t.id)
     SELECT id, parent_job_id, kind, flow_step_id, status, args, started_at, completed_at
       FROM job WHERE id IN (SELECT id FROM tree) ORDER BY created_at`,
    [flowId],
  );
  return rows;
}

describe("parallel flow steps and sub-flows with real workers", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    workers.push(await startTestWorker(services.database.url, { WORKER_TAGS: "bash", NUM_WORKERS: "8" }));
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await services?.close();
  });

  it("a parallel loop of 100 iterations with parallelism 4: never more than 4 at once, results in order", async () => {
    const items = Array.from({ length: 100 }, (_, i) => i);
    const started = performance.now();
    const job = await preview(
      [
        loop(
          "l",
          "flow_input.items",
          [bash("each", 'v="$1"\nsleep 0.05\necho "$((v * 2))"', { v: "flow_input.iter.value" })],
          { parallelism: { type: "static", value: 4 } },
        ),
      ],
      { items },
      120_000,
    );
    console.log(
      `# 100 iterations, parallelism 4, 50 ms steps: ${(performance.now() - started).toFixed(0)} ms`,
    );
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.deepEqual(
      job.result,
      items.map((i) => i * 2),
    );
    const jobs = await descendants(job.id);
    const children = jobs.filter((j) => j.parent_job_id === job.id);
    const steps = jobs.filter((j) => j.kind === "flowscript");
    assert.equal(children.length, 100);
    assert.ok(children.every((c) => c.kind === "flowpreview" && c.flow_step_id === "l"));
    assert.equal(steps.length, 100);
    // At any step's start, how many iterations (child flows) were running: at most 4.
    let most = 0;
    for (const step of children) {
      const at = step.started_at.getTime();
      const running = children.filter(
        (c) => c.started_at.getTime() <= at && c.completed_at.getTime() > at,
      ).length;
      most = Math.max(most, running);
    }
    assert.ok(most <= 4, `at most 4 iterations at once, saw ${most}`);
    assert.ok(most >= 2, `iterations ran in parallel (saw ${most} at once)`);
    const { rows } = await services.pool.query("SELECT flow_status FROM job WHERE id = $1", [job.id]);
    assert.equal(rows[0].flow_status.modules[0].flow_jobs.length, 100);
  });

  it("nested: a parallel loop whose body holds a sequential loop, a parallel branchall and results of outer steps", async () => {
    const job = await preview(
      [
        bash("first", "echo base"),
        loop("outer", "flow_input.rows", [
          {
            id: "inner",
            value: {
              type: "forloopflow",
              iterator: { type: "javascript", expr: "flow_input.iter.value" },
              skip_failures: false,
              modules: [bash("cell", 'v="$1"\necho "c$v"', { v: "flow_input.iter.value" })],
            },
          },
          {
            id: "both",
            value: {
              type: "branchall",
              parallel: true,
              branches: [
                { modules: [bash("left", 'b="$1"\necho "L-$b"', { b: "results.first" })] },
                {
                  modules: [
                    loop("deep", "[1, 2]", [bash("d", 'v="$1"\necho "d$v"', { v: "flow_input.iter.value" })]),
                  ],
                },
              ],
            },
          },
          {
            id: "pack",
            value: { type: "identity" },
          },
        ]),
        bash("last", 'n="$1"\necho "$n"', { n: "JSON.stringify(results.outer)" }),
      ],
      { rows: [[1, 2], [3]] },
    );
    assert.equal(job.status, "success", JSON.stringify(job.result));
    // bash's last line, JSON, is the step's result as parsed JSON.
    assert.deepEqual(job.result, [
      ["L-base", ["d1", "d2"]],
      ["L-base", ["d1", "d2"]],
    ]);
  });

  it("a parallel branchall gives its results in branch order; skip_failure keeps a failed branch's error", async () => {
    const job = await preview([
      {
        id: "all",
        value: {
          type: "branchall",
          parallel: true,
          branches: [
            { modules: [bash("slow", "sleep 0.5\necho slow")] },
            { modules: [bash("bad", "exit 1")], skip_failure: true },
            { modules: [bash("fast", "echo fast")] },
          ],
        },
      },
    ]);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    const [slow, bad, fast] = job.result as unknown[];
    assert.equal(slow, "slow");
    assert.equal((bad as { error: { step_id: string } }).error.step_id, "bad");
    assert.equal(fast, "fast");
    const jobs = await descendants(job.id);
    const slowStep = jobs.find((j) => j.flow_step_id === "slow")!;
    const fastStep = jobs.find((j) => j.flow_step_id === "fast")!;
    assert.ok(fastStep.completed_at < slowStep.completed_at, "the branches ran at the same time");
  });

  it("a failed iteration without skip_failures fails the flow and cancels the iterations still running", async () => {
    const job = await preview([
      loop("l", "[0, 1, 2]", [
        bash("each", 'v="$1"\nif [ "$v" = 1 ]; then exit 4; fi\nsleep 20\necho ok', {
          v: "flow_input.iter.value",
        }),
      ]),
    ]);
    assert.equal(job.status, "failure");
    assert.equal((job.result as { error: { step_id: string } }).error.step_id, "each");
    const deadline = Date.now() + 15_000;
    for (;;) {
      const jobs = await descendants(job.id);
      if (jobs.every((j) => j.status !== "running" && j.status !== "queued")) {
        assert.equal(jobs.filter((j) => j.status === "canceled").length, 4, JSON.stringify(jobs));
        break;
      }
      if (Date.now() > deadline) assert.fail(`children left running: ${JSON.stringify(jobs)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it("skip_failures: failed iterations give their error, the loop goes on", async () => {
    const job = await preview([
      loop(
        "l",
        "[0, 1, 2]",
        [
          bash("each", 'v="$1"\nif [ "$v" = 1 ]; then exit 4; fi\necho "ok$v"', {
            v: "flow_input.iter.value",
          }),
        ],
        { skip_failures: true },
      ),
    ]);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    const [a, b, c] = job.result as unknown[];
    assert.equal(a, "ok0");
    assert.ok((b as { error: unknown }).error);
    assert.equal(c, "ok2");
  });

  it("canceling a flow cancels its running child flows and their steps", async () => {
    const id = await runFlowPreview(services, membership, {
      value: { modules: [loop("l", "[0, 1]", [bash("each", "sleep 30")])] },
      args: {},
    });
    const deadline = Date.now() + 15_000;
    while (
      (await descendants(id)).filter((j) => j.kind === "flowscript" && j.status === "running").length < 2
    ) {
      if (Date.now() > deadline) assert.fail("the steps never started");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await cancelJob(services, membership, id, "stop");
    for (;;) {
      const jobs = await descendants(id);
      if (jobs.every((j) => j.status === "canceled")) break;
      if (Date.now() > deadline)
        assert.fail(`not all canceled: ${JSON.stringify(jobs.map((j) => j.status))}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal((await waitForJob(services, membership, id, 1000)).status, "canceled");
  });

  it("a flow step runs the deployed flow as a child flow job with its own inputs", async () => {
    await createFlow(services, membership, {
      path: "u/t/sub",
      summary: "sub",
      value: { modules: [bash("s", 'x="$1"\necho "sub-$x"', { x: "flow_input.x" })] },
      schema: { type: "object", properties: { x: { type: "string" } } },
    });
    await createFlow(services, membership, {
      path: "u/t/outer",
      summary: "outer",
      value: {
        modules: [
          bash("a", "echo A"),
          {
            id: "call",
            value: {
              type: "flow",
              path: "u/t/sub",
              input_transforms: { x: { type: "javascript", expr: "results.a + flow_input.y" } },
            },
          },
          bash("z", 'r="$1"\necho "got-$r"', { r: "previous_result" }),
        ],
      },
    });
    await createFlow(services, membership, {
      path: "u/t/typed_sub",
      summary: "typed",
      value: { modules: [{ id: "i", value: { type: "identity" } }] },
      schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
    });
    const id = await runFlowByPath(services, membership, "u/t/outer", { y: "Y" });
    const job = await waitForJob(services, membership, id, 30_000);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.equal(job.result, "got-sub-AY");
    const { rows } = await services.pool.query(
      "SELECT kind, script_path, args, parent_job_id FROM job WHERE parent_job_id = $1 AND kind = 'flow'",
      [id],
    );
    assert.deepEqual(rows, [{ kind: "flow", script_path: "u/t/sub", args: { x: "AY" }, parent_job_id: id }]);

    const badArgs = await preview([
      {
        id: "call",
        value: {
          type: "flow",
          path: "u/t/typed_sub",
          input_transforms: { n: { type: "static", value: "x" } },
        },
      },
    ]);
    assert.equal(badArgs.status, "failure");
    assert.match(JSON.stringify(badArgs.result), /InvalidArgs.*u\/t\/typed_sub/);

    const missing = await preview([
      { id: "call", value: { type: "flow", path: "u/t/nope", input_transforms: {} } },
    ]).catch((error: unknown) => error);
    // A missing sub-flow is refused at deploy (preview validates), or fails its step.
    assert.ok(
      missing instanceof Error
        ? /nope/.test(missing.message)
        : (missing as { status: string }).status === "failure",
    );
  });
});
