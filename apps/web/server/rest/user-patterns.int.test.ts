// Issue 34 item 1: a developer's resource type with a backtracking `pattern` must not freeze the
// server for every tenant. The REST server runs as a process of its own; while it validates a
// value against `(a+)+$`, /api/version must keep answering within 100 ms.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createApiToken, createUser, principalOf } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startRestProcess, type RestProcess } from "./testing/index.ts";

const KEY = "user-patterns-test-key-0123456789abcdef";

let services: TestServices;
let server: RestProcess;
let token: string;
let ws: string;

// Every call gives up: on a frozen server a test must fail, not wait forever.
async function post(path: string, body: unknown, signal = AbortSignal.timeout(10_000)) {
  const response = await fetch(`${server.url}/api/w/${ws}/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  return { status: response.status, text: await response.text() };
}

describe("user-supplied patterns never block the server", () => {
  before(async () => {
    services = await createTestServices();
    ws = "patterns";
    await createTestMember(services, ws);
    const user = await createUser(services, { email: "dev-patterns@example.com", password: "password123" });
    await services.db.workspaceMember.create({
      data: { workspaceId: ws, userId: user.id, role: "developer" },
    });
    token = await createApiToken(services, principalOf(user), { label: "dev" });
    server = await startRestProcess({ DATABASE_URL: services.database.url, MILLRACE_SECRET_KEY: KEY });
  });
  after(async () => {
    await server?.stop();
    await services?.close();
  });

  it("answers /api/version within 100 ms while a value is checked against (a+)+$", async () => {
    const type = await post("resources/type/create", {
      name: "bre",
      schema: { type: "object", properties: { a: { type: "string", pattern: "(a+)+$" } } },
    });
    assert.equal(type.status, 201, type.text);

    let validating = true;
    const latencies: number[] = [];
    const probe = (async () => {
      while (validating) {
        const started = performance.now();
        // On a blocked event loop this never answers: give up well before the test's own timeout.
        const response = await fetch(`${server.url}/api/version`, { signal: AbortSignal.timeout(2000) });
        await response.text();
        latencies.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const values = ["a".repeat(40), "a".repeat(5000)].map((run) => `${run}!`);
    let answers;
    try {
      answers = await Promise.all(
        values.map((a, i) =>
          post("resources/create", { path: `u/dev_patterns/bre${i}`, resource_type: "bre", value: { a } }),
        ),
      );
      // A few more probes after the answers, in case the validation ran late.
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      validating = false;
      await probe;
    }
    for (const answer of answers) {
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.text, /value\.a: must match pattern/);
    }
    assert.ok(latencies.length >= 3, `${latencies.length} probes`);
    assert.ok(Math.max(...latencies) < 100, `slowest /api/version: ${Math.max(...latencies).toFixed(1)} ms`);

    const fine = await post("resources/create", {
      path: "u/dev_patterns/bre_ok",
      resource_type: "bre",
      value: { a: "aaa" },
    });
    assert.equal(fine.status, 201, fine.text);
  });

  it("refuses a pattern it cannot run in linear time, naming the field", async () => {
    const refused = await post("resources/type/create", {
      name: "lookahead",
      schema: { type: "object", properties: { p: { type: "string", pattern: "^(?=.*\\d).+$" } } },
    });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.text, /schema\.properties\.p\.pattern/);
  });
});
