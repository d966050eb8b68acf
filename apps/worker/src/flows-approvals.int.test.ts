// Approvals of flow steps with `suspend` (packages/core/src/flows/engine/approvals.ts), through
// the web app's REST routes on Windmill's paths: resume and cancel URLs signed per job and resume
// id, `wmill.getResumeUrls()` from a step, timeouts, self-approval and group limits, the audit log.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  addGroupMember,
  createApiToken,
  createGroup,
  runFlowPreview,
  sweepFlows,
  waitForJob,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "./testing.ts";
import { bashStep as bash, type StepModule as Module } from "./flow-modules.ts";

const KEY = "approvals-test-instance-key-0123456789abcdef";

let services: TestServices;
let alice: Membership;
let bob: Membership;
let carol: Membership;
const tokens: Record<string, string> = {};
let api: TestApi;
let worker: TestWorker;
let ws: string;

function approval(id: string, suspend: Record<string, unknown>): Module {
  return { id, value: { type: "identity" }, suspend };
}

/** `url`'s path on the test API (signed URLs carry the server's configured BASE_URL). */
async function call(method: string, url: string, as: string | null, body?: unknown) {
  const target = new URL(url, api.url);
  const response = await fetch(`${api.url}${target.pathname}${target.search}`, {
    method,
    headers: {
      ...(as ? { Authorization: `Bearer ${tokens[as]}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain text
  }
  return { status: response.status, body: parsed };
}

async function suspendedFlow(modules: Module[], by = alice): Promise<string> {
  const id = await runFlowPreview(services, by, { value: { modules }, args: {} });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await services.pool.query("SELECT status, flow_status FROM job WHERE id = $1", [id]);
    if (rows[0].flow_status?._engine?.suspended) return id;
    if (rows[0].status !== "running")
      assert.fail(`the flow ended before suspending: ${JSON.stringify(rows[0])}`);
    if (Date.now() > deadline) assert.fail("the flow never suspended");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function urlsFor(jobId: string, resumeId: number, approver?: string) {
  const response = await call(
    "GET",
    `/api/w/${ws}/jobs/resume_urls/${jobId}/${resumeId}${approver ? `?approver=${approver}` : ""}`,
    "alice",
  );
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body as { approvalPage: string; resume: string; cancel: string };
}

async function audit(operation: string, flowId: string) {
  const { rows } = await services.pool.query(
    "SELECT actor, parameters FROM audit_log WHERE operation = $1 AND parameters->>'flow_job_id' = $2",
    [operation, flowId],
  );
  return rows as { actor: string; parameters: Record<string, unknown> }[];
}

describe("flow approvals through signed URLs", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership: alice } = await createTestMember(services));
    ws = alice.workspace.id;
    ({ membership: bob } = await createTestMember(services, ws));
    ({ membership: carol } = await createTestMember(services, ws));
    const { membership: outsider } = await createTestMember(services);
    for (const [name, m] of Object.entries({ alice, bob, carol, outsider })) {
      tokens[name] = await createApiToken(services, m.principal, { label: name });
    }
    await createGroup(services, alice, { name: "approvers" });
    await addGroupMember(services, alice, "approvers", bob.principal.username);
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      WORKER_TAGS: "bash,bun",
      NUM_WORKERS: "2",
      BASE_URL: api.url,
      MILLRACE_SECRET_KEY: KEY,
    });
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
  });

  it("a step gets its URLs with wmill.getResumeUrls(); a POST to the resume URL moves the flow on with the form's values", async () => {
    const ask = {
      id: "ask",
      value: {
        type: "rawscript",
        language: "bun",
        content: `import * as wmill from "windmill-client";
export async function main() {
  return await wmill.getResumeUrls("boss");
}`,
        input_transforms: {},
      },
      suspend: { required_events: 1, timeout: 120, resume_form: { schema: { properties: { answer: {} } } } },
    };
    const id = await suspendedFlow([
      ask,
      bash("after", 'a="$1"\nwho="$2"\necho "$a-by-$who"', { a: "resume.answer", who: "approvers[0]" }),
    ]);
    const { rows } = await services.pool.query(
      "SELECT id, result FROM job WHERE parent_job_id = $1 AND flow_step_id = 'ask'",
      [id],
    );
    const urls = rows[0].result as { approvalPage: string; resume: string; cancel: string };
    assert.match(
      urls.resume,
      new RegExp(`/api/w/${ws}/jobs_u/resume/${rows[0].id}/\\d+/[0-9a-f]{64}\\?approver=boss$`),
    );
    assert.match(urls.cancel, /\/jobs_u\/cancel\//);
    assert.match(urls.approvalPage, /\/approve\//);
    const flowUrl = urls.resume.replace("/jobs_u/resume/", "/jobs_u/get_flow/");
    const flow = await call("GET", flowUrl, null);
    assert.equal(flow.status, 200, JSON.stringify(flow.body));
    assert.equal((await call("GET", flowUrl, "outsider")).status, 404, "a signed-in outsider");
    assert.equal((await call("POST", urls.resume, "outsider", {})).status, 404, "a signed-in outsider");
    assert.equal((flow.body as { job: { id: string } }).job.id, id);
    const resumed = await call("POST", urls.resume, null, { answer: "yes" });
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    const job = await waitForJob(services, alice, id, 30_000);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.equal(job.result, "yes-by-boss");
    const again = await call("POST", urls.resume, null, { answer: "twice" });
    assert.equal(again.status, 409, "a used URL (or a finished flow) is refused");
    const rowsAudit = await audit("flows.approval.approve", id);
    assert.equal(rowsAudit.length, 1);
    assert.equal(rowsAudit[0]!.actor, "boss");
  });

  it("a tampered signature, or another approver than the one signed for, is refused", async () => {
    const id = await suspendedFlow([approval("gate", { timeout: 120 })]);
    const urls = await urlsFor(id, 7, "dave");
    const tampered = urls.resume.replace(/\/([0-9a-f])([0-9a-f]{63})\?/, (_, first: string, rest: string) => {
      return `/${first === "0" ? "1" : "0"}${rest}?`;
    });
    assert.equal((await call("POST", tampered, null, {})).status, 403);
    assert.equal(
      (await call("POST", urls.resume.replace("approver=dave", "approver=eve"), null, {})).status,
      403,
    );
    assert.equal((await call("POST", urls.resume.replace("/7/", "/8/"), null, {})).status, 403);
    const { rows } = await services.pool.query("SELECT status FROM job WHERE id = $1", [id]);
    assert.equal(rows[0].status, "running", "nothing moved");
    assert.equal((await call("GET", urls.resume, null)).status, 200);
    assert.equal((await waitForJob(services, alice, id, 10_000)).status, "success");
  });

  it("a suspended step without an approval in time fails its flow (from the sweeper), or goes on when told to", async () => {
    const id = await suspendedFlow([approval("gate", { timeout: 1 }), bash("never", "echo never")]);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const swept = await sweepFlows(services.pool, services.boss);
    assert.ok(swept.timedOut.includes(id));
    const job = await waitForJob(services, alice, id, 10_000);
    assert.equal(job.status, "failure");
    const error = (job.result as { error: { name: string; step_id: string } }).error;
    assert.equal(error.name, "SuspendTimeout");
    assert.equal(error.step_id, "gate");
    assert.equal((await audit("flows.approval.timeout", id)).length, 1);

    const goesOn = await suspendedFlow([
      approval("gate", { timeout: 1, continue_on_disapprove_timeout: true }),
      bash("next", 'r="$1"\necho "approved=$r"', { r: "resume.approved" }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    await sweepFlows(services.pool, services.boss);
    const done = await waitForJob(services, alice, goesOn, 20_000);
    assert.equal(done.status, "success", JSON.stringify(done.result));
    assert.equal(done.result, "approved=false");
  });

  it("self-approval disabled: the flow's starter is refused, an anonymous approver must sign in; two approvals are needed", async () => {
    const id = await suspendedFlow([
      approval("gate", { required_events: 2, self_approval_disabled: true, timeout: 120 }),
      bash("next", 'a="$1"\necho "$a"', { a: "approvers.join('+')" }),
    ]);
    const urls = await urlsFor(id, 1);
    const self = await call("POST", urls.resume, "alice", {});
    assert.equal(self.status, 403, JSON.stringify(self.body));
    assert.match(JSON.stringify(self.body), /self-approval/);
    assert.equal((await call("POST", urls.resume, null, {})).status, 401);
    assert.equal((await call("POST", urls.resume, "bob", {})).status, 200);
    const { rows } = await services.pool.query("SELECT status, flow_status FROM job WHERE id = $1", [id]);
    assert.equal(rows[0].status, "running", "one approval of two");
    assert.equal(rows[0].flow_status.modules[0].type, "WaitingForEvents");
    assert.equal(rows[0].flow_status.modules[0].count, 1);
    const second = await urlsFor(id, 2);
    assert.equal((await call("POST", second.resume, "carol", {})).status, 200);
    const job = await waitForJob(services, alice, id, 20_000);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.equal(job.result, `${bob.principal.username}+${carol.principal.username}`);
  });

  it("group-limited approval: only members of the listed groups may approve", async () => {
    const id = await suspendedFlow([
      approval("gate", { user_groups_required: { type: "static", value: ["approvers"] }, timeout: 120 }),
    ]);
    const urls = await urlsFor(id, 3);
    const outsider = await call("POST", urls.resume, "carol", {});
    assert.equal(outsider.status, 403, JSON.stringify(outsider.body));
    assert.match(JSON.stringify(outsider.body), /approvers/);
    assert.equal((await call("POST", urls.resume, "bob", {})).status, 200);
    assert.equal((await waitForJob(services, alice, id, 10_000)).status, "success");
  });

  it("the cancel URL cancels the flow; the owner may resume a suspended flow at once", async () => {
    const id = await suspendedFlow([approval("gate", { timeout: 120 }), bash("never", "echo never")]);
    const urls = await urlsFor(id, 4);
    assert.equal((await call("GET", urls.cancel, "bob")).status, 200);
    const job = await waitForJob(services, alice, id, 10_000);
    assert.equal(job.status, "canceled");
    assert.equal((await audit("flows.approval.cancel", id))[0]?.actor, bob.principal.username);

    const owned = await suspendedFlow([
      approval("gate", { required_events: 3, timeout: 120 }),
      bash("next", 'v="$1"\necho "$v"', { v: "resume.note" }),
    ]);
    assert.equal(
      (await call("POST", `/api/w/${ws}/jobs/flow/resume/${owned}`, "carol", { note: "x" })).status,
      200,
    );
    const done = await waitForJob(services, alice, owned, 20_000);
    assert.equal(done.result, "x");
  });
});
