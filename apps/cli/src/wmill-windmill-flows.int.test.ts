// Issue 35 items 1–3: flows written the way Windmill's own tooling writes them (flow.yaml with
// `!inline` step files and locks beside it, `parallelism: 4`, steps without input_transforms or
// id, old `windmill@1-1` expressions, calls of hub scripts) pushed with the real `wmill` 1.819 to
// Millrace and run by a real worker. Nothing here is rewritten into Millrace's preferred form.
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

const KEY = "wmill-windmill-flows-instance-key-0123456789";
const WS = "wmillwindmillflows";
const WMILL_YAML =
  "defaultTs: bun\nincludes:\n  - f/**\nexcludes: []\nnonDottedPaths: true\nsyncBehavior: v1\n";

// A bun lock as Windmill writes it: the package.json it resolved, `//bun.lock`, then bun.lock.
const WINDMILL_BUN_LOCK = `{
  "dependencies": {
    "is-odd": "3.0.1"
  }
}
//bun.lock
{
  "lockfileVersion": 1,
  "workspaces": {
    "": {
      "dependencies": {
        "is-odd": "3.0.1",
      },
    },
  },
  "packages": {
    "is-number": ["is-number@6.0.0", "", {}, "sha512-Wu1VHeILBK8KAWJUAiSZQX94GmOE45Rg6/538fKwiloUu21KncEkYGPqob2oSZ5mUT73vLGrHQjKw3KMPwfDzg=="],

    "is-odd": ["is-odd@3.0.1", "", { "dependencies": { "is-number": "^6.0.0" } }, "sha512-CQpnWPrDwmP1+SMHXZhtLtJv90yiyVfluGsX5iNCVkrhQtU3TQHsUWPG9wkdk9Lgd5yNpAg9jQEo90CBaXgWMA=="],
  }
}
`;

// A step with no npm imports: Windmill's lock is an empty package.json and an empty bun.lock.
const WINDMILL_EMPTY_BUN_LOCK = `{}
//bun.lock
{
  "lockfileVersion": 1,
  "workspaces": {
    "": {},
  },
  "packages": {},
}
`;

// A deno step's lock: deno.lock itself (version 4).
const WINDMILL_DENO_LOCK = `{
  "version": "4",
  "specifiers": {
    "npm:is-odd@3.0.1": "3.0.1"
  },
  "npm": {
    "is-number@6.0.0": {
      "integrity": "sha512-Wu1VHeILBK8KAWJUAiSZQX94GmOE45Rg6/538fKwiloUu21KncEkYGPqob2oSZ5mUT73vLGrHQjKw3KMPwfDzg=="
    },
    "is-odd@3.0.1": {
      "integrity": "sha512-CQpnWPrDwmP1+SMHXZhtLtJv90yiyVfluGsX5iNCVkrhQtU3TQHsUWPG9wkdk9Lgd5yNpAg9jQEo90CBaXgWMA==",
      "dependencies": [
        "is-number"
      ]
    }
  }
}
`;

const LOCKS_FLOW = `summary: Windmill locks
description: ''
value:
  modules:
    - id: greet
      value:
        type: rawscript
        content: '!inline greet.py'
        language: python3
        lock: '!inline greet.lock'
        input_transforms: {}
    - id: odd
      value:
        type: rawscript
        content: '!inline odd.ts'
        language: bun
        lock: '!inline odd.lock'
        input_transforms: {}
    - id: plain
      value:
        type: rawscript
        content: '!inline plain.ts'
        language: bun
        lock: '!inline plain.lock'
        input_transforms: {}
    - id: dn
      value:
        type: rawscript
        content: '!inline dn.deno.ts'
        language: deno
        lock: '!inline dn.lock'
        input_transforms:
          previous:
            type: javascript
            expr: '[results.greet, results.odd, results.plain]'
schema:
  type: object
  properties: {}
  required: []
`;

// Shapes Windmill's CLI and older Windmill versions write: a plain-number parallelism, steps with
// no input_transforms (and one with no id), an expression in the `windmill@1-1` form.
const SHAPES_FLOW = `summary: Windmill shapes
description: ''
value:
  modules:
    - id: numbers
      value:
        type: rawscript
        content: '!inline numbers.ts'
        language: bun
        input_transforms:
          n:
            type: javascript
            expr: |-
              import { previous_result, flow_input } from 'windmill@1-1'

              flow_input.n
    - id: loop
      value:
        type: forloopflow
        iterator:
          type: javascript
          expr: results.numbers
        parallel: true
        parallelism: 4
        skip_failures: false
        modules:
          - id: square
            value:
              type: rawscript
              content: '!inline square.ts'
              language: bun
              input_transforms:
                x:
                  type: javascript
                  expr: flow_input.iter.value
    - value:
        type: rawscript
        content: '!inline total.ts'
        language: bun
schema:
  type: object
  properties:
    n:
      type: number
  required: []
`;

