// The real `wmill generate-metadata` (npm windmill-cli 1.819) on a flow folder against Millrace
// with a real worker: it asks jobs/run/flow_dependencies_async for the flow's locks, polls the
// job and writes each inline step's lock beside flow.yaml (packages/core/src/flows/dependencies.ts,
// apps/worker/src/job-flow-dependencies.ts). The python step's requirements come from a local
// package index, as in apps/worker/src/dependencies.int.test.ts.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiToken, createFolder, createKeyring, type Membership } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import { buildWheel, serveIndex } from "../../../packages/runtime/src/deps/testing.ts";
import { runWmill, type WmillRun } from "./testing.ts";

const KEY = "wmill-flow-locks-instance-key-0123456789abc";
const WS = "wmillflowlocks";

const FLOW_YAML = `summary: Locks
description: ''
value:
  modules:
    - id: greet
      value:
        type: rawscript
        content: '!inline greet.inline_script.py'
        language: python3
        input_transforms: {}
    - id: loop
      value:
        type: forloopflow
        iterator:
          type: javascript
          expr: '[1, 2]'
        skip_failures: false
        modules:
          - id: shout
            value:
              type: rawscript
              content: '!inline shout.inline_script.sh'
              language: bash
              input_transforms: {}
schema:
  type: object
  properties: {}
  required: []
`;

describe("wmill generate-metadata on a flow folder (flow_dependencies_async)", () => {
  let services: TestServices;
  let membership: Membership;
  let api: TestApi;
  let worker: TestWorker;
  let token: string;
  let scratch: string;
  let index: Awaited<ReturnType<typeof serveIndex>>;

  function wmill(args: string[], cwd: string): Promise<WmillRun> {
    return runWmill(args, { cwd, home: scratch, instance: { url: api.url, token, workspace: WS } });
  }

  before(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-flow-locks-"));
    fs.chmodSync(scratch, 0o755);
    const wheels = path.join(scratch, "wheels");
    fs.mkdirSync(wheels);
    buildWheel(
      wheels,
      "millrace-greet",
      "1.0.0",
      "millrace_greet",
      'def greet(n):\n    return "hello " + n\n',
    );
    index = await serveIndex(wheels);
    services = await createTestServices();
    ({ membership } = await createTestMember(services, WS));
    const ctx = { ...services, secrets: createKeyring(KEY) };
    await createFolder(ctx, membership, { name: "demo" });
    token = await createApiToken(services, membership.principal, { label: "wmill flow locks" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: api.url,
      PIP_INDEX_URL: index.url,
      DEPENDENCY_CACHE_DIR: path.join(scratch, "deps-cache"),
    });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    await index?.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it("writes the python step's lock from the worker's resolution and an empty lock for the bash step", async () => {
    const repo = path.join(scratch, "repo");
    const folder = path.join(repo, "f/demo/locks.flow");
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, "flow.yaml"), FLOW_YAML);
    fs.writeFileSync(
      path.join(folder, "greet.inline_script.py"),
      "# requirements:\n#millrace-greet==1.0.0\nimport millrace_greet\n\ndef main():\n    return millrace_greet.greet('flow')\n",
    );
    fs.writeFileSync(path.join(folder, "shout.inline_script.sh"), 'echo "shout"\n');

    const run = await wmill(["generate-metadata", "--yes"], repo);
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /f\/demo\/locks/);
    assert.doesNotMatch(run.output, /Failed to (queue|poll|generate)/);

    const { rows } = await services.pool.query<{ kind: string; status: string; result: unknown }>(
      "SELECT kind, status, result FROM job WHERE workspace_id = $1 AND kind = 'flowdependencies'",
      [WS],
    );
    assert.equal(rows.length, 1, "one flowdependencies job");
    assert.equal(rows[0]!.status, "success", JSON.stringify(rows[0]!.result));

    const flowYaml = fs.readFileSync(path.join(folder, "flow.yaml"), "utf8");
    const files = fs.readdirSync(folder).sort();
    const lockFiles = files.filter((name) => name.endsWith(".lock"));
    const greetLock = lockFiles.find((name) => name.startsWith("greet"));
    assert.ok(greetLock, `a lock file for step greet: ${files.join(", ")}\n${flowYaml}`);
    assert.equal(fs.readFileSync(path.join(folder, greetLock), "utf8").trim(), "millrace-greet==1.0.0");
    assert.match(flowYaml, new RegExp(`lock: '?!inline ${greetLock.replace(".", "\\.")}'?`));
    // The bash step: lock "" (nothing to lock, no lock file).
    assert.equal(
      lockFiles.some((name) => name.startsWith("shout")),
      false,
      files.join(", "),
    );
    assert.match(flowYaml, /lock: ["']{2}/, flowYaml);
    // The steps' code stays in their files.
    assert.match(flowYaml, /content: '?!inline greet\.inline_script\.py'?/);
    assert.match(flowYaml, /content: '?!inline shout\.inline_script\.sh'?/);

    // Up to date afterwards: a second run starts no other job.
    const again = await wmill(["generate-metadata", "--yes"], repo);
    assert.equal(again.code, 0, again.output);
    const { rows: after } = await services.pool.query(
      "SELECT id FROM job WHERE workspace_id = $1 AND kind = 'flowdependencies'",
      [WS],
    );
    assert.equal(after.length, 1, again.output);
  });
});
