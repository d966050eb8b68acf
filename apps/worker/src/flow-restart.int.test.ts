// Windmill's restartFlowAtStep (packages/core/src/flows/engine/restart.ts) with a real worker: a
// new run that starts at a top-level step, the steps before it keeping the original run's
// results without running again.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  createApiToken,
  createFlow,
  restartFlowAtStep,
  runFlowByPath,
  runFlowPreview,
  updateFlow,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "@millrace/core/testing";
import { bashStep as bash } from "./flow-modules.ts";
import { startTestApi, startTestWorker, type TestWorker } from "./testing.ts";

let services: TestServices;
let membership: Membership;
let worker: TestWorker;

async function stepJobs(flowId: string) {
  const { rows } = await services.pool.query<{ id: string; flow_step_id: string; status: string }>(
    "SELECT id, flow_step_id, status FROM job WHERE parent_job_id = $1 ORDER BY created_at",
    [flowId],
  );
  return rows;
}

async function flowStatus(id: string) {
  const { rows } = await services.pool.query<{
    flow_status: { modules: { id: string; type: string; job?: string }[] };
  }>("SELECT flow_status FROM job WHERE id = $1", [id]);
  return rows[0]!.flow_status;
}

// Step a answers a value no second run could repeat: a run that reuses it shows it unchanged.
const stepA = bash("a", 'echo "a-$1-$(date +%s%N)-$RANDOM"', { x: "flow_input.name" });
const stepC = (extra = "") =>
  bash("c", `echo "$1+$2${extra}"`, { first: "results.a", second: "previous_result" });

