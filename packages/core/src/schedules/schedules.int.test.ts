import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { createDb, createPool } from "@millrace/db";
import { startBoss } from "../jobs/boss.ts";
import { JobEvents } from "../jobs/events.ts";
import type { JobsContext } from "../jobs/run.ts";
import { deployScript } from "../scripts.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import { createUser, principalOf } from "../users.ts";
import { requireMembership, type Membership } from "../workspaces.ts";
import { previewTicks } from "./cron.ts";
import { listScheduleRuns } from "./runs.ts";
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  scheduleExists,
  setScheduleEnabled,
  updateSchedule,
} from "./schedules.ts";
import { MISSED_TICK_GRACE_MS, runDueSchedules } from "./tick.ts";

let services: TestServices;
let membership: Membership;
let me: string;
const WS = "sched";

async function count(sql: string, values: unknown[] = []): Promise<number> {
  const { rows } = await services.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, values);
  return rows[0]!.n;
}

/** The ticks a schedule's jobs were started for, oldest first. */
async function jobTicks(path: string): Promise<number[]> {
  const { rows } = await services.pool.query<{ at: Date }>(
    `SELECT scheduled_for AT TIME ZONE 'UTC' AS at FROM job WHERE workspace_id = $1 AND schedule_path = $2
      ORDER BY scheduled_for`,
    [WS, path],
  );
  return rows.map((row) => row.at.getTime());
}

async function setNextRun(path: string, at: Date): Promise<void> {
  await services.pool.query(
    "UPDATE schedule SET next_run_at = $3::timestamptz WHERE workspace_id = $1 AND path = $2",
    [WS, path, at],
  );
}

async function member(role: "developer" | "operator"): Promise<Membership> {
  const user = await createUser(services, {
    email: `${role}-${Date.now()}@example.com`,
    password: "password123",
  });
  await services.db.workspaceMember.create({ data: { workspaceId: WS, userId: user.id, role } });
  return requireMembership(services, principalOf(user), WS);
}

