// Crashes around flows (packages/core/src/flows/engine): kill -9 of the worker running a step
// (during the step, and between the step's end and the commit that records it and starts the
// next), and of the server process that started the flows. Every flow still completes and every
// step's result is recorded exactly once (one job row per step, one success). Expressions that
// misbehave fail their step with a clear reason while the worker evaluating them keeps serving.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { handleZombieJobs, runFlowPreview, waitForJob, type Membership } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";

const starterScript = path.join(
  path.dirname(fileURLToPath(import.meta.resolve("@millrace/core"))),
  "flows",
  "engine",
  "testing-starter.ts",
);

let services: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];

type Module = Record<string, unknown>;

function bash(id: string, content: string, tag: string, inputs: Record<string, string> = {}): Module {
  return {
    id,
    value: {
      type: "rawscript",
      language: "bash",
      content,
      tag,
      input_transforms: Object.fromEntries(
        Object.entries(inputs).map(([name, expr]) => [name, { type: "javascript", expr }]),
      ),
    },
  };
}

function threeSteps(tag: string, first = "echo a") {
  return {
    modules: [
      bash("a", first, tag),
      bash("b", 'p="$1"\necho "$p-b"', tag, { p: "previous_result" }),
      bash("c", 'p="$1"\necho "$p-c"', tag, { p: "previous_result" }),
    ],
  };
}

async function worker(tag: string): Promise<TestWorker> {
  const started = await startTestWorker(services.database.url, {
    WORKER_TAGS: tag,
    WORKER_PING_INTERVAL: "1",
  });
  workers.push(started);
  return started;
}

async function stepRows(flowId: string) {
  const { rows } = await services.pool.query<{
    id: string;
    flow_step_id: string;
    status: string;
    result: unknown;
  }>("SELECT id, flow_step_id, status, result FROM job WHERE parent_job_id = $1 ORDER BY created_at", [
    flowId,
  ]);
  return rows;
}

