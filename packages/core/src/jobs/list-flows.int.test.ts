// The job lists with flows: top-level jobs by default (a flow run, not its steps), a flow's steps
// through `parent_job`, and Windmill's `is_flow_step` / `has_null_parent` / `job_kinds` filters.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runFlowByPath } from "../flows/engine/run.ts";
import { createFlow } from "../flows/store.ts";
import { deployScript } from "../scripts.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import type { Membership } from "../membership.ts";
import { listJobs, parseJobListQuery, type JobListQuery } from "./queries.ts";
import { runScriptByPath } from "./run.ts";

describe("job lists with flows", () => {
  let services: TestServices;
  let membership: Membership;
  let flowId: string;
  let scriptId: string;

  const list = async (query: JobListQuery) =>
    (await listJobs(services, membership, parseJobListQuery(query))).map((job) => job.id);

  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "flowlist"));
    const me = membership.principal.username;
    await deployScript(services, membership, {
      path: `u/${me}/solo`,
      language: "bash",
      content: "echo solo\n",
    });
    await createFlow(services, membership, {
      path: `u/${me}/two_steps`,
      value: {
        modules: [
          {
            id: "a",
            value: { type: "rawscript", language: "bash", content: "echo a\n", input_transforms: {} },
          },
          {
            id: "b",
            value: { type: "rawscript", language: "bash", content: "echo b\n", input_transforms: {} },
          },
        ],
      },
    });
    scriptId = await runScriptByPath(services, membership, `u/${me}/solo`, {});
    // No worker here: the flow waits on its first step, queued as a child job.
    flowId = await runFlowByPath(services, membership, `u/${me}/two_steps`, {});
  });
  after(() => services?.close());

  it("lists top-level jobs by default, the flow run's steps through parent_job", async () => {
    const { rows } = await services.pool.query<{ id: string; flow_step_id: string }>(
      "SELECT id, flow_step_id FROM job WHERE parent_job_id = $1",
      [flowId],
    );
    assert.equal(rows.length, 1);
    const stepId = rows[0]!.id;
    assert.equal(rows[0]!.flow_step_id, "a");

    assert.deepEqual((await list({})).sort(), [flowId, scriptId].sort());
    assert.deepEqual(await list({ parent_job: flowId }), [stepId]);
    assert.deepEqual(await list({ is_flow_step: "true" }), [stepId]);
    assert.deepEqual((await list({ is_flow_step: "false" })).sort(), [flowId, scriptId].sort());
    assert.deepEqual(await list({ has_null_parent: "false" }), [stepId]);
    assert.deepEqual(await list({ job_kinds: "flow" }), [flowId]);
    assert.deepEqual(await list({ job_kinds: "flowscript", is_flow_step: "true" }), [stepId]);
    assert.deepEqual(await list({ parent_job: scriptId }), []);
    const queue = await listJobs(services, membership, {
      ...parseJobListQuery({ parent_job: flowId }),
      scope: "queue",
    });
    assert.deepEqual(
      queue.map((j) => j.id),
      [stepId],
    );
  });

  it("refuses a parent_job that is no job id and a flag that is not true/false, naming the parameter", async () => {
    await rejectsWith(list({ parent_job: "nope" }), "INVALID_INPUT", "parent_job");
    await rejectsWith(list({ is_flow_step: "yes" }), "INVALID_INPUT", "is_flow_step");
    await rejectsWith(list({ has_null_parent: "1" }), "INVALID_INPUT", "has_null_parent");
  });
});
