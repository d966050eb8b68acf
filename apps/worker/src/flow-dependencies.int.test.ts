// Windmill's jobs/run/flow_dependencies_async (packages/core/src/flows/dependencies.ts, run by
// apps/worker/src/job-flow-dependencies.ts) with a real worker and a local package index: the
// job answers the flow value with each inline step's lock, as a script of that code would get it.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiToken, runFlowDependencies, waitForJob, type Membership } from "@millrace/core";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "@millrace/core/testing";
import { buildWheel, serveIndex } from "../../../packages/runtime/src/deps/testing.ts";
import { bashStep as bash, type StepModule } from "./flow-modules.ts";
import { startTestApi, startTestWorker, type TestWorker } from "./testing.ts";

let services: TestServices;
let membership: Membership;
let worker: TestWorker;
let index: Awaited<ReturnType<typeof serveIndex>>;
const scratch = mkdtempSync(path.join(os.tmpdir(), "millrace-flow-deps-int-"));
chmodSync(scratch, 0o755);
const wheels = path.join(scratch, "wheels");

function python(id: string, content: string): StepModule {
  return { id, value: { type: "rawscript", language: "python3", content, input_transforms: {} } };
}

const GREET =
  "# requirements:\n#millrace-greet==1.0.0\nimport millrace_greet\n\ndef main():\n    return millrace_greet.greet('x')\n";

type Step = { id: string; value: { lock?: string; modules?: Step[]; type: string } };
type FlowValue = { modules: Step[]; failure_module?: Step; [key: string]: unknown };

