import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  deployScript,
  getResultMaybe,
  runPreview,
  runScriptByPath,
  waitForJob,
  waitForResult,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestWorker, type TestWorker } from "./testing.ts";

let services: TestServices;
let membership: Membership;
let worker: TestWorker;

async function deployAndRun(path: string, language: string, content: string, args: Record<string, unknown>) {
  await deployScript(services, membership, { path, language, content });
  const id = await runScriptByPath(services, membership, path, args);
  return waitForJob(services, membership, id, 30_000);
}

describe("worker runs jobs end to end", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services));
    worker = await startTestWorker(services.database.url, { WORKER_SECRET_FOR_TEST: "worker-only-secret" });
  });
  after(async () => {
    await worker?.stop();
    await services?.close();
  });

  it("bash: positional args, last line as result, output as logs", async () => {
    const job = await deployAndRun(
      "u/x/echo",
      "bash",
      'name="$1"\ncount="$2"\necho "hi $name"\necho "$count"\n',
      {
        name: "ada",
        count: "3",
      },
    );
    assert.equal(job.status, "success", job.logs);
    assert.equal(job.result, 3);
    assert.match(job.logs, /hi ada/);
  });

  it("python3: main(**args) and a returned dict", async () => {
    const job = await deployAndRun(
      "u/x/py",
      "python3",
      "def main(name: str, times: int = 2):\n    print('running')\n    return {'greeting': 'hello ' + name, 'times': times}\n",
      { name: "bob" },
    );
    assert.equal(job.status, "success", job.logs);
    assert.deepEqual(job.result, { greeting: "hello bob", times: 2 });
  });

  // jsonb stores an object's keys shortest first: a result table showed [mid, zeta, alpha].
  it("a list-of-objects result keeps its keys in the order the script wrote them", async () => {
    await deployScript(services, membership, {
      path: "u/x/table",
      language: "python3",
      content:
        "def main():\n    return [{'zeta': 1, 'alpha': 2, 'mid': 3}, {'zeta': 4, 'beta': 5, '__proto__': 6}]\n",
    });
    const id = await runScriptByPath(services, membership, "u/x/table", {});
    const waited = await waitForResult(services, membership, id, 30_000);
    const job = await waitForJob(services, membership, id, 30_000);
    assert.equal(job.status, "success", job.logs);
    const again = await waitForResult(services, membership, id, 30_000);
    const maybe = await getResultMaybe(services, membership, id);
    for (const result of [waited.result, job.result, again.result, maybe.result]) {
      const rows = result as Record<string, unknown>[];
      assert.deepEqual(Object.keys(rows[0]!), ["zeta", "alpha", "mid"]);
      assert.deepEqual(Object.keys(rows[1]!), ["zeta", "beta", "__proto__"]);
      assert.equal(Object.getPrototypeOf(rows[1]), Object.prototype);
    }
    const { rows } = await services.pool.query("SELECT result_columns FROM job WHERE id = $1", [id]);
    assert.deepEqual(rows[0].result_columns, ["zeta", "alpha", "mid", "beta", "__proto__"]);
  });

  it("bun: TypeScript main with typed args", async () => {
    const job = await deployAndRun(
      "u/x/ts",
      "bun",
      "export async function main(a: number, b: number, label: string = 'sum') {\n  return { [label]: a + b };\n}\n",
      { a: 2, b: 40 },
    );
    assert.equal(job.status, "success", job.logs);
    assert.deepEqual(job.result, { sum: 42 });
  });

  it("a script never sees the worker's environment", async () => {
    const job = await deployAndRun("u/x/env", "bash", "env\necho done\n", {});
    assert.equal(job.status, "success", job.logs);
    assert.doesNotMatch(job.logs, /DATABASE_URL/);
    assert.doesNotMatch(job.logs, /worker-only-secret/);
    assert.match(job.logs, /WM_JOB_ID=/);
    assert.match(job.logs, new RegExp(`WM_WORKSPACE=${membership.workspace.id}`));
  });

  it("a main that throws ends as a failure with the error", async () => {
    const job = await deployAndRun(
      "u/x/throws",
      "python3",
      "def main():\n    raise ValueError('bad input here')\n",
      {},
    );
    assert.equal(job.status, "failure");
    const error = (job.result as { error: { name: string; message: string } }).error;
    assert.equal(error.name, "ValueError");
    assert.match(error.message, /bad input here/);
  });

  it("a Python syntax error fails the job with the error, not the worker", async () => {
    const job = await deployAndRun("u/x/syntax", "python3", "def main():\n    x = = 2\n    return x\n", {});
    assert.equal(job.status, "failure");
    assert.match(JSON.stringify(job.result), /SyntaxError/);
  });

  it("a bash script exiting non-zero fails and the worker keeps serving", async () => {
    const failed = await deployAndRun("u/x/exit3", "bash", "echo boom >&2\nexit 3\n", {});
    assert.equal(failed.status, "failure");
    assert.match(JSON.stringify(failed.result), /exit code 3|exited with code 3|3/);
    const next = await deployAndRun("u/x/after", "bash", "echo still-alive\n", {});
    assert.equal(next.result, "still-alive");
  });

  it("a preview run (undeployed code) from the editor", async () => {
    const id = await runPreview(services, membership, {
      language: "bash",
      content: 'x="$1"\necho "preview $x"',
      args: { x: "ok" },
    });
    const job = await waitForJob(services, membership, id, 30_000);
    assert.equal(job.result, "preview ok");
    assert.equal(job.kind, "preview");
  });
});
