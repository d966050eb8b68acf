// The CLI's REST commands as a user runs them (child processes of the real `millrace`) against the
// real REST router and a real worker: workspace add/list/switch, script run (live log, result,
// exit 1 on failure), job list with its filters; and the exit codes on bad input.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiToken, deployScript, type Membership } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import { runCli, type CliRun } from "./testing.ts";

const KEY = "cli-test-instance-key-0123456789abcdefgh";

let dir: string;

function cli(...args: string[]): Promise<CliRun> {
  return cliWith({}, ...args);
}

/** The CLI with this file's saved workspaces (one config file shared by the calls of a test). */
function cliWith(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return runCli(args, { HOME: dir, MILLRACE_CONFIG: path.join(dir, "config.json"), ...env });
}

let services: TestServices;
let membership: Membership;
let api: TestApi;
let worker: TestWorker;
let token: string;

describe("millrace CLI over REST", () => {
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-cli-test-"));
    services = await createTestServices();
    ({ membership } = await createTestMember(services, "clitest"));
    token = await createApiToken(services, membership.principal, { label: "cli test" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, { BASE_URL: api.url, MILLRACE_SECRET_KEY: KEY });
    const me = membership.principal.username;
    await deployScript(services, membership, {
      path: `u/${me}/hello`,
      language: "bash",
      content:
        'name="$1"\necho "step one"\nsleep 1\necho "hello $name"\necho "{\\"greeting\\": \\"hi $name\\"}" > result.json',
    });
    await deployScript(services, membership, {
      path: `u/${me}/broken`,
      language: "bash",
      content: 'echo "going down"\nexit 4',
    });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("exit codes: unknown command 2, bad -d 2, unreachable 7, bad token 3, unknown workspace 4, no database 7, wrong password 3", async () => {
    const unknown = await cli("frobnicate");
    assert.equal(unknown.code, 2, unknown.stderr);
    const badJson = await cli(
      "--url",
      api.url,
      "--token",
      token,
      "-w",
      "clitest",
      "script",
      "run",
      "u/x/y",
      "-d",
      "{nope",
    );
    assert.equal(badJson.code, 2, badJson.stderr);
    assert.match(badJson.stderr, /-d is not valid JSON/);
    const unreachable = await cli("--url", "http://127.0.0.1:9", "-w", "clitest", "job", "list");
    assert.equal(unreachable.code, 7, unreachable.stderr);
    assert.match(unreachable.stderr, /cannot reach/);
    const badToken = await cli("--url", api.url, "--token", "not-a-token", "-w", "clitest", "job", "list");
    assert.equal(badToken.code, 3, badToken.stderr);
    const addBad = await cli("--token", "not-a-token", "workspace", "add", "x", "clitest", api.url);
    assert.equal(addBad.code, 3, addBad.stderr);
    assert.equal(fs.existsSync(path.join(dir, "config.json")), false, "nothing saved for a bad token");
    const noSuch = await cli("workspace", "switch", "nope");
    assert.equal(noSuch.code, 4, noSuch.stderr);
    // Backups talk to PostgreSQL: nothing listening is 7, a wrong password 3.
    const noDatabase = await cliWith(
      { DATABASE_URL: "postgresql://postgres:x@127.0.0.1:9/millrace" },
      "backup",
      "create",
      "--out",
      path.join(dir, "never.backup"),
    );
    assert.equal(noDatabase.code, 7, noDatabase.stderr);
    assert.match(noDatabase.stderr, /DATABASE_URL/);
    const wrongPassword = new URL(services.database.url);
    wrongPassword.password = "wrong";
    const badPassword = await cliWith(
      { DATABASE_URL: wrongPassword.toString() },
      "backup",
      "create",
      "--out",
      path.join(dir, "never.backup"),
    );
    assert.equal(badPassword.code, 3, badPassword.stderr);
    assert.equal(fs.existsSync(path.join(dir, "never.backup")), false);
  });

  it("workspace add/list/switch, script run with its live log and result, job list", async () => {
    const me = membership.principal.username;
    const added = await cli("--token", token, "workspace", "add", "local", "clitest", api.url);
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /saved workspace local/);
    assert.equal(fs.statSync(path.join(dir, "config.json")).mode & 0o777, 0o600);
    assert.equal((await cli("--token", token, "workspace", "add", "other", "clitest", api.url)).code, 0);
    const switched = await cli("workspace", "switch", "local");
    assert.equal(switched.code, 0, switched.stderr);
    const list = await cli("--json", "workspace", "list");
    assert.deepEqual(JSON.parse(list.stdout), [
      { name: "local", workspaceId: "clitest", url: api.url, active: true },
      { name: "other", workspaceId: "clitest", url: api.url, active: false },
    ]);
    assert.doesNotMatch(list.stdout, new RegExp(token), "tokens are never listed");

    // The active workspace is used without --url/--token.
    const run = await cli("script", "run", `u/${me}/hello`, "-d", '{"name": "world"}');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /step one[\s\S]*hello world/);
    assert.deepEqual(JSON.parse(run.stdout), { greeting: "hi world" });
    const json = await cli("--json", "script", "run", `u/${me}/hello`, "-d", '{"name": "json"}');
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout) as { id: string; success: boolean; result: unknown };
    assert.equal(parsed.success, true);
    assert.deepEqual(parsed.result, { greeting: "hi json" });

    const failed = await cli("script", "run", `u/${me}/broken`);
    assert.equal(failed.code, 1, failed.stderr);
    assert.match(failed.stderr, /going down/);
    assert.match(failed.stderr, /failed/);
    const missing = await cli("script", "run", `u/${me}/nope`);
    assert.equal(missing.code, 4, missing.stderr);

    const all = await cli("--json", "job", "list");
    assert.equal(all.code, 0, all.stderr);
    assert.equal((JSON.parse(all.stdout) as unknown[]).length, 3);
    const failures = await cli("--json", "job", "list", "--success", "false");
    const failureJobs = JSON.parse(failures.stdout) as { script_path: string; success: boolean }[];
    assert.deepEqual(
      failureJobs.map((j) => [j.script_path, j.success]),
      [[`u/${me}/broken`, false]],
    );
    const limited = await cli("--json", "job", "list", "--script", `u/${me}/hello`, "--limit", "1");
    const limitedJobs = JSON.parse(limited.stdout) as { id: string; script_path: string }[];
    assert.equal(limitedJobs.length, 1);
    assert.equal(limitedJobs[0]!.id, parsed.id, "newest first");
    const text = await cli("job", "list");
    assert.match(text.stdout, /failure/);
    assert.match(text.stdout, /success/);
    const badLimit = await cli("job", "list", "--limit", "0");
    assert.equal(badLimit.code, 2);
  });
});