describe("flow_dependencies_async", () => {
  before(async () => {
    mkdirSync(wheels);
    buildWheel(
      wheels,
      "millrace-greet",
      "1.0.0",
      "millrace_greet",
      'def greet(n):\n    return "hello " + n\n',
    );
    index = await serveIndex(wheels);
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    worker = await startTestWorker(services.database.url, {
      PIP_INDEX_URL: index.url,
      DEPENDENCY_CACHE_DIR: path.join(scratch, "cache"),
    });
  });
  after(async () => {
    await worker?.stop();
    await services?.close();
    await index?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("locks every inline step, nested ones and the failure module included: python from its requirements, bash ''", async () => {
    const flowValue = {
      modules: [
        bash("first", "echo hi"),
        {
          id: "loop",
          value: {
            type: "forloopflow",
            iterator: { type: "javascript", expr: "[1]" },
            skip_failures: false,
            modules: [python("greet", GREET)],
          },
        },
        python("plain", "def main():\n    return 1\n"),
      ],
      failure_module: bash("failure", "echo failed"),
      // A field Millrace does not know passes through untouched.
      notes: [{ text: "kept" }],
    };
    const id = await runFlowDependencies(services, membership, { flow_value: flowValue, path: "f/x/flow" });
    const job = await waitForJob(services, membership, id, 120_000);
    assert.equal(job.status, "success", `${job.logs}\n${JSON.stringify(job.result)}`);
    assert.equal(job.kind, "flowdependencies");
    assert.equal(job.tag, "dependency");
    const updated = (job.result as { updated_flow_value: FlowValue }).updated_flow_value;
    assert.equal(updated.modules[0]!.value.lock, "");
    assert.equal(updated.modules[1]!.value.modules![0]!.value.lock, "millrace-greet==1.0.0");
    assert.equal(updated.modules[1]!.value.lock, undefined, "a loop has no lock");
    assert.equal(updated.modules[2]!.value.lock, "");
    assert.equal(updated.failure_module!.value.lock, "");
    assert.deepEqual(updated.notes, [{ text: "kept" }]);
    // Otherwise the value is the one sent.
    const strip = (value: unknown) =>
      JSON.parse(JSON.stringify(value, (k, v) => (k === "lock" ? undefined : v)));
    assert.deepEqual(strip(updated), strip(flowValue));
    assert.match(job.logs, /step greet \(python3\): resolving its requirements/);
  });

  it("no step with requirements: a noop job answers every lock '' at once", async () => {
    const id = await runFlowDependencies(services, membership, {
      flow_value: { modules: [bash("a", "echo a"), python("b", "def main():\n    return 2\n")] },
      path: "f/x/plain",
    });
    const job = await waitForJob(services, membership, id, 30_000);
    assert.equal(job.status, "success");
    assert.equal(job.kind, "noop");
    const updated = (job.result as { updated_flow_value: FlowValue }).updated_flow_value;
    assert.deepEqual(
      updated.modules.map((step) => step.value.lock),
      ["", ""],
    );
  });

  it("a requirement that cannot be installed fails the job naming the step; bad input is refused naming the field", async () => {
    const id = await runFlowDependencies(services, membership, {
      flow_value: {
        modules: [
          python("broken", "# requirements:\n#millrace-nonexistent==1.0\n\ndef main():\n    return 1\n"),
        ],
      },
      path: "f/x/broken",
    });
    const job = await waitForJob(services, membership, id, 120_000);
    assert.equal(job.status, "failure");
    assert.match(JSON.stringify(job.result), /step broken: .*millrace-nonexistent/);
    await rejectsWith(
      runFlowDependencies(services, membership, {
        flow_value: { modules: [{ id: "x", value: { type: "nope" } }] },
        path: "f/x/y",
      }),
      "INVALID_INPUT",
      "flow_value.modules[0].value.type",
    );
    await rejectsWith(
      runFlowDependencies(services, membership, { flow_value: { modules: [] }, path: "nope" }),
      "INVALID_INPUT",
      "path",
    );
    await rejectsWith(
      runFlowDependencies(services, membership, {
        flow_value: {
          modules: [
            python("opt", "# requirements:\n#--index-url http://evil\n\ndef main():\n    return 1\n"),
          ],
        },
        path: "f/x/opt",
      }),
      "INVALID_INPUT",
      "flow_value.modules[0].value.content",
    );
  });

  it("REST: the job id as text (201), then get_result_maybe answers updated_flow_value as wmill reads it", async () => {
    const api = await startTestApi(services.database.url, "flow-deps-test-instance-key-0123456789abcdef");
    try {
      const token = await createApiToken(services, membership.principal, { label: "flow-deps" });
      const ws = membership.workspace.id;
      const headers = { Authorization: `Bearer ${token}`, "content-type": "application/json" };
      const response = await fetch(`${api.url}/api/w/${ws}/jobs/run/flow_dependencies_async`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          flow_value: { modules: [python("greet", GREET), bash("b", "echo b")] },
          path: "f/x/rest",
          use_local_lockfiles: true,
          raw_workspace_dependencies: {},
        }),
      });
      assert.equal(response.status, 201);
      const id = (await response.text()).trim();
      type Answer = { completed: boolean; success: boolean; result: { updated_flow_value: FlowValue } };
      let answer = null as Answer | null;
      for (let i = 0; i < 600 && !answer?.completed; i++) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 200));
        const poll = await fetch(`${api.url}/api/w/${ws}/jobs_u/completed/get_result_maybe/${id}`, {
          headers,
        });
        assert.equal(poll.status, 200);
        answer = (await poll.json()) as Answer;
      }
      assert.equal(answer?.completed, true);
      assert.equal(answer?.success, true, JSON.stringify(answer));
      assert.deepEqual(
        answer!.result.updated_flow_value.modules.map((step) => step.value.lock),
        ["millrace-greet==1.0.0", ""],
      );
      const bad = await fetch(`${api.url}/api/w/${ws}/jobs/run/flow_dependencies_async`, {
        method: "POST",
        headers,
        body: JSON.stringify({ flow_value: { modules: [] } }),
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.headers.get("x-error-field"), "path");
    } finally {
      await api.close();
    }
  });
});
