import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "../errors.ts";
import type { Principal } from "../auth/principal.ts";
import { webhookArgs } from "./body.ts";
import { assertCallAllowed, scopePathOf } from "./scope.ts";

describe("webhook bodies", () => {
  it("a JSON object is the args", () => {
    assert.deepEqual(webhookArgs("application/json", '{"a": 1, "b": "x"}'), { a: 1, b: "x" });
    assert.deepEqual(webhookArgs("application/json; charset=utf-8", '{"a": 1}'), { a: 1 });
    assert.deepEqual(webhookArgs("application/vnd.api+json", '{"a": 1}'), { a: 1 });
    assert.deepEqual(webhookArgs(null, '{"a": 1}'), { a: 1 });
  });

  it("an empty body is no args", () => {
    assert.deepEqual(webhookArgs("application/json", ""), {});
    assert.deepEqual(webhookArgs("text/plain", "  \n"), {});
  });

  it("any other body is passed whole as { body }", () => {
    assert.deepEqual(webhookArgs("text/plain", "hello there"), { body: "hello there" });
    assert.deepEqual(webhookArgs("application/xml", "<a>1</a>"), { body: "<a>1</a>" });
    assert.deepEqual(webhookArgs("application/x-www-form-urlencoded", "a=1&b=2"), { body: "a=1&b=2" });
    assert.deepEqual(webhookArgs("text/plain", '{"a": 1}'), { body: '{"a": 1}' }, "the declared type wins");
    assert.deepEqual(webhookArgs(null, "not json"), { body: "not json" });
    assert.deepEqual(webhookArgs("application/json", "[1, 2]"), { body: [1, 2] });
    assert.deepEqual(webhookArgs("application/json", '"text"'), { body: "text" });
  });

  it("a body declared as JSON must parse", () => {
    assert.throws(
      () => webhookArgs("application/json", "{oops"),
      (error) => error instanceof AppError && error.field === "body" && /not valid JSON/.test(error.message),
    );
  });
});

describe("webhook token scope", () => {
  const hook: Principal = {
    userId: "u1",
    email: "a@example.com",
    username: "a",
    isSuperAdmin: false,
    workspaceScope: "ws",
    pathScope: "u/a/hook",
  };

  it("allows only the run routes to a webhook token", () => {
    assertCallAllowed(hook, "POST", "/api/w/ws/jobs/run/p/u/a/hook");
    assertCallAllowed(hook, "POST", "/api/w/ws/jobs/run_wait_result/p/u/a/hook");
    for (const [method, path] of [
      ["GET", "/api/w/ws/jobs/run/p/u/a/hook"],
      ["GET", "/api/users/whoami"],
      ["POST", "/api/users/tokens/create"],
      ["GET", "/api/w/ws/scripts/list"],
      ["POST", "/api/w/ws/jobs/run/preview"],
      ["GET", "/api/w/ws/jobs_u/get/123"],
      ["POST", "/api/trpc/script.deploy"],
    ]) {
      assert.throws(
        () => assertCallAllowed(hook, method!, path!),
        (error) => error instanceof AppError && error.code === "FORBIDDEN",
        `${method} ${path}`,
      );
    }
    assertCallAllowed({ ...hook, pathScope: undefined }, "GET", "/api/users/whoami");
  });

  it("reads Windmill's run:script/<path> scopes", () => {
    assert.equal(scopePathOf(undefined), null);
    assert.equal(scopePathOf([]), null);
    assert.equal(scopePathOf(["run:script/u/a/hook"]), "u/a/hook");
    for (const bad of [["jobs:read"], ["run:script/u/a/x", "run:script/u/a/y"], "run:script/u/a/x", [1]]) {
      assert.throws(
        () => scopePathOf(bad),
        (error) => error instanceof AppError && error.field === "scopes",
        JSON.stringify(bad),
      );
    }
  });
});
