// The real `wmill` (npm windmill-cli 1.819, Apache-2.0) against Millrace's REST router with a
// real worker: a flow folder made by `wmill flow new` and filled in wmill's layout (flow.yaml with
// `!inline` step files beside it) is pushed with `wmill flow push`, listed, read and run with
// `wmill flow run`; `wmill sync pull` writes it back in the same layout and `wmill sync push`
// deploys an edit of it as a new version.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createApiToken,
  createFolder,
  createKeyring,
  createWebhookToken,
  deployScript,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import { runWmill, type WmillRun } from "./testing.ts";

const KEY = "wmill-flows-instance-key-0123456789abcdefgh";
const WS = "wmillflows";

describe("the real wmill CLI with flows", () => {
  let services: TestServices;
  let membership: Membership;
  let api: TestApi;
  let worker: TestWorker;
  let token: string;
  let dir: string;

  /** Runs wmill in `cwd`, given the instance, token and workspace. */
  function wmill(args: string[], cwd = dir): Promise<WmillRun> {
    return runWmill(args, { cwd, home: cwd, instance: { url: api.url, token, workspace: WS } });
  }
  async function ok(args: string[], cwd = dir) {
    const run = await wmill(args, cwd);
    assert.equal(run.code, 0, `wmill ${args.join(" ")}:\n${run.output}`);
    return run;
  }

  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, WS));
    const ctx = { ...services, secrets: createKeyring(KEY) };
    await createFolder(ctx, membership, { name: "demo" });
    await deployScript(ctx, membership, {
      path: "f/demo/double",
      language: "python3",
      content: "def main(n: int):\n    return n * 2\n",
    });
    token = await createApiToken(services, membership.principal, { label: "wmill flows" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: api.url,
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-flows-"));
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("wmill flow new, then flow push of the folder in wmill's layout, list, get and run", async () => {
    await ok(["flow", "new", "f/demo/pipeline", "--summary", "Pipeline"]);
    // wmill's default (no wmill.yaml saying nonDottedPaths): a `.flow` folder.
    const folder = path.join(dir, "f/demo/pipeline.flow");
    const flowYaml = fs.readFileSync(path.join(folder, "flow.yaml"), "utf8");
    assert.match(flowYaml, /summary: Pipeline/);
    // The steps, as a developer writes them beside flow.yaml: a loop over a deployed script, a
    // branch, and inline bash and bun steps in their own files.
    fs.writeFileSync(
      path.join(folder, "flow.yaml"),
      flowYaml.replace(
        "modules: []",
        [
          "modules:",
          "    - id: a",
          "      summary: Numbers",
          "      value:",
          "        type: rawscript",
          "        content: '!inline numbers.inline_script.ts'",
          "        language: bun",
          "        input_transforms:",
          "          count:",
          "            type: javascript",
          "            expr: flow_input.count",
          "    - id: b",
          "      value:",
          "        type: forloopflow",
          "        iterator:",
          "          type: javascript",
          "          expr: results.a",
          "        skip_failures: false",
          "        modules:",
          "          - id: c",
          "            value:",
          "              type: script",
          "              path: f/demo/double",
          "              input_transforms:",
          "                n:",
          "                  type: javascript",
          "                  expr: flow_input.iter.value",
          "    - id: d",
          "      value:",
          "        type: branchone",
          "        branches:",
          "          - expr: results.b.length > 2",
          "            modules:",
          "              - id: e",
          "                summary: Big",
          "                value:",
          "                  type: rawscript",
          "                  content: '!inline big.inline_script.sh'",
          "                  language: bash",
          "                  input_transforms:",
          "                    total:",
          "                      type: javascript",
          "                      expr: results.b.reduce((x, y) => x + y, 0)",
          "        default:",
          "          - id: f",
          "            value:",
          "              type: identity",
        ].join("\n"),
      ),
    );
    fs.writeFileSync(
      path.join(folder, "numbers.inline_script.ts"),
      "export function main(count: number) {\n  return Array.from({ length: count }, (_, i) => i + 1);\n}\n",
    );
    fs.writeFileSync(path.join(folder, "big.inline_script.sh"), 'total="$1"\necho "big $total"\n');

    const pushed = await ok(["flow", "push", "f/demo/pipeline.flow", "f/demo/pipeline"]);
    assert.match(pushed.output, /Flow pushed/);
    // A second push of the same folder changes nothing.
    assert.match(
      (await ok(["flow", "push", "f/demo/pipeline.flow", "f/demo/pipeline"])).output,
      /up to date/,
    );

    const listed = JSON.parse((await ok(["flow", "list", "--json"])).stdout) as {
      path: string;
      summary: string;
    }[];
    assert.deepEqual(
      listed.map((f) => [f.path, f.summary]),
      [["f/demo/pipeline", "Pipeline"]],
    );
    const got = JSON.parse((await ok(["flow", "get", "f/demo/pipeline", "--json"])).stdout) as {
      path: string;
      value: { modules: { id: string; value: { content?: string } }[] };
    };
    assert.equal(got.path, "f/demo/pipeline");
    assert.match(got.value.modules[0]!.value.content ?? "", /Array\.from/);
    const shown = await ok(["flow", "get", "f/demo/pipeline"]);
    assert.match(shown.output, /b: forloopflow/);

    const run = await ok(["flow", "run", "f/demo/pipeline", "-d", '{"count": 3}', "-s"]);
    assert.equal(JSON.parse(run.stdout.trim().split("\n").pop()!), "big 12");
    const small = await ok(["flow", "run", "f/demo/pipeline", "-d", '{"count": 2}', "-s"]);
    assert.deepEqual(JSON.parse(small.stdout.trim().split("\n").pop()!), [2, 4]);
  });

  it("a flow's webhook token runs it over REST (async and waiting for the result) and nothing else", async () => {
    const hook = await createWebhookToken(services, membership, { path: "f/demo/pipeline", label: "ci" });
    const post = (route: string, body: unknown) =>
      fetch(`${api.url}/api/w/${WS}/${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${hook}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const waited = await post("jobs/run_wait_result/f/f/demo/pipeline", { count: 3 });
    assert.equal(waited.status, 200, await waited.clone().text());
    assert.equal(await waited.json(), "big 12");
    const started = await post("jobs/run/f/f/demo/pipeline", { count: 1 });
    assert.equal(started.status, 201);
    const id = await started.text();
    const { rows } = await services.pool.query("SELECT trigger_kind, kind FROM job WHERE id = $1", [id]);
    assert.deepEqual(rows[0], { trigger_kind: "webhook", kind: "flow" });
    assert.equal((await post("jobs/run/p/f/demo/double", { n: 1 })).status, 403);
    const read = await fetch(`${api.url}/api/w/${WS}/flows/get/f/demo/pipeline`, {
      headers: { authorization: `Bearer ${hook}` },
    });
    assert.equal(read.status, 403);
  });

  it("wmill sync pull writes the flow as a __flow folder with its step files; sync push deploys an edit as a new version", async () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-flows-repo-"));
    try {
      fs.writeFileSync(
        path.join(repo, "wmill.yaml"),
        "defaultTs: bun\nincludes:\n  - f/**\nexcludes: []\nnonDottedPaths: true\nsyncBehavior: v1\n",
      );
      await ok(["sync", "pull", "--yes", "--skip-branch-validation"], repo);
      const folder = path.join(repo, "f/demo/pipeline__flow");
      assert.deepEqual(fs.readdirSync(folder).sort(), ["big.sh", "flow.yaml", "numbers.ts"]);
      assert.match(fs.readFileSync(path.join(folder, "flow.yaml"), "utf8"), /content: '!inline numbers\.ts'/);

      // A pull right after is a no-op: the files are exactly what Millrace would write.
      const again = await ok(["sync", "pull", "--yes", "--skip-branch-validation", "--dry-run"], repo);
      assert.match(again.output, /0 changes to apply/);

      fs.writeFileSync(path.join(folder, "big.sh"), 'total="$1"\necho "large $total"\n');
      const pushed = await ok(["sync", "push", "--yes", "--skip-branch-validation"], repo);
      assert.match(pushed.output, /f\/demo\/pipeline/);
      const { rows } = await services.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM flow_version WHERE workspace_id = $1 AND path = 'f/demo/pipeline'",
        [WS],
      );
      assert.equal(rows[0]!.n, 2);
      const run = await ok(["flow", "run", "f/demo/pipeline", "-d", '{"count": 4}', "-s"], repo);
      assert.equal(JSON.parse(run.stdout.trim().split("\n").pop()!), "large 20");

      // The two versions, and the first one as it was.
      const history = JSON.parse(
        (await ok(["flow", "history", "f/demo/pipeline", "--json"], repo)).stdout,
      ) as {
        id: number;
      }[];
      assert.equal(history.length, 2);
      const first = JSON.parse(
        (await ok(["flow", "show-version", "f/demo/pipeline", String(history[1]!.id), "--json"], repo))
          .stdout,
      ) as {
        path: string;
        value: { modules: { value: { branches?: { modules: { value: { content: string } }[] }[] } }[] };
      };
      assert.equal(first.path, "f/demo/pipeline");
      assert.match(first.value.modules[2]!.value.branches![0]!.modules[0]!.value.content, /echo "big/);

      // A flow folder removed from the repository is deleted by the next push.
      fs.rmSync(folder, { recursive: true });
      await ok(["sync", "push", "--yes", "--skip-branch-validation"], repo);
      const { rows: left } = await services.pool.query("SELECT 1 FROM flow WHERE workspace_id = $1", [WS]);
      assert.equal(left.length, 0);
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });
});