/** A second "server": its own pools and pg-boss on the same database. */
async function secondServer(): Promise<JobsContext & { close(): Promise<void> }> {
  const pool = createPool(services.database.url, { max: 5, applicationName: "millrace-test-2" });
  const boss = await startBoss(services.database.url, "worker");
  return {
    db: createDb(pool),
    pool,
    boss,
    events: new JobEvents(services.database.url),
    limits: services.limits,
    async close() {
      await boss.stop({ graceful: false, close: true, timeout: 2000 }).catch(() => {});
      await pool.end();
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("schedules", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, WS));
    me = membership.principal.username;
    await deployScript(services, membership, {
      path: `u/${me}/greet`,
      language: "bash",
      content: 'name="$1"\necho "hello $name"',
    });
  });
  after(() => services?.close());
  beforeEach(async () => {
    await services.pool.query("DELETE FROM schedule");
  });

  it("refuses an invalid cron, time zone, target or args, naming the field, and stores nothing", async () => {
    const auditBefore = await count("audit_log");
    const base = {
      path: `u/${me}/bad`,
      schedule: "*/5 * * * * *",
      timezone: "UTC",
      scriptPath: `u/${me}/greet`,
    };
    const args = { name: "x" };
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ schedule: "* * * * *" }, "schedule", /must have 6 fields/],
      [{ schedule: "61 * * * * *" }, "schedule", /not a valid cron expression/],
      [{ schedule: "0 0 0 30 2 *" }, "schedule", /never fires/],
      [{ schedule: "" }, "schedule", /is required/],
      [{ timezone: "Mars/Olympus_Mons" }, "timezone", /not an IANA time zone/],
      [{ timezone: "+02:00" }, "timezone", /not an IANA time zone/],
      [{ scriptPath: `u/${me}/missing` }, "script_path", /no script/],
      [{ scriptPath: "nope" }, "script_path", /must look like/],
      [{ path: "bad path" }, "path", /must look like/],
      [{ isFlow: true }, "script_path", /no flow at/],
    ];
    for (const [override, field, pattern] of cases) {
      await rejectsWith(
        createSchedule(services, membership, { ...base, args, ...override } as never),
        "INVALID_INPUT",
        field,
        pattern,
      );
    }
    await rejectsWith(
      createSchedule(services, membership, { ...base, args: {} }),
      "INVALID_INPUT",
      "args.name",
    );
    await rejectsWith(
      createSchedule(services, membership, { ...base, args: [1] as never }),
      "INVALID_INPUT",
      "args",
    );
    const huge = { name: "x".repeat(10 * 1024 * 1024) };
    await rejectsWith(
      createSchedule(services, membership, { ...base, args: huge }),
      "INVALID_INPUT",
      "args",
      /MB/,
    );
    assert.equal(await count("schedule"), 0);
    assert.equal(await count("audit_log"), auditBefore);

    // Updates are checked the same way and leave the stored schedule as it was.
    const saved = await createSchedule(services, membership, { ...base, path: `u/${me}/ok`, args });
    await rejectsWith(
      updateSchedule(services, membership, saved.path, { schedule: "nope", timezone: "UTC", args }),
      "INVALID_INPUT",
      "schedule",
    );
    await rejectsWith(
      updateSchedule(services, membership, saved.path, {
        schedule: "* * * * * *",
        timezone: "Nowhere/City",
        args,
      }),
      "INVALID_INPUT",
      "timezone",
    );
    assert.deepEqual(await getSchedule(services, membership, saved.path), saved);
  });

  it("creates, reads, lists, updates, pauses and deletes, with an audit row for each change", async () => {
    const path = `u/${me}/daily`;
    const created = await createSchedule(services, membership, {
      path,
      schedule: "0 30 9 * * *",
      timezone: "Europe/Paris",
      scriptPath: `u/${me}/greet`,
      args: { name: "paris" },
      summary: "morning",
    });
    assert.equal(created.enabled, true);
    assert.equal(created.permissionedAs, `u/${me}`);
    // 09:30 in Paris is 07:30 or 08:30 UTC depending on daylight saving.
    assert.ok(created.nextRunAt && created.nextRunAt.getTime() > Date.now());
    assert.match(created.nextRunAt.toISOString(), /T0[78]:30:00\.000Z$/);
    assert.deepEqual(previewTicks("0 30 9 * * *", "Europe/Paris", 1)[0], created.nextRunAt);
    await rejectsWith(
      createSchedule(services, membership, { ...created, args: { name: "again" } }),
      "CONFLICT",
      "path",
    );

    assert.deepEqual(await getSchedule(services, membership, path), created);
    assert.equal(await scheduleExists(services, membership, path), true);
    assert.equal(await scheduleExists(services, membership, `u/${me}/none`), false);
    assert.deepEqual(
      (await listSchedules(services, membership)).map((s) => s.path),
      [path],
    );
    assert.equal((await listSchedules(services, membership, { scriptPath: "u/x/other" })).length, 0);

    const updated = await updateSchedule(services, membership, path, {
      schedule: "*/10 * * * * *",
      timezone: "UTC",
      args: { name: "often" },
    });
    assert.equal(updated.summary, "morning");
    assert.ok(
      updated.nextRunAt!.getTime() - Date.now() <= 10_000,
      "the next tick is recomputed from the new cron",
    );
    assert.equal(updated.nextRunAt!.getUTCSeconds() % 10, 0);

    const paused = await setScheduleEnabled(services, membership, path, false);
    assert.equal(paused.enabled, false);
    assert.equal(paused.nextRunAt, null);
    const resumed = await setScheduleEnabled(services, membership, path, true);
    assert.ok(resumed.nextRunAt && resumed.nextRunAt.getTime() > Date.now() - 1000);

    await deleteSchedule(services, membership, path);
    await rejectsWith(getSchedule(services, membership, path), "NOT_FOUND");
    await rejectsWith(deleteSchedule(services, membership, path), "NOT_FOUND");
    const { rows } = await services.pool.query<{ operation: string }>(
      "SELECT operation FROM audit_log WHERE workspace_id = $1 AND resource = $2 ORDER BY id",
      [WS, path],
    );
    assert.deepEqual(
      rows.map((row) => row.operation),
      ["schedule.create", "schedule.update", "schedule.disable", "schedule.enable", "schedule.delete"],
    );
  });

  it("lets operators read schedules but not change them; hides other users' paths", async () => {
    const path = `u/${me}/private`;
    await createSchedule(services, membership, {
      path,
      schedule: "0 0 * * * *",
      scriptPath: `u/${me}/greet`,
      args: { name: "x" },
    });
    const operator = await member("operator");
    const developer = await member("developer");
    // Operators read what they may see (their own paths): none here, and u/<me>/ is hidden.
    assert.deepEqual(await listSchedules(services, operator), []);
    await rejectsWith(getSchedule(services, operator, path), "NOT_FOUND");
    await rejectsWith(
      createSchedule(services, operator, {
        path: `u/${operator.principal.username}/mine`,
        schedule: "0 0 * * * *",
        scriptPath: `u/${me}/greet`,
        args: { name: "x" },
      }),
      "FORBIDDEN",
    );
    await rejectsWith(setScheduleEnabled(services, operator, path, false), "FORBIDDEN");
    await rejectsWith(getSchedule(services, developer, path), "NOT_FOUND");
    await rejectsWith(deleteSchedule(services, developer, path), "FORBIDDEN");
    // A developer cannot schedule a script they cannot read.
    await rejectsWith(
      createSchedule(services, developer, {
        path: `u/${developer.principal.username}/steal`,
        schedule: "0 0 * * * *",
        scriptPath: `u/${me}/greet`,
        args: { name: "x" },
      }),
      "INVALID_INPUT",
      "script_path",
    );
    assert.equal(await count("schedule"), 1);
  });

  it("runs a due tick once, as the schedule's owner, with its args and schedule_path", async () => {
    const path = `u/${me}/once`;
    await createSchedule(services, membership, {
      path,
      schedule: "0 0 * * * *",
      scriptPath: `u/${me}/greet`,
      args: { name: "tick" },
    });
    const due = new Date(Math.floor(Date.now() / 1000) * 1000 - 1000);
    await setNextRun(path, due);
    const outcomes = await runDueSchedules(services);
    assert.equal(outcomes.length, 1);
    assert.equal(outcomes[0]!.error, null);
    const job = await services.db.job.findUniqueOrThrow({ where: { id: outcomes[0]!.jobId! } });
    assert.equal(job.schedulePath, path);
    assert.equal(job.scriptPath, `u/${me}/greet`);
    assert.deepEqual(job.args, { name: "tick" });
    assert.equal(job.createdBy, me);
    assert.equal(job.permissionedAs, `u/${me}`);
    assert.equal(job.scheduledFor.getTime(), due.getTime());
    assert.deepEqual(await runDueSchedules(services), [], "nothing else is due");

    const schedule = await getSchedule(services, membership, path);
    assert.equal(schedule.lastRunAt!.getTime(), due.getTime());
    assert.ok(schedule.nextRunAt!.getTime() > Date.now());
    const runs = (await listScheduleRuns(services, membership, [path])).get(path)!;
    assert.deepEqual(
      runs.map((run) => [run.id, run.status]),
      [[job.id, "queued"]],
    );
  });

  it("two servers ticking at once start every tick exactly once, without gaps", async () => {
    const path = `u/${me}/every-second`;
    await createSchedule(services, membership, {
      path,
      schedule: "* * * * * *",
      scriptPath: `u/${me}/greet`,
      args: { name: "race" },
    });
    // Three seconds late (within the grace): those ticks are caught up one by one.
    const start = new Date(Math.floor(Date.now() / 1000) * 1000 - 3000);
    await setNextRun(path, start);
    const other = await secondServer();
    try {
      const until = Date.now() + 3000;
      while (Date.now() < until) {
        await Promise.all([runDueSchedules(services), runDueSchedules(other), runDueSchedules(services)]);
        await sleep(20);
      }
    } finally {
      await other.close();
    }
    const ticks = await jobTicks(path);
    assert.ok(ticks.length >= 6, `expected at least 6 ticks, got ${ticks.length}`);
    assert.equal(ticks[0], start.getTime());
    assert.equal(new Set(ticks).size, ticks.length, "no tick ran twice");
    for (let i = 1; i < ticks.length; i++)
      assert.equal(ticks[i]! - ticks[i - 1]!, 1000, "no tick was skipped");
  });

  it("after downtime runs only the most recent missed tick, then resumes", async () => {
    const path = `u/${me}/after-downtime`;
    await createSchedule(services, membership, {
      path,
      schedule: "*/2 * * * * *",
      scriptPath: `u/${me}/greet`,
      args: { name: "late" },
    });
    const hourAgo = new Date(Math.floor(Date.now() / 2000) * 2000 - 3600_000);
    await setNextRun(path, hourAgo);
    const before = Date.now();
    const outcomes = await runDueSchedules(services);
    // One catch-up run, not a storm. On a slow machine the call may cross the next 2-s boundary,
    // and then that (on time) tick runs too, right after.
    assert.ok(outcomes.length === 1 || outcomes.length === 2, `${outcomes.length} runs`);
    const [outcome] = outcomes;
    assert.ok(outcome!.skipped >= 1000, `skipped ${outcome!.skipped}`);
    // The run is for the latest tick at or before now, which is at most one period old.
    assert.ok(outcome!.tick.getTime() <= Date.now() && outcome!.tick.getTime() > before - 2000 - 100);
    assert.equal(outcome!.tick.getUTCSeconds() % 2, 0);
    if (outcomes[1]) {
      assert.equal(outcomes[1].tick.getTime(), outcome!.tick.getTime() + 2000);
      assert.equal(outcomes[1].skipped, 0);
    }
    const last = outcomes.at(-1)!.tick.getTime();
    assert.deepEqual(
      await jobTicks(path),
      outcomes.map((o) => o.tick.getTime()),
    );
    const schedule = await getSchedule(services, membership, path);
    assert.equal(schedule.nextRunAt!.getTime(), last + 2000);
    assert.ok(MISSED_TICK_GRACE_MS >= 2000);
  });

  it("a paused schedule does not run; a tick that cannot start a job records why and moves on", async () => {
    const path = `u/${me}/paused`;
    await createSchedule(services, membership, {
      path,
      schedule: "* * * * * *",
      scriptPath: `u/${me}/greet`,
      args: { name: "p" },
      enabled: false,
    });
    await setNextRun(path, new Date(Date.now() - 1000));
    assert.deepEqual(await runDueSchedules(services), []);

    // The owner leaves the workspace: the tick is spent, the schedule shows the reason.
    const developer = await member("developer");
    const theirs = `u/${developer.principal.username}/orphan`;
    await deployScript(services, developer, {
      path: `u/${developer.principal.username}/s`,
      language: "bash",
      content: "echo hi",
    });
    await createSchedule(services, developer, {
      path: theirs,
      schedule: "* * * * * *",
      scriptPath: `u/${developer.principal.username}/s`,
    });
    await services.db.workspaceMember.deleteMany({
      where: { workspaceId: WS, userId: developer.principal.userId },
    });
    const due = new Date(Math.floor(Date.now() / 1000) * 1000 - 1000);
    await setNextRun(theirs, due);
    const [outcome] = await runDueSchedules(services);
    assert.equal(outcome!.jobId, null);
    assert.match(outcome!.error!, /no longer a member/);
    const stored = await getSchedule(services, membership, theirs);
    assert.match(stored.error!, /no longer a member/);
    assert.ok(stored.nextRunAt!.getTime() > due.getTime());
    assert.deepEqual(await jobTicks(theirs), []);
  });
});
