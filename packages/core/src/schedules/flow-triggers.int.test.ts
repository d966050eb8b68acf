// Flows started by a schedule's tick and by a webhook token: the flow job records what started
// it (trigger_kind schedule/webhook, the schedule's path and tick), runs as the schedule's owner
// or the token's creator, and a token for one flow runs that flow and nothing else.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { principalFromBearer } from "../auth/tokens.ts";
import { runFlowByPath } from "../flows/engine/run.ts";
import { archiveFlow, createFlow } from "../flows/store.ts";
import { runScriptByPath } from "../jobs/run.ts";
import { deployScript } from "../scripts.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { assertCallAllowed, scopePathOf } from "../webhooks/scope.ts";
import { createWebhookToken, listWebhookTokens } from "../webhooks/tokens.ts";
import { webhookArgs } from "../webhooks/body.ts";
import { requireMembership, type Membership } from "../workspaces.ts";
import { createSchedule, updateSchedule } from "./schedules.ts";
import { runDueSchedules } from "./tick.ts";

const WS = "flowtrig";

describe("schedules and webhooks of flows", () => {
  let services: TestServices;
  let membership: Membership;
  let me: string;

  /** A flow that needs no worker: its identity step answers the flow's input. */
  const echoFlow = (path: string) =>
    createFlow(services, membership, {
      path,
      summary: "Echo",
      schema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { n: { type: "integer", description: "" } },
        required: ["n"],
        order: ["n"],
      },
      value: { modules: [{ id: "a", value: { type: "identity" } }] },
    });

  async function finished(id: string) {
    for (let i = 0; i < 100; i++) {
      const { rows } = await services.pool.query(
        "SELECT kind, status, result, trigger_kind, schedule_path, scheduled_for AT TIME ZONE 'UTC' AS scheduled_for, created_by FROM job WHERE id = $1",
        [id],
      );
      if (rows[0] && rows[0].status !== "running" && rows[0].status !== "queued") return rows[0];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`flow job ${id} did not finish`);
  }

  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, WS));
    me = membership.principal.username;
    await echoFlow(`u/${me}/echo`);
    await deployScript(services, membership, {
      path: `u/${me}/script`,
      language: "bash",
      content: "echo hi\n",
    });
  });
  after(() => services?.close());

  it("a schedule of a flow is refused for a missing or archived flow and for args that do not fit its schema", async () => {
    const base = { path: `u/${me}/bad`, schedule: "0 0 * * * *", isFlow: true };
    await rejectsWith(
      createSchedule(services, membership, { ...base, scriptPath: `u/${me}/nowhere`, args: { n: 1 } }),
      "INVALID_INPUT",
      "script_path",
      /no flow at/,
    );
    await rejectsWith(
      createSchedule(services, membership, { ...base, scriptPath: `u/${me}/echo`, args: {} }),
      "INVALID_INPUT",
      "args.n",
    );
    await echoFlow(`u/${me}/gone`);
    await archiveFlow(services, membership, `u/${me}/gone`);
    await rejectsWith(
      createSchedule(services, membership, { ...base, scriptPath: `u/${me}/gone`, args: { n: 1 } }),
      "INVALID_INPUT",
      "script_path",
      /archived/,
    );
    const { rows } = await services.pool.query("SELECT 1 FROM schedule WHERE workspace_id = $1", [WS]);
    assert.equal(rows.length, 0);
  });

  it("a due tick runs the flow once, as the schedule's owner, with trigger_kind schedule and the tick", async () => {
    const schedule = await createSchedule(services, membership, {
      path: `u/${me}/every_hour`,
      schedule: "0 0 * * * *",
      scriptPath: `u/${me}/echo`,
      isFlow: true,
      args: { n: 7 },
    });
    assert.equal(schedule.isFlow, true);
    const tick = new Date(Math.floor(Date.now() / 1000) * 1000 - 2000);
    await services.pool.query(
      "UPDATE schedule SET next_run_at = $3::timestamptz WHERE workspace_id = $1 AND path = $2",
      [WS, `u/${me}/every_hour`, tick],
    );
    const outcomes = await runDueSchedules(services);
    const outcome = outcomes.find((o) => o.path === `u/${me}/every_hour`);
    assert.ok(outcome?.jobId, JSON.stringify(outcomes));
    assert.equal(outcome.error, null);
    const job = await finished(outcome.jobId);
    assert.equal(job.kind, "flow");
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.deepEqual(job.result, { n: 7 });
    assert.equal(job.trigger_kind, "schedule");
    assert.equal(job.schedule_path, `u/${me}/every_hour`);
    assert.equal(new Date(job.scheduled_for).getTime(), tick.getTime());
    assert.equal(job.created_by, me);
    // Run once: the tick moved on.
    assert.equal((await runDueSchedules(services)).filter((o) => o.path === `u/${me}/every_hour`).length, 0);

    // Edited args are checked against the flow's schema too.
    await rejectsWith(
      updateSchedule(services, membership, `u/${me}/every_hour`, {
        schedule: "0 0 * * * *",
        args: { n: "x" },
      }),
      "INVALID_INPUT",
      "args.n",
    );
  });

  it("a tick's flow job commits with the schedule's advance: a failed commit leaves no run, the next try runs it once", async () => {
    await echoFlow(`u/${me}/once`);
    await createSchedule(services, membership, {
      path: `u/${me}/once_hourly`,
      schedule: "0 0 * * * *",
      scriptPath: `u/${me}/once`,
      isFlow: true,
      args: { n: 5 },
    });
    const tick = new Date(Math.floor(Date.now() / 1000) * 1000 - 2000);
    await services.pool.query(
      "UPDATE schedule SET next_run_at = $3::timestamptz WHERE workspace_id = $1 AND path = $2",
      [WS, `u/${me}/once_hourly`, tick],
    );
    const flowJobs = async () =>
      (
        await services.pool.query<{ id: string }>(
          "SELECT id FROM job WHERE workspace_id = $1 AND kind = 'flow' AND script_path = $2",
          [WS, `u/${me}/once`],
        )
      ).rows;
    // The tick's transaction fails at COMMIT, after the flow was started (a deferred trigger on
    // the schedule's advance), like a server dying between the two writes.
    await services.pool.query(
      `CREATE FUNCTION flowtrig_fail_commit() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN RAISE EXCEPTION 'commit refused by the test'; END $$`,
    );
    await services.pool.query(
      `CREATE CONSTRAINT TRIGGER flowtrig_fail_commit AFTER UPDATE ON schedule
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
         WHEN (NEW.workspace_id = '${WS}' AND NEW.path = 'u/${me}/once_hourly')
         EXECUTE FUNCTION flowtrig_fail_commit()`,
    );
    try {
      await assert.rejects(runDueSchedules(services), /commit refused by the test/);
    } finally {
      await services.pool.query("DROP TRIGGER flowtrig_fail_commit ON schedule");
      await services.pool.query("DROP FUNCTION flowtrig_fail_commit()");
    }
    assert.deepEqual(await flowJobs(), []);
    const { rows } = await services.pool.query(
      "SELECT next_run_at AT TIME ZONE 'UTC' AS next_run_at FROM schedule WHERE workspace_id = $1 AND path = $2",
      [WS, `u/${me}/once_hourly`],
    );
    assert.equal(new Date(rows[0].next_run_at).getTime(), tick.getTime());

    // The tick is still due: the next try runs the flow, once.
    const outcome = (await runDueSchedules(services)).find((o) => o.path === `u/${me}/once_hourly`);
    assert.ok(outcome?.jobId, JSON.stringify(outcome));
    assert.equal((await runDueSchedules(services)).filter((o) => o.path === `u/${me}/once_hourly`).length, 0);
    assert.deepEqual(
      (await flowJobs()).map((j) => j.id),
      [outcome.jobId],
    );
    const job = await finished(outcome.jobId);
    assert.equal(job.status, "success", JSON.stringify(job.result));
    assert.deepEqual(job.result, { n: 5 });
    assert.equal(job.trigger_kind, "schedule");
    assert.equal(new Date(job.scheduled_for).getTime(), tick.getTime());
  });

  it("a tick whose flow is gone records why on the schedule and moves on", async () => {
    await echoFlow(`u/${me}/later_gone`);
    await createSchedule(services, membership, {
      path: `u/${me}/orphan`,
      schedule: "0 0 * * * *",
      scriptPath: `u/${me}/later_gone`,
      isFlow: true,
      args: { n: 1 },
    });
    await archiveFlow(services, membership, `u/${me}/later_gone`);
    await services.pool.query(
      "UPDATE schedule SET next_run_at = now() - interval '2 seconds' WHERE workspace_id = $1 AND path = $2",
      [WS, `u/${me}/orphan`],
    );
    const outcome = (await runDueSchedules(services)).find((o) => o.path === `u/${me}/orphan`);
    assert.equal(outcome?.jobId, null);
    assert.match(outcome?.error ?? "", /later_gone/);
    const { rows } = await services.pool.query(
      "SELECT error FROM schedule WHERE workspace_id = $1 AND path = $2",
      [WS, `u/${me}/orphan`],
    );
    assert.match(rows[0].error, /later_gone/);
  });

  it("a webhook token of a flow runs that flow (trigger_kind webhook, as its creator) and nothing else", async () => {
    const token = await createWebhookToken(services, membership, { path: `u/${me}/echo`, label: "ci" });
    assert.deepEqual(
      (await listWebhookTokens(services, membership, `u/${me}/echo`)).map((t) => t.label),
      ["ci"],
    );
    const principal = await principalFromBearer(services, token, undefined);
    assert.equal(principal.pathScope, `u/${me}/echo`);
    assert.doesNotThrow(() => assertCallAllowed(principal, "POST", `/api/w/${WS}/jobs/run/f/u/${me}/echo`));
    assert.doesNotThrow(() =>
      assertCallAllowed(principal, "POST", `/api/w/${WS}/jobs/run_wait_result/f/u/${me}/echo`),
    );
    assert.throws(
      () => assertCallAllowed(principal, "GET", `/api/w/${WS}/flows/get/u/${me}/echo`),
      /webhook token/,
    );
    const asHook = await requireMembership(services, principal, WS);
    const id = await runFlowByPath(
      services,
      asHook,
      `u/${me}/echo`,
      webhookArgs("application/json", '{"n": 3}'),
    );
    const job = await finished(id);
    assert.equal(job.status, "success");
    assert.deepEqual(job.result, { n: 3 });
    assert.equal(job.trigger_kind, "webhook");
    assert.equal(job.created_by, me);

    await echoFlow(`u/${me}/other`);
    await rejectsWith(runFlowByPath(services, asHook, `u/${me}/other`, { n: 1 }), "FORBIDDEN");
    await rejectsWith(runScriptByPath(services, asHook, `u/${me}/script`, {}), "FORBIDDEN");
    await rejectsWith(
      createWebhookToken(services, membership, { path: `u/${me}/nothing_here` }),
      "NOT_FOUND",
    );
    assert.equal(scopePathOf([`run:flow/u/${me}/echo`]), `u/${me}/echo`);
  });
});
