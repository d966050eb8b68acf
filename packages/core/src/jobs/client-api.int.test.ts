// What Windmill's clients ask of jobs besides the job itself (client-api.ts): where a job waits in
// the queue, its progress, the lineage of a job started by a job, getResultMaybe, batch re-runs
// and the starters' email addresses, each kept to the caller's workspace.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "../testing.ts";
import type { Membership } from "../membership.ts";
import {
  creatorEmails,
  getJobProgress,
  getResultMaybe,
  getRootJobId,
  jobLineage,
  queuePosition,
  rerunJobs,
  setJobProgress,
} from "./client-api.ts";

let services: TestServices;
let alpha: Membership;
let beta: Membership;

interface Row {
  workspace: string;
  status: string;
  kind?: string;
  /** Seconds from now (negative: in the past). */
  scheduledIn?: number;
  rootJobId?: string | null;
  result?: unknown;
}

async function insertJob(row: Row): Promise<string> {
  const { rows } = await services.pool.query<{ id: string }>(
    `INSERT INTO job (id, workspace_id, kind, script_path, language, tag, status, created_by, permissioned_as,
       scheduled_for, started_at, root_job_id, result)
     VALUES (gen_random_uuid(), $1, $2, 'f/ops/deploy', 'bash', 'bash', $3::job_status, $4, 'u/' || $4,
       now() + make_interval(secs => $5), CASE WHEN $3 <> 'queued' THEN now() END, $6, $7)
     RETURNING id`,
    [
      row.workspace,
      row.kind ?? "script",
      row.status,
      row.workspace === "alpha" ? alpha.principal.username : beta.principal.username,
      row.scheduledIn ?? -60,
      row.rootJobId ?? null,
      row.result === undefined ? null : JSON.stringify(row.result),
    ],
  );
  return rows[0]!.id;
}

describe("jobs as Windmill's clients ask for them", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership: alpha } = await createTestMember(services, "alpha"));
    ({ membership: beta } = await createTestMember(services, "beta"));
  });
  after(async () => {
    await services?.close();
  });

  it("the queue position counts the workspace's due jobs queued at or before the time", async () => {
    const first = Date.now() - 50_000;
    await insertJob({ workspace: "alpha", status: "queued", scheduledIn: -50 });
    await insertJob({ workspace: "alpha", status: "queued", scheduledIn: -40 });
    await insertJob({ workspace: "alpha", status: "running", scheduledIn: -45 });
    // Not due yet, and another workspace's: not counted.
    await insertJob({ workspace: "alpha", status: "queued", scheduledIn: 3600 });
    await insertJob({ workspace: "beta", status: "queued", scheduledIn: -55 });
    assert.equal(await queuePosition(services, alpha, first - 5_000), null);
    assert.equal(await queuePosition(services, alpha, first + 1_000), 1);
    assert.equal(await queuePosition(services, alpha, Date.now()), 2);
    assert.equal(await queuePosition(services, beta, Date.now()), 1);
    await rejectsWith(queuePosition(services, alpha, 8.64e15 + 1), "INVALID_INPUT", "scheduled_for");
  });

  it("progress goes from 0 to 99, never back, on script jobs of the caller's workspace only", async () => {
    const job = await insertJob({ workspace: "alpha", status: "running" });
    assert.equal(await getJobProgress(services, alpha, job), null);
    await setJobProgress(services, alpha, job, 40.7);
    await setJobProgress(services, alpha, job, 20);
    assert.equal(await getJobProgress(services, alpha, job), 40);
    await setJobProgress(services, alpha, job, -5);
    assert.equal(await getJobProgress(services, alpha, job), 40);
    await setJobProgress(services, alpha, job, 1000);
    assert.equal(await getJobProgress(services, alpha, job), 99);
    assert.equal(
      await getJobProgress(services, alpha, await insertJob({ workspace: "alpha", status: "success" })),
      100,
    );
    const flow = await insertJob({ workspace: "alpha", status: "running", kind: "flow" });
    await rejectsWith(setJobProgress(services, alpha, flow, 10), "INVALID_INPUT", "id");
    await rejectsWith(setJobProgress(services, beta, job, 10), "NOT_FOUND");
    await rejectsWith(getJobProgress(services, beta, job), "NOT_FOUND");
  });

  it("a job started by a job records its parent and the root of the lineage", async () => {
    const parent = await insertJob({ workspace: "alpha", status: "running" });
    assert.equal(await jobLineage(services, alpha, undefined, undefined), undefined);
    assert.deepEqual(await jobLineage(services, alpha, parent, undefined), {
      parentJobId: parent,
      rootJobId: parent,
    });
    const flow = await insertJob({ workspace: "alpha", status: "running", kind: "flow" });
    const step = await insertJob({ workspace: "alpha", status: "running", rootJobId: flow });
    assert.deepEqual(await jobLineage(services, alpha, step, undefined), {
      parentJobId: step,
      rootJobId: flow,
    });
    assert.equal(await getRootJobId(services, alpha, step), flow);
    assert.equal(await getRootJobId(services, alpha, parent), parent);
    // A flow run is only the root: its children are the steps its engine starts.
    assert.deepEqual(await jobLineage(services, alpha, flow, undefined), {
      parentJobId: null,
      rootJobId: flow,
    });
    await rejectsWith(jobLineage(services, alpha, "nope", undefined), "INVALID_INPUT", "parent_job");
    await rejectsWith(jobLineage(services, beta, parent, undefined), "INVALID_INPUT", "parent_job");
    await rejectsWith(jobLineage(services, alpha, parent, "nope"), "INVALID_INPUT", "root_job");
  });

  it("getResultMaybe says whether the job started and finished, with its result once finished", async () => {
    const queued = await insertJob({ workspace: "alpha", status: "queued" });
    assert.deepEqual(await getResultMaybe(services, alpha, queued), {
      completed: false,
      result: null,
      success: false,
      started: false,
    });
    const running = await insertJob({ workspace: "alpha", status: "running" });
    assert.equal((await getResultMaybe(services, alpha, running)).started, true);
    const failed = await insertJob({
      workspace: "alpha",
      status: "failure",
      result: { error: { message: "x" } },
    });
    assert.deepEqual(await getResultMaybe(services, alpha, failed), {
      completed: true,
      result: { error: { message: "x" } },
      success: false,
      started: true,
    });
    await rejectsWith(getResultMaybe(services, beta, failed), "NOT_FOUND");
  });

  it("a batch re-run answers an error line for a job it cannot re-run, and the starters' addresses", async () => {
    const missing = "0191e0c4-0000-7000-8000-000000000000";
    const noop = await insertJob({ workspace: "alpha", status: "success", kind: "noop" });
    const other = await insertJob({ workspace: "beta", status: "success" });
    assert.deepEqual(await rerunJobs(services, alpha, { jobIds: [missing, noop, other] }), [
      `Error: job ${missing}: job ${missing} not found`,
      `Error: job ${noop}: a noop job cannot be re-run`,
      `Error: job ${other}: job ${other} not found`,
    ]);
    const emails = await creatorEmails(services, [
      alpha.principal.username,
      "gone",
      alpha.principal.username,
    ]);
    assert.deepEqual(
      [...emails],
      [
        [alpha.principal.username, alpha.principal.email],
        ["gone", "gone"],
      ],
    );
  });
});