const HUB_FLOW = `summary: Calls the hub
description: ''
value:
  modules:
    - id: first
      value:
        type: rawscript
        content: '!inline first.sh'
        language: bash
        input_transforms: {}
    - id: notify
      value:
        type: script
        path: hub/2359/slack/send_message_to_channel
        input_transforms:
          text:
            type: static
            value: hello
schema:
  type: object
  properties: {}
  required: []
`;

const MISSING_FLOW = `summary: Calls a script not deployed yet
description: ''
value:
  modules:
    - id: later
      value:
        type: script
        path: f/demo/not_yet
        input_transforms: {}
schema:
  type: object
  properties: {}
  required: []
`;

const SAME_WORKER_FLOW = `summary: Shares ./shared
description: ''
value:
  same_worker: true
  modules:
    - id: write
      value:
        type: rawscript
        content: '!inline write.sh'
        language: bash
        input_transforms: {}
    - id: read
      value:
        type: rawscript
        content: '!inline read.py'
        language: python3
        input_transforms: {}
schema:
  type: object
  properties: {}
  required: []
`;

const PREPROCESSOR_FLOW = `summary: Preprocessed
description: ''
value:
  modules:
    - id: hello
      value:
        type: rawscript
        content: '!inline hello.ts'
        language: bun
        input_transforms:
          name:
            type: javascript
            expr: flow_input.name
          via:
            type: javascript
            expr: flow_input.via
  preprocessor_module:
    id: preprocessor
    value:
      type: rawscript
      content: '!inline preprocessor.ts'
      language: bun
      input_transforms: {}
schema:
  type: object
  properties:
    name:
      type: string
    via:
      type: string
  required: []
`;

const FAILURE_FLOW = `summary: Handles its failure
description: ''
value:
  modules:
    - id: boom
      value:
        type: rawscript
        content: '!inline boom.py'
        language: python3
        input_transforms: {}
  failure_module:
    id: failure
    value:
      type: rawscript
      content: '!inline failure.ts'
      language: bun
      input_transforms:
        message:
          type: javascript
          expr: error.message
        name:
          type: javascript
          expr: error.name
        step_id:
          type: javascript
          expr: error.step_id
        previous:
          type: javascript
          expr: previous_result.error.name
schema:
  type: object
  properties: {}
  required: []
`;

