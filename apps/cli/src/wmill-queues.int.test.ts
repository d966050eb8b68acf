// The real `wmill queues` (npm windmill-cli 1.819) against Millrace, as a superadmin runs it: it
// lists every workspace's queue through the `admins` workspace (`all_workspaces=true`), asks the
// database's clock and counts completed jobs per tag (jobs/db_clock, jobs/completed/count_by_tag).
// Also run_wait_result's status, which Windmill answers 200.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  createApiToken,
  createKeyring,
  createUser,
  createWorkspace,
  ensureAdminsWorkspace,
  principalOf,
} from "@millrace/core";
import { createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import { runWmill } from "./testing.ts";

const KEY = "wmill-queues-instance-key-0123456789abcdef";

describe("wmill queues, the admins workspace and run_wait_result", () => {
  let services: TestServices;
  let api: TestApi;
  let worker: TestWorker;
  let superToken: string;
  let memberToken: string;
  let home: string;

  const call = async (token: string, method: string, route: string, body?: unknown) => {
    const response = await fetch(`${api.url}/api/${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, json: () => JSON.parse(text) as unknown };
  };

  before(async () => {
    services = await createTestServices();
    const ctx = { ...services, secrets: createKeyring(KEY) };
    // What the launcher does at every start (scripts/start.ts): twice changes nothing.
    await ensureAdminsWorkspace(ctx);
    await ensureAdminsWorkspace(ctx);
    const root = await createUser(ctx, {
      email: "root@example.com",
      password: "queues-password-1",
      superAdmin: true,
    });
    const member = await createUser(ctx, { email: "dev@example.com", password: "queues-password-2" });
    await createWorkspace(ctx, principalOf(root), { id: "alpha", name: "Alpha" });
    await createWorkspace(ctx, principalOf(member), { id: "beta", name: "Beta" });
    superToken = await createApiToken(services, principalOf(root), { label: "queues" });
    memberToken = await createApiToken(services, principalOf(member), { label: "queues" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, { WORKER_TAGS: "bash" });
    home = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-wmill-queues-"));
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it("run_wait_result answers 200 with the result, as Windmill does", async () => {
    const answer = await call(superToken, "POST", "w/alpha/jobs/run_wait_result/preview", {
      language: "bash",
      content: 'echo "42"',
      args: {},
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json(), 42);

    const flow = await call(superToken, "POST", "w/alpha/jobs/run_wait_result/preview_flow", {
      value: {
        modules: [
          {
            id: "a",
            value: { type: "rawscript", language: "bash", content: "echo 7", input_transforms: {} },
          },
        ],
      },
      args: {},
    });
    assert.equal(flow.status, 200, flow.text);
    assert.equal(flow.json(), 7);

    const created = await call(superToken, "POST", "w/alpha/scripts/create", {
      path: "f/hooks/greet",
      summary: "",
      description: "",
      language: "bash",
      content: `name="$1"\necho "\\"hello $name\\""`,
    });
    assert.equal(created.status, 201, created.text);
    const payload = Buffer.from(JSON.stringify({ name: "ada" })).toString("base64");
    const got = await call(
      superToken,
      "GET",
      `w/alpha/jobs/run_wait_result/p/f/hooks/greet?payload=${encodeURIComponent(payload)}`,
    );
    assert.equal(got.status, 200, got.text);
    assert.equal(got.json(), "hello ada");
    const bad = await call(
      superToken,
      "GET",
      "w/alpha/jobs/run_wait_result/p/f/hooks/greet?payload=bm90IGpzb24",
    );
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.text, /payload/);
  });

  it("wmill queues lists every workspace's queue per tag for a superadmin", async () => {
    // Two jobs wait on a tag no worker serves, one in each workspace; the bash ones complete.
    for (const [token, ws] of [
      [superToken, "alpha"],
      [memberToken, "beta"],
    ] as const) {
      const queued = await call(token, "POST", `w/${ws}/jobs/run/preview`, {
        language: "bash",
        content: "echo waiting",
        args: {},
        tag: "nobody-serves-this",
      });
      assert.equal(queued.status, 201, queued.text);
      const done = await call(token, "POST", `w/${ws}/jobs/run_wait_result/preview`, {
        language: "bash",
        content: "echo done",
        args: {},
      });
      assert.equal(done.status, 200, done.text);
    }

    const clock = await call(superToken, "GET", "jobs/db_clock");
    assert.equal(clock.status, 200, clock.text);
    assert.ok(Math.abs((clock.json() as number) - Date.now()) < 60_000, clock.text);

    const counts = await call(superToken, "GET", "jobs/completed/count_by_tag?horizon_secs=300");
    assert.equal(counts.status, 200, counts.text);
    const bash = (counts.json() as { tag: string; count: number }[]).find((row) => row.tag === "bash");
    assert.ok(bash && bash.count >= 3, counts.text);
    const ofBeta = await call(
      memberToken,
      "GET",
      "jobs/completed/count_by_tag?horizon_secs=300&workspace_id=beta",
    );
    assert.deepEqual(ofBeta.json(), [{ tag: "bash", count: 1 }]);

    const run = await runWmill(["queues", "--base-url", `${api.url}/`, "--token", superToken], {
      cwd: home,
      home,
    });
    assert.equal(run.code, 0, run.output);
    assert.doesNotMatch(run.output, /Failed to fetch queue metrics/, run.output);
    const waiting = run.output.split("\n").find((line) => line.includes("nobody-serves-this"));
    assert.ok(waiting, run.output);
    // Running 0, Waiting 2 (one per workspace), Later 0, Suspended 0.
    assert.match(waiting, /nobody-serves-this\s+0\s+2\s+0\s+0/);
    assert.match(run.output, /\nbash\s+0\s+0\s+0\s+0\s+[\d.]+/);

    const one = await runWmill(["queues", "beta", "--base-url", `${api.url}/`, "--token", superToken], {
      cwd: home,
      home,
    });
    assert.equal(one.code, 0, one.output);
    assert.match(one.output, /nobody-serves-this\s+0\s+1\s+0\s+0/);
  });

  it("every workspace's jobs, the clock and the counts are for superadmins only", async () => {
    const all = await call(memberToken, "GET", "w/beta/jobs/queue/list?all_workspaces=true");
    assert.equal(all.status, 400, all.text);
    assert.match(all.text, /all_workspaces/);
    const admins = await call(memberToken, "GET", "w/admins/jobs/queue/list?all_workspaces=true");
    assert.equal(admins.status, 404, admins.text);
    const counts = await call(memberToken, "GET", "jobs/completed/count_by_tag?horizon_secs=300");
    assert.equal(counts.status, 403, counts.text);
    const alpha = await call(memberToken, "GET", "jobs/completed/count_by_tag?workspace_id=alpha");
    assert.equal(alpha.status, 404, alpha.text);
    const bad = await call(superToken, "GET", "jobs/completed/count_by_tag?horizon_secs=soon");
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.text, /horizon_secs/);
    // A member's own workspace list stays as it was: admins is not in it.
    const listed = (await call(memberToken, "GET", "workspaces/list")).json() as { id: string }[];
    assert.deepEqual(
      listed.map((w) => w.id),
      ["beta"],
    );
  });
});