async function waitForStep(flowId: string, step: string, status: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const row = (await stepRows(flowId)).find((s) => s.flow_step_id === step);
    if (row?.status === status) return row;
    if (Date.now() > deadline) assert.fail(`step ${step} never ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The zombie monitor until nothing is left running on a dead worker (a few rounds at most). */
async function recoverZombies() {
  await new Promise((resolve) => setTimeout(resolve, 2200));
  return handleZombieJobs(services.pool, services.boss, { timeoutSecs: 1, restart: true });
}

/** Each step ran to success exactly once as far as the flow is concerned, and the flow agrees. */
async function assertRecordedOnce(flowId: string, expected: string) {
  const job = await waitForJob(services, membership, flowId, 30_000);
  assert.equal(job.status, "success", JSON.stringify(job.result));
  assert.equal(job.result, expected);
  const steps = await stepRows(flowId);
  assert.deepEqual(
    steps.map((s) => [s.flow_step_id, s.status]),
    [
      ["a", "success"],
      ["b", "success"],
      ["c", "success"],
    ],
  );
  const { rows } = await services.pool.query("SELECT flow_status FROM job WHERE id = $1", [flowId]);
  assert.deepEqual(
    rows[0].flow_status.modules.map((m: { job: string }) => m.job),
    steps.map((s) => s.id),
  );
}

describe("flows survive crashes", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await services?.close();
  });

  it("kill -9 of the worker during the first step, and during the last: the step runs again, the flow completes", async () => {
    for (const victim of ["a", "c"]) {
      const tag = `crash_during_${victim}`;
      const doomed = await worker(tag);
      const value = threeSteps(tag);
      const slow = value.modules.find((m) => m.id === victim)!.value as { content: string };
      slow.content = `sleep 2\n${slow.content}`;
      const id = await runFlowPreview(services, membership, { value, args: {} });
      await waitForStep(id, victim, "running");
      await doomed.kill9();
      await worker(tag);
      const { restarted } = await recoverZombies();
      assert.equal(restarted.length, 1);
      await assertRecordedOnce(id, "a-b-c");
    }
  });

  it("kill -9 of the worker between a step's end and the commit that records it and starts the next", async () => {
    const tag = "crash_between";
    const doomed = await worker(tag);
    const id = await runFlowPreview(services, membership, {
      value: threeSteps(tag, "sleep 1\necho a"),
      args: {},
    });
    await waitForStep(id, "a", "running");
    // Holding the flow job's row lock: the completion's transaction (which locks it first) waits.
    const blocker = await services.pool.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query("SELECT 1 FROM job WHERE id = $1 FOR UPDATE", [id]);
      const deadline = Date.now() + 15_000;
      for (;;) {
        const { rows } = await services.pool.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND application_name <> 'millrace-test' AND state = 'active'`,
        );
        if (rows[0].n > 0) break;
        if (Date.now() > deadline) assert.fail("the step's completion never waited for the flow's lock");
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await doomed.kill9();
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
    }
    // Nothing of the step's end was recorded: it is still running, on a dead worker.
    assert.deepEqual(
      (await stepRows(id)).map((s) => [s.flow_step_id, s.status]),
      [["a", "running"]],
    );
    await worker(tag);
    const { restarted } = await recoverZombies();
    assert.equal(restarted.length, 1);
    await assertRecordedOnce(id, "a-b-c");
  });

  it("kill -9 of the server that started the flows: every flow it started completes", async () => {
    const tag = "crash_server";
    await worker(tag);
    await worker(tag);
    let output = "";
    const child = spawn(process.execPath, [starterScript], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        DATABASE_URL: services.database.url,
        USER_ID: membership.principal.userId,
        WORKSPACE: membership.workspace.id,
        FLOW: JSON.stringify(threeSteps(tag)),
      },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    const deadline = Date.now() + 30_000;
    while ((output.match(/started /g) ?? []).length < 8) {
      if (child.exitCode !== null) assert.fail(`the starter exited:\n${output}`);
      if (Date.now() > deadline) assert.fail(`the starter started too few flows:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    process.kill(-child.pid!, "SIGKILL");
    await exited;
    // Every flow job written (its start committed, whether or not the starter printed it) completes.
    const { rows } = await services.pool.query<{ id: string }>(
      "SELECT id FROM job WHERE kind = 'flowpreview' AND workspace_id = $1 AND raw_flow::text LIKE '%crash_server%'",
      [membership.workspace.id],
    );
    assert.ok(rows.length >= 8);
    for (const row of rows) await assertRecordedOnce(row.id, "a-b-c");
  });

  it("expressions that loop, allocate without bound or reach for the host fail their step with a reason; the worker goes on", async () => {
    const tag = "bad_expressions";
    const serving = await worker(tag);
    const cases: [string, RegExp][] = [
      ["(() => { for (;;) {} })()", /longer than \d+ ms/],
      ["'x'.repeat(1e8)", /memory|MiB/],
      ["(() => { const a = []; for (;;) a.push(new Array(1e6).fill(1)); })()", /memory|MiB|longer than/],
      ["process.env.DATABASE_URL", /'process' is not defined/],
      ["require('fs').readFileSync('/etc/passwd', 'utf8')", /'require' is not defined/],
      ["fetch('http://127.0.0.1:1/')", /'fetch' is not defined/],
    ];
    for (const [expr, reason] of cases) {
      // The second step's inputs are evaluated by the worker that records the first step.
      const id = await runFlowPreview(services, membership, {
        value: { modules: [bash("a", "echo a", tag), bash("b", 'x="$1"\necho "$x"', tag, { x: expr })] },
        args: {},
      });
      const job = await waitForJob(services, membership, id, 30_000);
      assert.equal(job.status, "failure", expr);
      const error = (job.result as { error: { name: string; message: string; step_id: string } }).error;
      assert.equal(error.step_id, "b");
      assert.equal(error.name, "ExpressionError");
      assert.match(error.message, reason, `${expr}: ${error.message}`);
    }
    const id = await runFlowPreview(services, membership, { value: threeSteps(tag), args: {} });
    await assertRecordedOnce(id, "a-b-c");
    assert.equal(serving.process.exitCode, null, "the worker still runs");
  });
});
