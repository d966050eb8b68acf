// docs/moving-from-windmill.md, step by step, with the real clients (npm windmill-cli 1.819 and
// windmill-client 1.818) against a live Millrace and a real worker: `wmill workspace add` points
// wmill at Millrace, `wmill sync push` deploys a repository in wmill's layout, `wmill script run`
// runs a pushed script, and existing windmill-client code calls Millrace after `setClient`.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiToken, createKeyring, createUser, createWorkspace, principalOf } from "@millrace/core";
import { createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import * as wmillClient from "windmill-client";
import { runWmill, type WmillRun } from "./testing.ts";

const KEY = "wmill-moving-instance-key-0123456789abcdefg";
const WS = "moving";

describe("moving from Windmill: wmill and windmill-client against Millrace", () => {
  let services: TestServices;
  let api: TestApi;
  let worker: TestWorker;
  let token: string;
  let home: string;
  let repo: string;

  /** wmill as a developer runs it: no instance flags, its profile from `workspace add`. */
  function wmill(args: string[], cwd = repo): Promise<WmillRun> {
    return runWmill(args, { cwd, home });
  }
  async function ok(args: string[], cwd = repo) {
    const run = await wmill(args, cwd);
    assert.equal(run.code, 0, `wmill ${args.join(" ")}:\n${run.output}`);
    return run;
  }
  function write(file: string, content: string) {
    fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    fs.writeFileSync(path.join(repo, file), content);
  }

  before(async () => {
    services = await createTestServices();
    const ctx = { ...services, secrets: createKeyring(KEY) };
    const admin = await createUser(ctx, { email: "lead@example.com", password: "moving-password-1" });
    await createWorkspace(ctx, principalOf(admin), { id: WS, name: "Moving" });
    token = await createApiToken(services, principalOf(admin), { label: "moving from windmill" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: api.url,
    });
    home = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-moving-"));
    repo = path.join(home, "repo");
    fs.mkdirSync(repo);
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it("workspace add, sync push of a repository, script run, and windmill-client from Node", async () => {
    // 1. Point wmill at Millrace: a profile named millrace for workspace `moving`.
    await ok(["workspace", "add", "millrace", WS, `${api.url}/`, "--token", token]);
    assert.match((await ok(["workspace", "whoami"])).output, /lead/);

    // 2. A repository in wmill's layout, as `wmill sync pull` leaves it on Windmill.
    write(
      "wmill.yaml",
      "defaultTs: bun\nincludes:\n  - f/**\nexcludes: []\nnonDottedPaths: true\nsyncBehavior: v1\nincludeSchedules: true\n",
    );
    write(
      "f/demo/folder.meta.yaml",
      "summary: Demo\ndisplay_name: demo\nowners:\n  - u/lead\nextra_perms: {}\n",
    );
    write("f/demo/hello.py", 'def main(name: str = "world"):\n    return f"hello {name}"\n');
    write(
      "f/demo/hello.script.yaml",
      [
        "summary: Hello",
        "description: ''",
        "lock: ''",
        "kind: script",
        "schema:",
        "  $schema: 'https://json-schema.org/draft/2020-12/schema'",
        "  type: object",
        "  properties:",
        "    name:",
        "      type: string",
        "      default: world",
        "      description: ''",
        "  required: []",
        "",
      ].join("\n"),
    );
    write("f/demo/greeting.variable.yaml", "value: Bonjour\nis_secret: false\ndescription: A greeting\n");
    write(
      "f/demo/nightly.schedule.yaml",
      [
        "schedule: 0 0 3 * * *",
        "timezone: UTC",
        "script_path: f/demo/hello",
        "is_flow: false",
        "args:",
        "  name: night",
        "enabled: false",
        "",
      ].join("\n"),
    );
    // wmill asks for fresh metadata (schemas, locks) before a push: Millrace's dependency jobs make it.
    await ok(["generate-metadata", "--yes"]);
    const pushed = await ok(["sync", "push", "--yes", "--skip-branch-validation"]);
    assert.match(pushed.output, /\+ schedule f\/demo\/nightly/);
    const schedule = await fetch(`${api.url}/api/w/${WS}/schedules/get/f/demo/nightly`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(schedule.status, 200);
    assert.equal(((await schedule.json()) as { script_path: string }).script_path, "f/demo/hello");
    // A second push has nothing to do.
    const again = await ok(["sync", "push", "--yes", "--skip-branch-validation"]);
    assert.doesNotMatch(again.output, /^[+~-] /m, again.output);

    // 3. Run the pushed script with wmill.
    const run = await ok(["script", "run", "f/demo/hello", "-d", '{"name":"Millrace"}']);
    assert.match(run.stdout, /hello Millrace/);

    // 4. Existing windmill-client code, pointed at Millrace.
    wmillClient.setClient(token, api.url);
    process.env.WM_WORKSPACE = WS;
    try {
      assert.equal(await wmillClient.runScriptByPath("f/demo/hello", { name: "client" }), "hello client");
      assert.equal(await wmillClient.getVariable("f/demo/greeting"), "Bonjour");
      const id = await wmillClient.runScriptByPathAsync("f/demo/hello", { name: "later" });
      assert.equal(await wmillClient.waitJob(id), "hello later");
    } finally {
      delete process.env.WM_WORKSPACE;
    }
  });
});