describe("flows as Windmill writes them, through the real wmill", () => {
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
  async function ok(args: string[], cwd: string) {
    const run = await wmill(args, cwd);
    assert.equal(run.code, 0, `wmill ${args.join(" ")}:\n${run.output}`);
    return run;
  }
  /** A repository in wmill's layout: `files` relative to it. */
  function repo(name: string, files: Record<string, string>): string {
    const dir = path.join(scratch, name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "wmill.yaml"), WMILL_YAML);
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    }
    return dir;
  }
  async function runFlow(flowPath: string, args: unknown, query = "") {
    const response = await fetch(`${api.url}/api/w/${WS}/jobs/run_wait_result/f/${flowPath}${query}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(args),
    });
    return { status: response.status, body: (await response.json()) as unknown };
  }
  async function versions(flowPath: string): Promise<number> {
    const { rows } = await services.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM flow_version WHERE workspace_id = $1 AND path = $2",
      [WS, flowPath],
    );
    return rows[0]!.n;
  }

  before(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-windmill-flows-"));
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
    token = await createApiToken(services, membership.principal, { label: "wmill windmill flows" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: api.url,
      PIP_INDEX_URL: index.url,
      DEPENDENCY_CACHE_DIR: path.join(scratch, "deps-cache"),
      NUM_WORKERS: "2",
    });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    await index?.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it("item 1: steps with Windmill's lock texts run (python pins, bun package.json + bun.lock, deno.lock) and a list-form script lock is accepted", async () => {
    const dir = repo("locks", {
      "f/demo/locks__flow/flow.yaml": LOCKS_FLOW,
      "f/demo/locks__flow/greet.py":
        "import millrace_greet\n\ndef main():\n    return millrace_greet.greet('flow')\n",
      // Windmill's python lock: a header naming the interpreter, then the pins.
      "f/demo/locks__flow/greet.lock": "# py: 3.11\nmillrace-greet==1.0.0\n",
      "f/demo/locks__flow/odd.ts":
        'import isOdd from "is-odd";\n\nexport async function main() {\n  return isOdd(3);\n}\n',
      "f/demo/locks__flow/odd.lock": WINDMILL_BUN_LOCK,
      "f/demo/locks__flow/plain.ts": 'export async function main() {\n  return "plain";\n}\n',
      "f/demo/locks__flow/plain.lock": WINDMILL_EMPTY_BUN_LOCK,
      "f/demo/locks__flow/dn.deno.ts":
        'export async function main(previous: unknown[]) {\n  return [...previous, "deno"];\n}\n',
      "f/demo/locks__flow/dn.lock": WINDMILL_DENO_LOCK,
      // A script whose lock is in the list form older wmill versions wrote in script.yaml.
      "f/demo/pinned.py":
        "# requirements:\n# millrace-greet==1.0.0\nimport millrace_greet\n\ndef main():\n    return millrace_greet.greet('script')\n",
      "f/demo/pinned.script.yaml":
        "summary: Pinned\ndescription: ''\nlock:\n  - millrace-greet==1.0.0\nkind: script\nschema:\n  type: object\n  properties: {}\n  required: []\n",
    });
    await ok(["sync", "push", "--yes", "--skip-branch-validation"], dir);
    const { rows: scripts } = await services.pool.query(
      "SELECT path FROM script WHERE workspace_id = $1 AND path = 'f/demo/pinned'",
      [WS],
    );
    assert.equal(scripts.length, 1, "the script with a list-form lock was deployed");
    const run = await runFlow("f/demo/locks", {});
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.deepEqual(run.body, ["hello flow", true, "plain", "deno"]);
    // The flow's locks read back unchanged: a second push of the flow has nothing to do.
    const again = await ok(["sync", "push", "--yes", "--skip-branch-validation", "--skip-scripts"], dir);
    assert.match(again.output, /0 changes|Nothing to push|No changes/i, again.output);
    assert.equal(await versions("f/demo/locks"), 1);
  });

  it("item 2: Windmill's shapes deploy and run; hub and undeployed scripts deploy with a warning and fail at run time; a second push is a no-op", async () => {
    const dir = repo("shapes", {
      "f/demo/shapes__flow/flow.yaml": SHAPES_FLOW,
      "f/demo/shapes__flow/numbers.ts":
        "export async function main(n: number) {\n  return Array.from({ length: n }, (_, i) => i + 1);\n}\n",
      "f/demo/shapes__flow/square.ts": "export async function main(x: number) {\n  return x * x;\n}\n",
      // No input_transforms: the step gets no arguments, as in Windmill.
      "f/demo/shapes__flow/total.ts": "export async function main(label = 'total') {\n  return label;\n}\n",
      "f/demo/hub__flow/flow.yaml": HUB_FLOW,
      "f/demo/hub__flow/first.sh": 'echo "first"\n',
      "f/demo/missing__flow/flow.yaml": MISSING_FLOW,
      "f/demo/other.sh": 'echo "other"\n',
      "f/demo/other.script.yaml":
        "summary: Other\ndescription: ''\nlock: ''\nkind: script\nschema:\n  type: object\n  properties: {}\n  required: []\n",
    });
    const pushed = await ok(["sync", "push", "--yes", "--skip-branch-validation"], dir);
    for (const flowPath of ["f/demo/shapes", "f/demo/hub", "f/demo/missing"]) {
      assert.equal(await versions(flowPath), 1, `${flowPath} deployed:\n${pushed.output}`);
    }
    const { rows: other } = await services.pool.query(
      "SELECT 1 FROM script WHERE workspace_id = $1 AND path = 'f/demo/other'",
      [WS],
    );
    assert.equal(other.length, 1, "the rest of the push went through");

    const shapes = await runFlow("f/demo/shapes", { n: 3 });
    assert.equal(shapes.status, 200, JSON.stringify(shapes.body));
    assert.equal(shapes.body, "total");
    const { rows: squares } = await services.pool.query<{ result: unknown }>(
      `SELECT result FROM job WHERE workspace_id = $1 AND kind = 'flow' AND flow_step_id = 'loop' ORDER BY created_at`,
      [WS],
    );
    // The parallel iterations (parallelism: 4 read as a static 4), in whatever order they ended.
    assert.deepEqual(squares.map((row) => row.result).sort(), [1, 4, 9]);

    // The deploy says what will fail: the REST answer of an update carries the warnings.
    const update = await fetch(`${api.url}/api/w/${WS}/flows/get/f/demo/hub`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const stored = (await update.json()) as Record<string, unknown>;
    const redeploy = await fetch(`${api.url}/api/w/${WS}/flows/update/f/demo/hub`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        path: "f/demo/hub",
        summary: stored.summary,
        value: stored.value,
        schema: stored.schema,
      }),
    });
    assert.equal(redeploy.status, 200);
    const warning = redeploy.headers.get("x-millrace-warnings") ?? "";
    assert.match(decodeURIComponent(warning), /hub\/2359\/slack\/send_message_to_channel/);

    const hub = await runFlow("f/demo/hub", {});
    assert.equal(hub.status, 500);
    assert.match(JSON.stringify(hub.body), /hub scripts need the hub; this instance has none/);
    assert.match(JSON.stringify(hub.body), /"step_id":"notify"/);
    const missing = await runFlow("f/demo/missing", {});
    assert.equal(missing.status, 500);
    assert.match(JSON.stringify(missing.body), /script f\/demo\/not_yet not found/);

    // What is stored reads back as the files say: a second push changes nothing.
    const again = await ok(["sync", "push", "--yes", "--skip-branch-validation"], dir);
    assert.match(again.output, /0 changes|Nothing to push|No changes/i, again.output);
    // The redeploy above sent the flow as stored: no new version either (flows/store.ts).
    for (const flowPath of ["f/demo/shapes", "f/demo/hub", "f/demo/missing"]) {
      assert.equal(await versions(flowPath), 1, flowPath);
    }
  });

  it("item 3: same_worker shares ./shared, the preprocessor makes the flow's args from the trigger, the failure module reads error.message/name/step_id", async () => {
    const dir = repo("behaviours", {
      "f/demo/shared__flow/flow.yaml": SAME_WORKER_FLOW,
      "f/demo/shared__flow/write.sh": 'echo "from the first step" > ./shared/note.txt\necho written\n',
      "f/demo/shared__flow/read.py":
        "def main():\n    with open('./shared/note.txt') as f:\n        return f.read().strip()\n",
      "f/demo/pre__flow/flow.yaml": PREPROCESSOR_FLOW,
      "f/demo/pre__flow/hello.ts":
        "export async function main(name: string, via: string) {\n  return `hello ${name} via ${via}`;\n}\n",
      "f/demo/pre__flow/preprocessor.ts": [
        "export async function preprocessor(event: {",
        "  kind: 'webhook' | 'http';",
        "  body: any;",
        "  query: Record<string, string>;",
        "}) {",
        "  return { name: String(event.body.who).toUpperCase(), via: `${event.kind}/${event.query.from}` };",
        "}",
        "",
      ].join("\n"),
      "f/demo/failing__flow/flow.yaml": FAILURE_FLOW,
      "f/demo/failing__flow/boom.py": "def main():\n    raise ValueError('it broke')\n",
      "f/demo/failing__flow/failure.ts":
        "export async function main(message: string, name: string, step_id: string, previous: string) {\n  return { message, name, step_id, previous };\n}\n",
    });
    await ok(["sync", "push", "--yes", "--skip-branch-validation"], dir);

    const shared = await runFlow("f/demo/shared", {});
    assert.equal(shared.status, 200, JSON.stringify(shared.body));
    assert.equal(shared.body, "from the first step");

    const pre = await runFlow("f/demo/pre", { who: "ada" }, "?from=ci");
    assert.equal(pre.status, 200, JSON.stringify(pre.body));
    assert.equal(pre.body, "hello ADA via webhook/ci");
    // Run from the UI (skip_preprocessor), the body is the flow's args as they are.
    const direct = await runFlow("f/demo/pre", { name: "bob", via: "ui" }, "?skip_preprocessor=true");
    assert.equal(direct.body, "hello bob via ui");

    const failing = await runFlow("f/demo/failing", {});
    assert.equal(failing.status, 500, JSON.stringify(failing.body));
    const { rows } = await services.pool.query<{ result: unknown }>(
      "SELECT result FROM job WHERE workspace_id = $1 AND flow_step_id = 'failure'",
      [WS],
    );
    assert.equal(rows.length, 1);
    const handled = rows[0]!.result as Record<string, string>;
    assert.match(handled.message ?? "", /it broke/);
    assert.equal(handled.name, "ValueError");
    assert.equal(handled.step_id, "boom");
    assert.equal(handled.previous, "ValueError");
  });
});
