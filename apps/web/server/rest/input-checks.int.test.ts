// Issue 34 item 5, what a REST or tRPC call could slip past: a preview's `timeout` was dropped
// (the job got 900 s), a jobs import could file jobs under a user who is not a member, and tRPC
// parsed a 10 MB body that REST refuses with 413. Against the REST and tRPC handlers in a server
// process of their own.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createApiToken, createUser } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startRestProcess, type RestProcess } from "./testing/index.ts";

const KEY = "input-checks-test-key-0123456789abcdef";
const WS = "checks";

let services: TestServices;
let server: RestProcess;
let admin: string;
let me: string;

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: response.status, text: await response.text() };
}

describe("inputs checked whichever way they come", () => {
  before(async () => {
    services = await createTestServices();
    const { principal } = await createTestMember(services, WS);
    me = principal.username;
    admin = await createApiToken(services, principal, { label: "admin" });
    server = await startRestProcess({ DATABASE_URL: services.database.url, MILLRACE_SECRET_KEY: KEY });
  });
  after(async () => {
    await server?.stop();
    await services?.close();
  });

  it("a preview's timeout is the job's, checked like a script's", async () => {
    const preview = (timeout: unknown) =>
      call("POST", `/api/w/${WS}/jobs/run/preview`, {
        language: "bash",
        content: "echo hi",
        args: {},
        timeout,
      });
    const made = await preview(7);
    assert.equal(made.status, 201, made.text);
    const { rows } = await services.pool.query("SELECT timeout_secs FROM job WHERE id = $1", [made.text]);
    assert.equal(rows[0].timeout_secs, 7);
    for (const bad of [0, 1.5, 10_000_000]) {
      const refused = await preview(bad);
      assert.equal(refused.status, 400, `${bad}: ${refused.text}`);
      assert.match(refused.text, /timeout/);
    }
    const fallback = await preview(undefined);
    const { rows: defaults } = await services.pool.query("SELECT timeout_secs FROM job WHERE id = $1", [
      fallback.text,
    ]);
    assert.equal(defaults[0].timeout_secs, 900);
  });

  it("a jobs import names only members and groups of the workspace", async () => {
    await createUser(services, { email: "stranger@example.com", password: "password123" });
    const job = (createdBy: string, permissionedAs: string) => ({
      id: randomUUID(),
      job_kind: "script",
      status: "success",
      language: "bash",
      raw_code: "echo imported",
      created_by: createdBy,
      permissioned_as: permissionedAs,
      created_at: "2026-11-01T10:00:00Z",
    });
    const count = async () =>
      (await services.pool.query("SELECT count(*)::int AS n FROM job WHERE workspace_id = $1", [WS])).rows[0]
        .n;
    const before = await count();
    for (const [jobs, field] of [
      [[job(me, `u/${me}`), job("stranger", "u/stranger")], "[1].created_by"],
      [[job(me, "u/stranger")], "[0].permissioned_as"],
      [[job(me, "g/nosuchgroup")], "[0].permissioned_as"],
    ] as const) {
      const refused = await call("POST", `/api/w/${WS}/jobs/completed/import`, jobs);
      assert.equal(refused.status, 400, refused.text);
      assert.ok(refused.text.includes(field), refused.text);
    }
    assert.equal(await count(), before, "nothing imported");
    const fine = await call("POST", `/api/w/${WS}/jobs/completed/import`, [
      job(me, `u/${me}`),
      job(me, "g/all"),
    ]);
    assert.equal(fine.status, 200, fine.text);
    assert.equal(await count(), before + 2);
  });

  it("tRPC refuses a body over REQUEST_BODY_LIMIT_MB with 413, as REST does", async () => {
    const big = JSON.stringify({ workspace: WS, path: `u/${me}/big`, value: "x".repeat(10 * 1024 * 1024) });
    const rest = await call("POST", `/api/w/${WS}/variables/create`, big);
    assert.equal(rest.status, 413, rest.text.slice(0, 200));
    const trpc = await call("POST", "/api/trpc/variable.create", big);
    assert.equal(trpc.status, 413, trpc.text.slice(0, 200));
    assert.match(trpc.text, /payload too large/);
    const small = await call("POST", "/api/trpc/variable.create", {
      workspace: WS,
      path: `u/${me}/small`,
      value: "ok",
    });
    assert.equal(small.status, 200, small.text);
  });
});
