import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Principal } from "../auth/principal.ts";
import { SUPERADMIN_SECRET_PRINCIPAL } from "../auth/tokens.ts";
import { triggerKind, type EnqueueInput } from "./enqueue.ts";

const alice: Principal = { userId: "1", email: "alice@example.com", username: "alice", isSuperAdmin: false };

function input(overrides: Partial<EnqueueInput>): EnqueueInput {
  return {
    workspaceId: "w",
    kind: "script",
    scriptPath: "u/alice/x",
    scriptHash: "h",
    language: "bash",
    content: "",
    args: {},
    argOrder: [],
    tag: "bash",
    priority: 0,
    scheduledFor: null,
    createdBy: "alice",
    permissionedAs: "u/alice",
    timeoutSecs: 60,
    memoryLimitMb: null,
    concurrency: null,
    retry: null,
    ...overrides,
  };
}

const by = (actor: Principal) => ({
  audit: { actor, entry: { workspaceId: "w", operation: "jobs.run.script", resource: "u/alice/x" } },
});

describe("triggerKind: what started a job, for the runs list", () => {
  it("a browser session is a run by hand; tokens tell the API, webhooks and jobs apart", () => {
    assert.equal(triggerKind(input(by(alice))), "manual");
    assert.equal(triggerKind(input(by({ ...alice, tokenKind: "api" }))), "api");
    assert.equal(triggerKind(input(by({ ...alice, tokenKind: "session" }))), "api");
    assert.equal(triggerKind(input(by(SUPERADMIN_SECRET_PRINCIPAL))), "api");
    assert.equal(
      triggerKind(input(by({ ...alice, tokenKind: "webhook", pathScope: "u/alice/x" }))),
      "webhook",
    );
    assert.equal(triggerKind(input(by({ ...alice, tokenKind: "job" }))), "job");
  });

  it("a schedule's tick, a flow's step and a deploy's dependency job are told by what enqueued them", () => {
    assert.equal(triggerKind(input({ schedulePath: "u/alice/nightly", ...by(alice) })), "schedule");
    const flow = "00000000-0000-0000-0000-000000000001";
    assert.equal(triggerKind(input({ parentJobId: flow, flowStepId: "a" })), "flow");
    // A job started by another job's client (windmill-client's parent_job) is its child, not a step.
    assert.equal(triggerKind(input({ parentJobId: flow, ...by({ ...alice, tokenKind: "job" }) })), "job");
    assert.equal(triggerKind(input({ kind: "dependency" })), "deploy");
    assert.equal(triggerKind(input({})), null);
  });
});
