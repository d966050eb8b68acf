// The flow engine (packages/core/src/flows/engine) with real worker processes: each step is a
// job on its own tag, run by an ordinary worker, and the transaction that records a step enqueues
// the next one. (Here rather than in packages/core: core cannot depend on the worker app.)
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  cancelJob,
  createApiToken,
  createFlow,
  deployScript,
  getJob,
  handleZombieJobs,
  runFlowByPath,
  runFlowPreview,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestWorker } from "./testing.ts";
import { bashStep as bash, type StepModule as Module } from "./flow-modules.ts";

let services: TestServices;
let membership: Membership;
const workers: TestWorker[] = [];

async function preview(modules: Module[], args: Record<string, unknown> = {}, value: Module = {}) {
  const id = await runFlowPreview(services, membership, { value: { modules, ...value }, args });
  return waitForJob(services, membership, id, 30_000);
}

async function stepJobs(flowId: string) {
  const { rows } = await services.pool.query<{
    id: string;
    flow_step_id: string;
    status: string;
    tag: string;
  }>("SELECT id, flow_step_id, status, tag FROM job WHERE parent_job_id = $1 ORDER BY created_at", [flowId]);
  return rows;
}

describe("flow engine with real workers", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    workers.push(
      await startTestWorker(services.database.url, { WORKER_TAGS: "bash,flowtag", NUM_WORKERS: "2" }),
    );
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await services?.close();
  });

  it("runs three bash steps as child jobs, passing flow_input, results.<id> and previous_result", async () => {
    await createFlow(services, membership, {
      path: "u/t/three",
      summary: "three",
      value: {
        modules: [
          bash("a", 'x="$1"\necho "a-$x"', { x: "flow_input.name" }),
          bash("b", 'p="$1"\necho "b-$p"', { p: "previous_result" }),
          bash("c", 'first="$1"\nsecond="$2"\necho "$first+$second"', {
            first: "results.a",
            second: "results.b",
          }),
        ],
      },
      schema: { type: "object", properties: { name: { type: "string" } } },
    });
    // Warm-up run (first job of the worker, first sandbox load), then a timed one.
    await waitForJob(
      services,
      membership,
      await runFlowByPath(services, membership, "u/t/three", { name: "w" }),
      30_000,
    );
    const started = performance.now();
    const id = await runFlowByPath(services, membership, "u/t/three", { name: "z" });
    const job = await waitForJob(services, membership, id, 30_000);
    const ms = performance.now() - started;
    console.log(`# 3 bash steps: submit to result ${ms.toFixed(0)} ms`);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.equal(job.result, "a-z+b-a-z");
    const steps = await stepJobs(id);
    assert.deepEqual(
      steps.map((s) => [s.flow_step_id, s.status, s.tag]),
      [
        ["a", "success", "bash"],
        ["b", "success", "bash"],
        ["c", "success", "bash"],
      ],
    );
    const { rows } = await services.pool.query(
      "SELECT kind, flow_status, worker_name FROM job WHERE id = $1",
      [id],
    );
    assert.equal(rows[0].kind, "flow");
    assert.equal(rows[0].worker_name, null, "no worker sat on the flow job");
    assert.deepEqual(
      rows[0].flow_status.modules.map((m: { type: string; job: string }) => [m.type, m.job]),
      steps.map((s) => ["Success", s.id]),
    );
  });

  it("a flow's table result keeps the key order its step wrote", async () => {
    const job = await preview([
      bash("a", `echo '[{"zeta": 1, "alpha": 2, "mid": 3}]'`),
      { id: "b", value: { type: "identity" } },
    ]);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.deepEqual(Object.keys((job.result as Record<string, unknown>[])[0]!), ["zeta", "alpha", "mid"]);
  });

  it("branchone takes the first branch whose condition holds, else the default", async () => {
    const modules = [
      {
        id: "pick",
        value: {
          type: "branchone",
          branches: [
            { expr: "flow_input.n > 10", modules: [bash("big", "echo big")] },
            { expr: "flow_input.n > 5", modules: [bash("mid", "echo mid")] },
          ],
          default: [bash("small", "echo small")],
        },
      },
      bash("after", 'r="$1"\necho "got-$r"', { r: "results.pick" }),
    ];
    assert.equal((await preview(modules, { n: 7 })).result, "got-mid");
    assert.equal((await preview(modules, { n: 70 })).result, "got-big");
    assert.equal((await preview(modules, { n: 1 })).result, "got-small");
  });

  it("forloopflow runs its body per item with flow_input.iter.value and .index; its result is the list", async () => {
    const job = await preview(
      [
        {
          id: "loop",
          value: {
            type: "forloopflow",
            iterator: { type: "javascript", expr: "flow_input.items" },
            skip_failures: false,
            modules: [
              bash("each", 'v="$1"\ni="$2"\necho "$i:$v"', {
                v: "flow_input.iter.value",
                i: "flow_input.iter.index",
              }),
            ],
          },
        },
      ],
      { items: ["x", "y", "z"] },
    );
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.deepEqual(job.result, ["0:x", "1:y", "2:z"]);
  });

  it("a failing step runs the failure module with the error and the failed step's id", async () => {
    const job = await preview(
      [bash("ok", "echo fine"), bash("boom", "echo oops >&2\nexit 3"), bash("never", "echo never")],
      {},
      {
        failure_module: bash("handler", 'm="$1"\ns="$2"\necho "handled-$s"', {
          m: "previous_result.message",
          s: "previous_result.step_id",
        }),
      },
    );
    assert.equal(job.status, "failure");
    assert.equal(job.result, "handled-boom");
    const steps = (await stepJobs(job.id)).map((s) => s.flow_step_id);
    assert.deepEqual(steps, ["ok", "boom", "handler"]);
  });

  it("without a failure module the flow fails with the step's error", async () => {
    const job = await preview([bash("boom", "exit 2"), bash("never", "echo never")]);
    assert.equal(job.status, "failure");
    assert.equal((job.result as { error: { step_id: string } }).error.step_id, "boom");
  });

  it("continue_on_error, skip_if and stop_after_if", async () => {
    const continued = await preview([
      bash("boom", "exit 2", {}, { continue_on_error: true }),
      bash("next", 'e="$1"\necho "after-$e"', { e: "typeof previous_result.error" }),
    ]);
    assert.equal(continued.status, "success", JSON.stringify(continued.result));
    assert.equal(continued.result, "after-object");

    const skipped = await preview(
      [
        bash("first", "echo one"),
        bash("skipped", "echo two", {}, { skip_if: { expr: "flow_input.skip" } }),
        bash("last", 'p="$1"\necho "last-$p"', { p: "previous_result" }),
      ],
      { skip: true },
    );
    assert.equal(skipped.result, "last-one");
    assert.deepEqual(
      (await stepJobs(skipped.id)).map((s) => s.flow_step_id),
      ["first", "last"],
    );

    const stopped = await preview([
      bash("first", "echo stop-here", {}, { stop_after_if: { expr: "result === 'stop-here'" } }),
      bash("never", "echo never"),
    ]);
    assert.equal(stopped.status, "success");
    assert.equal(stopped.result, "stop-here");
    assert.deepEqual(
      (await stepJobs(stopped.id)).map((s) => s.flow_step_id),
      ["first"],
    );
  });

  it("retry: a failing step is retried by the job retry mechanism before the flow fails", async () => {
    const job = await preview([
      bash("flaky", "exit 1", {}, { retry: { constant: { attempts: 2, seconds: 0 } } }),
    ]);
    assert.equal(job.status, "failure");
    const { rows } = await services.pool.query(
      "SELECT retry_attempt, status FROM job WHERE parent_job_id = $1",
      [job.id],
    );
    assert.deepEqual(rows, [{ retry_attempt: 2, status: "failure" }]);
  });

  /**
   * A flow whose first step fails twice and succeeds on its third attempt, under `retry`. The
   * step's outcome comes from outside its sandbox (each attempt gets a fresh one): a local server
   * that answers "fail" twice, then which hit it is; bash reaches it through /dev/tcp. Answers
   * the flow job and when each attempt reached the server.
   */
  async function failingTwice(retry: Record<string, unknown>) {
    const hits: number[] = [];
    const server = http.createServer((_request, response) => {
      hits.push(performance.now());
      response.end(hits.length < 3 ? "fail" : `ok ${hits.length}`);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const job = await preview([
        bash(
          "flaky",
          [
            'port="$1"',
            'exec 3<>"/dev/tcp/127.0.0.1/$port"',
            "printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3",
            "reply=$(cat <&3)",
            'case "$reply" in *"ok "*) echo "attempt-${reply##*ok }" ;; *) exit 1 ;; esac',
          ].join("\n"),
          { port: String(port) },
          { retry },
        ),
        bash("after", 'p="$1"\necho "after-$p"', { p: "previous_result" }),
      ]);
      assert.equal(job.status, "success", JSON.stringify(job.result));
      assert.equal(job.result, "after-attempt-3");
      assert.equal(hits.length, 3);
      const { rows } = await services.pool.query(
        "SELECT flow_step_id, retry_attempt, status FROM job WHERE parent_job_id = $1 ORDER BY created_at",
        [job.id],
      );
      assert.deepEqual(rows, [
        { flow_step_id: "flaky", retry_attempt: 2, status: "success" },
        { flow_step_id: "after", retry_attempt: 0, status: "success" },
      ]);
      return hits;
    } finally {
      server.close();
    }
  }

  it("retry (constant): a step that fails twice succeeds on its third attempt, and the flow goes on with its result", async () => {
    await failingTwice({ constant: { attempts: 2, seconds: 0 } });
  });

  it("retry (exponential): the attempts wait multiplier × seconds^attempt, then the third succeeds", async () => {
    const [first, second, third] = await failingTwice({
      exponential: { attempts: 2, multiplier: 0.2, seconds: 2 },
    });
    // 0.2 × 2^1 = 0.4 s before the second attempt, 0.2 × 2^2 = 0.8 s before the third.
    assert.ok(second! - first! >= 400, `second attempt after ${second! - first!} ms`);
    assert.ok(third! - second! >= 800, `third attempt after ${third! - second!} ms`);
  });

  it("branchall runs every branch (in turn) and gives the list of their results; whileloopflow stops on its stop_after_if", async () => {
    const all = await preview([
      {
        id: "all",
        value: {
          type: "branchall",
          branches: [
            { modules: [bash("one", "echo one")] },
            { modules: [bash("two", "exit 1")], skip_failure: true },
            { modules: [bash("three", "echo three")] },
          ],
        },
      },
    ]);
    assert.equal(all.status, "success", JSON.stringify(all.result));
    const [one, two, three] = all.result as unknown[];
    assert.equal(one, "one");
    assert.equal((two as { error: { step_id: string } }).error.step_id, "two");
    assert.equal(three, "three");

    const loop = await preview([
      {
        id: "w",
        value: {
          type: "whileloopflow",
          skip_failures: false,
          modules: [bash("count", 'i="$1"\necho "$i"', { i: "flow_input.iter.index" })],
        },
        stop_after_if: { expr: "result === 2" },
      },
      { id: "mocked", value: { type: "identity" }, mock: { enabled: true, return_value: "mock" } },
    ]);
    assert.equal(loop.status, "success", JSON.stringify(loop.result));
    assert.equal(loop.result, "mock");
    assert.deepEqual(
      (await stepJobs(loop.id)).map((s) => s.flow_step_id),
      ["count", "count", "count"],
    );
  });

  it("an expression that throws fails its step with the expression's message", async () => {
    const job = await preview([bash("bad", 'x="$1"\necho "$x"', { x: "flow_input.missing.deep" })]);
    assert.equal(job.status, "failure");
    const error = (job.result as { error: { name: string; message: string; step_id: string } }).error;
    assert.equal(error.step_id, "bad");
    assert.match(error.message, /undefined|missing|deep/);
  });

  it("canceling a running flow cancels its running step and starts nothing after it", async () => {
    const id = await runFlowPreview(services, membership, {
      value: { modules: [bash("slow", "sleep 30\necho late"), bash("never", "echo never")] },
      args: {},
    });
    const deadline = Date.now() + 15_000;
    for (;;) {
      const steps = await stepJobs(id);
      if (steps[0]?.status === "running") break;
      if (Date.now() > deadline) assert.fail("the first step never started");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const canceled = await cancelJob(services, membership, id, "enough");
    assert.equal(canceled.state, "canceled");
    assert.equal((await getJob(services, membership, id)).status, "canceled");
    for (;;) {
      const steps = await stepJobs(id);
      if (steps[0]?.status === "canceled") {
        assert.deepEqual(
          steps.map((s) => s.flow_step_id),
          ["slow"],
        );
        break;
      }
      if (Date.now() > deadline) assert.fail(`the running step was not canceled: ${JSON.stringify(steps)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it("a step whose worker died is failed by the zombie check, and its flow fails at that step", async () => {
    const doomed = await startTestWorker(services.database.url, {
      WORKER_TAGS: "zombietag",
      WORKER_PING_INTERVAL: "1",
    });
    workers.push(doomed);
    const step = bash("stuck", "sleep 30");
    (step.value as Record<string, unknown>).tag = "zombietag";
    const id = await runFlowPreview(services, membership, { value: { modules: [step] }, args: {} });
    const deadline = Date.now() + 15_000;
    while ((await stepJobs(id))[0]?.status !== "running") {
      if (Date.now() > deadline) assert.fail("the step never started");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await doomed.kill9();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const { failed } = await handleZombieJobs(services.pool, services.boss, {
      timeoutSecs: 1,
      restart: false,
    });
    assert.equal(failed.length, 1);
    const flow = await waitForJob(services, membership, id, 10_000);
    assert.equal(flow.status, "failure");
    assert.match(JSON.stringify(flow.result), /ZombieJob.*stuck|stuck.*ZombieJob/);
  });

  it("a script step runs the deployed script by path on its own tag", async () => {
    await deployScript(services, membership, {
      path: "u/t/double",
      language: "bash",
      content: 'n="$1"\necho "$((n * 2))"',
      tag: "flowtag",
    });
    const job = await preview([
      {
        id: "d",
        value: { type: "script", path: "u/t/double", input_transforms: { n: { type: "static", value: 21 } } },
      },
    ]);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.equal(job.result, 42);
    assert.equal((await stepJobs(job.id))[0]!.tag, "flowtag");
  });

  it("REST: Windmill's flow paths deploy, read, run and answer flow jobs with flow_status", async () => {
    const api = await startTestApi(services.database.url, "flows-test-instance-key-0123456789abcdef");
    try {
      const token = await createApiToken(services, membership.principal, { label: "flows" });
      const ws = membership.workspace.id;
      const me = membership.principal.username;
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${api.url}/api/w/${ws}/${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await response.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // plain text answer
        }
        return { status: response.status, body: parsed };
      };
      const path = `u/${me}/rest_flow`;
      const value = { modules: [bash("a", 'x="$1"\necho "hi-$x"', { x: "flow_input.who" })] };
      assert.deepEqual(await call("POST", "flows/create", { path, summary: "rest", value }), {
        status: 201,
        body: path,
      });
      const got = (await call("GET", `flows/get/${path}`)).body as { summary: string; version_id: number };
      assert.equal(got.summary, "rest");
      assert.equal((await call("GET", `flows/exists/${path}`)).body, true);
      assert.equal(((await call("GET", "flows/list")).body as unknown[]).length >= 1, true);
      const stale = await call("POST", `flows/update/${path}`, {
        summary: "x",
        value,
        parent_version: got.version_id - 1,
      });
      assert.equal(stale.status, 409);
      const bad = await call("POST", `flows/update/${path}`, {
        summary: "x",
        value: { modules: [bash("a", "echo"), bash("a", "echo")] },
      });
      assert.equal(bad.status, 400);
      assert.match(JSON.stringify(bad.body), /modules\[1\]\.id/);
      assert.deepEqual(await call("POST", `jobs/run_wait_result/f/${path}`, { who: "rest" }), {
        status: 200,
        body: "hi-rest",
      });
      const id = (await call("POST", `jobs/run/f/${path}`, { who: "again" })).body as string;
      await waitForJob(services, membership, id, 20_000);
      const job = (await call("GET", `jobs_u/get/${id}`)).body as Record<string, unknown>;
      assert.equal(job.job_kind, "flow");
      assert.ok(job.flow_status && job.raw_flow);
      const previewId = (await call("POST", "jobs/run/preview_flow", { value, args: { who: "p" } }))
        .body as string;
      assert.equal((await waitForJob(services, membership, previewId, 20_000)).result, "hi-p");
      assert.equal(((await call("GET", `flows/history/p/${path}`)).body as unknown[]).length, 1);
      assert.equal((await call("POST", `flows/archive/${path}`, { archived: true })).status, 200);
      assert.equal((await call("DELETE", `flows/delete/${path}`)).status, 200);
      assert.equal((await call("GET", `flows/get/${path}`)).status, 404);
    } finally {
      await api.close();
    }
  });
});