describe("restartFlowAtStep", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    worker = await startTestWorker(services.database.url, { WORKER_TAGS: "bash", NUM_WORKERS: "2" });
  });
  after(async () => {
    await worker?.stop();
    await services?.close();
  });

  it("restarts a finished run at step b: step a's result is reused, a does not run again", async () => {
    const path = `u/${membership.principal.username}/restart3`;
    await createFlow(services, membership, {
      path,
      summary: "three",
      value: { modules: [stepA, bash("b", 'echo "b-$1"', { p: "previous_result" }), stepC()] },
      schema: { type: "object", properties: { name: { type: "string" } } },
    });
    const firstId = await runFlowByPath(services, membership, path, { name: "n" });
    const first = await waitForJob(services, membership, firstId, 30_000);
    assert.equal(first.status, "success", JSON.stringify(first.result));
    const firstSteps = await stepJobs(firstId);
    const aJob = firstSteps.find((step) => step.flow_step_id === "a")!;
    const { rows } = await services.pool.query<{ result: string }>("SELECT result FROM job WHERE id = $1", [
      aJob.id,
    ]);
    const aResult = rows[0]!.result;
    assert.match(aResult, /^a-n-\d+-\d+$/);
    assert.equal(first.result, `${aResult}+b-${aResult}`);

    const id = await restartFlowAtStep(services, membership, firstId, { step_id: "b" });
    assert.notEqual(id, firstId);
    const job = await waitForJob(services, membership, id, 30_000);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    // b read previous_result and c read results.a: both the original run's step a.
    assert.equal(job.result, `${aResult}+b-${aResult}`);
    assert.equal(job.kind, "flow");
    assert.equal(job.scriptPath, path);
    assert.deepEqual(job.args, { name: "n" });
    const steps = await stepJobs(id);
    assert.deepEqual(
      steps.map((step) => [step.flow_step_id, step.status]),
      [
        ["b", "success"],
        ["c", "success"],
      ],
      "step a ran once, in the original run only",
    );
    const { rows: aRuns } = await services.pool.query(
      "SELECT id FROM job WHERE workspace_id = $1 AND flow_step_id = 'a'",
      [membership.workspace.id],
    );
    assert.equal(aRuns.length, 1, "step a's job ran once in all");
    const status = await flowStatus(id);
    assert.deepEqual(
      status.modules.map((module) => [module.id, module.type, module.job]),
      [
        ["a", "Success", aJob.id],
        ["b", "Success", steps[0]!.id],
        ["c", "Success", steps[1]!.id],
      ],
    );
  });

  it("restarts a failed run at its failed step with a fixed version of the flow (flow_version)", async () => {
    const path = `u/${membership.principal.username}/restart_fix`;
    await createFlow(services, membership, {
      path,
      summary: "fails at b",
      value: { modules: [stepA, bash("b", 'echo "broken" >&2\nexit 3', { p: "previous_result" }), stepC()] },
    });
    const failedId = await runFlowByPath(services, membership, path, { name: "f" });
    const failed = await waitForJob(services, membership, failedId, 30_000);
    assert.equal(failed.status, "failure");
    assert.equal((failed.result as { error: { step_id: string } }).error.step_id, "b");
    const aJob = (await stepJobs(failedId)).find((step) => step.flow_step_id === "a")!;
    const { rows } = await services.pool.query<{ result: string }>("SELECT result FROM job WHERE id = $1", [
      aJob.id,
    ]);
    const aResult = rows[0]!.result;

    // Step c cannot be restarted at: step b did not complete in that run.
    await rejectsWith(
      restartFlowAtStep(services, membership, failedId, { step_id: "c" }),
      "INVALID_INPUT",
      "step_id",
      /step b did not complete/,
    );

    const fixed = await updateFlow(services, membership, path, {
      path,
      summary: "fixed",
      value: { modules: [stepA, bash("b", 'echo "fixed-$1"', { p: "previous_result" }), stepC("!")] },
    });
    const id = await restartFlowAtStep(services, membership, failedId, {
      step_id: "b",
      flow_version: fixed.version_id,
    });
    const job = await waitForJob(services, membership, id, 30_000);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.equal(job.result, `${aResult}+fixed-${aResult}!`);
    assert.deepEqual(
      (await stepJobs(id)).map((step) => step.flow_step_id),
      ["b", "c"],
    );
  });

  it("reuses a sequential loop's kept result; refuses steps inside loops and branches, unknown steps, runs still going and non-flow jobs", async () => {
    const loop = {
      id: "loop",
      value: {
        type: "forloopflow",
        iterator: { type: "javascript", expr: "[1, 2]" },
        skip_failures: false,
        modules: [bash("inner", 'echo "in-$1-$RANDOM$RANDOM"', { v: "flow_input.iter.value" })],
      },
    };
    const previewId = await runFlowPreview(services, membership, {
      value: { modules: [stepA, loop, bash("last", 'echo "last-$1"', { r: "results.loop.join(',')" })] },
      args: { name: "p" },
    });
    const preview = await waitForJob(services, membership, previewId, 30_000);
    assert.equal(preview.status, "success", JSON.stringify(preview.result));
    await rejectsWith(
      restartFlowAtStep(services, membership, previewId, { step_id: "inner" }),
      "INVALID_INPUT",
      "step_id",
      /step inner is inside the loop or branch step loop: restarting inside a loop or branch is not supported, restart at loop/,
    );
    await rejectsWith(
      restartFlowAtStep(services, membership, previewId, { step_id: "nope" }),
      "INVALID_INPUT",
      "step_id",
      /the flow has no step nope/,
    );
    await rejectsWith(
      restartFlowAtStep(services, membership, previewId, { step_id: "loop", branch_or_iteration_n: 1 }),
      "INVALID_INPUT",
      "branch_or_iteration_n",
    );
    assert.match(String(preview.result), /^last-in-1-\d+,in-2-\d+$/);
    // A sequential loop has no job of its own: the finished run kept its result for a restart.
    const afterLoop = await waitForJob(
      services,
      membership,
      await restartFlowAtStep(services, membership, previewId, { step_id: "last" }),
      30_000,
    );
    assert.equal(afterLoop.status, "success", JSON.stringify(afterLoop.result));
    assert.equal(afterLoop.result, preview.result);
    assert.deepEqual(
      (await stepJobs(afterLoop.id)).map((step) => step.flow_step_id),
      ["last"],
      "neither a nor the loop ran again",
    );
    // A run that did not keep it (recorded before runs kept them): refused, naming the step.
    await services.pool.query(
      "UPDATE job SET flow_status = flow_status #- '{_engine,results}' WHERE id = $1",
      [previewId],
    );
    await rejectsWith(
      restartFlowAtStep(services, membership, previewId, { step_id: "last" }),
      "INVALID_INPUT",
      "step_id",
      /did not keep the result of step loop/,
    );
    // Restarting at the loop itself reuses a and runs the loop again.
    const again = await waitForJob(
      services,
      membership,
      await restartFlowAtStep(services, membership, previewId, { step_id: "loop" }),
      30_000,
    );
    assert.equal(again.status, "success", JSON.stringify(again.result));
    assert.equal(again.kind, "flowpreview");
    assert.match(String(again.result), /^last-in-1-\d+,in-2-\d+$/);
    assert.notEqual(again.result, preview.result, "the loop ran again");
    // A step job is no flow run.
    const aJob = (await stepJobs(previewId)).find((step) => step.flow_step_id === "a")!;
    await rejectsWith(
      restartFlowAtStep(services, membership, aJob.id, { step_id: "a" }),
      "INVALID_INPUT",
      "id",
    );
    // A run still going (suspended on an approval) is not restarted.
    const waiting = await runFlowPreview(services, membership, {
      value: { modules: [{ id: "gate", value: { type: "identity" }, suspend: { timeout: 3600 } }] },
      args: {},
    });
    await rejectsWith(
      restartFlowAtStep(services, membership, waiting, { step_id: "gate" }),
      "INVALID_INPUT",
      "id",
      /still running/,
    );
  });

  it("REST: POST jobs/restart/f/{id} answers the new job's id (201), a nested step 400 naming step_id", async () => {
    const api = await startTestApi(services.database.url, "restart-test-instance-key-0123456789abcdef");
    try {
      const token = await createApiToken(services, membership.principal, { label: "restart" });
      const ws = membership.workspace.id;
      const post = (id: string, body: unknown) =>
        fetch(`${api.url}/api/w/${ws}/jobs/restart/f/${id}`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const originalId = await runFlowPreview(services, membership, {
        value: {
          modules: [
            stepA,
            { id: "br", value: { type: "branchone", branches: [], default: [bash("d", "echo d")] } },
            bash("z", 'echo "z-$1"', { r: "results.a" }),
          ],
        },
        args: { name: "r" },
      });
      const original = await waitForJob(services, membership, originalId, 30_000);
      assert.equal(original.status, "success", JSON.stringify(original.result));
      const nested = await post(originalId, { step_id: "d" });
      assert.equal(nested.status, 400);
      assert.equal(nested.headers.get("x-error-field"), "step_id");
      assert.match(await nested.text(), /step d is inside the loop or branch step br/);
      const bad = await post(originalId, { step_id: 3 });
      assert.equal(bad.status, 400);
      assert.equal(bad.headers.get("x-error-field"), "step_id");
      const missing = await post("00000000-0000-4000-8000-000000000000", { step_id: "a" });
      assert.equal(missing.status, 404);
      const started = await post(originalId, { step_id: "br" });
      assert.equal(started.status, 201);
      const id = await started.text();
      const job = await waitForJob(services, membership, id, 30_000);
      assert.equal(job.status, "success", JSON.stringify(job.result));
      assert.equal(job.result, original.result);
    } finally {
      await api.close();
    }
  });
});
