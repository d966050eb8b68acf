import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Pool } from "@millrace/db";
import { AppError } from "../errors.ts";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import type { Membership } from "../membership.ts";
import { getJobUpdate } from "./log-stream.ts";
import { getJob, listJobs, parseJobListQuery, type JobListQuery } from "./queries.ts";

let services: TestServices;
let alpha: Membership;
let beta: Membership;
const ids: Record<string, string> = {};

interface Row {
  name: string;
  workspace?: string;
  status: string;
  path?: string | null;
  kind?: string;
  by?: string;
  tag?: string;
  /** Minutes after 2025-01-01T00:00:00Z. */
  at: number;
}

async function insertJob(pool: Pool, row: Row): Promise<string> {
  const createdAt = new Date(Date.UTC(2025, 0, 1) + row.at * 60_000);
  const finished = ["success", "failure", "canceled"].includes(row.status);
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO job (id, workspace_id, kind, script_path, language, tag, status, created_by, permissioned_as,
       created_at, scheduled_for, started_at, completed_at)
     VALUES (gen_random_uuid(), $1, $2, $3, 'bash', $4, $5::job_status, $6, 'u/' || $6, $7::timestamptz, $7::timestamptz,
       CASE WHEN $5 <> 'queued' THEN $7::timestamptz END, CASE WHEN $8 THEN $7::timestamptz END)
     RETURNING id`,
    [
      row.workspace ?? "alpha",
      row.kind ?? "script",
      row.path === undefined ? "f/ops/deploy" : row.path,
      row.tag ?? "bash",
      row.status,
      row.by ?? "alice",
      createdAt.toISOString(),
      finished,
    ],
  );
  return rows[0]!.id;
}

const ROWS: Row[] = [
  { name: "deployOk", status: "success", at: 1 },
  { name: "deployFailed", status: "failure", at: 2 },
  { name: "deployCanceled", status: "canceled", at: 3, by: "bob" },
  { name: "backup", status: "running", path: "f/ops/backup", at: 4, tag: "gpu" },
  { name: "underscore", status: "queued", path: "u/a_b/x", at: 5, by: "bob" },
  { name: "notUnderscore", status: "success", path: "u/axb/x", at: 6 },
  { name: "preview", status: "success", path: null, kind: "preview", at: 7 },
  { name: "dependency", status: "success", path: "f/ops/deploy", kind: "dependency", at: 8 },
  { name: "other", status: "success", workspace: "beta", at: 9 },
];

async function names(query: JobListQuery, scope?: "queue" | "completed", membership = alpha) {
  const jobs = await listJobs(services, membership, { ...parseJobListQuery(query), scope });
  const byId = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
  return jobs.map((job) => byId.get(job.id));
}

describe("job lists and reads", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership: alpha } = await createTestMember(services, "alpha"));
    ({ membership: beta } = await createTestMember(services, "beta"));
    for (const row of ROWS) ids[row.name] = await insertJob(services.pool, row);
  });
  after(() => services?.close());

  it("lists the workspace's jobs newest first, in pages", async () => {
    const all = ROWS.filter((row) => !row.workspace)
      .map((row) => row.name)
      .reverse();
    assert.deepEqual(await names({}), all);
    assert.deepEqual(await names({ per_page: "3" }), all.slice(0, 3));
    assert.deepEqual(await names({ per_page: "3", page: "2" }), all.slice(3, 6));
    assert.deepEqual(await names({ per_page: "3", page: "3" }), all.slice(6));
    assert.deepEqual(await names({ per_page: "3", page: "4" }), []);
    assert.deepEqual(await names({ order_desc: "false", per_page: "2" }), ["deployOk", "deployFailed"]);
  });

  it("pages through jobs of every status in PostgreSQL's order, ties on created_at broken by id", async () => {
    // Each status group is read from its own index and the groups are merged (list-order.ts).
    const { membership: gamma } = await createTestMember(services, "gamma");
    const statuses = ["queued", "running", "success", "failure", "canceled"];
    for (let i = 0; i < 14; i++)
      await insertJob(services.pool, {
        name: `tie${i}`,
        workspace: "gamma",
        status: statuses[i % 5]!,
        at: 20 + (i % 3),
      });
    for (const desc of [true, false]) {
      const { rows } = await services.pool.query<{ id: string }>(
        `SELECT id FROM job WHERE workspace_id = 'gamma'
          ORDER BY created_at ${desc ? "DESC" : "ASC"}, id ${desc ? "DESC" : "ASC"}`,
      );
      const listed: string[] = [];
      for (let page = 1; page <= 4; page++) {
        const jobs = await listJobs(services, gamma, { perPage: 4, page, orderDesc: desc });
        listed.push(...jobs.map((job) => job.id));
      }
      assert.deepEqual(
        listed,
        rows.map((row) => row.id),
        `order_desc=${desc}`,
      );
    }
  });

  it("filters by path, creator, tag and kind, with lists and negation", async () => {
    assert.deepEqual(await names({ script_path_exact: "f/ops/backup" }), ["backup"]);
    assert.deepEqual(await names({ script_path_exact: "f/ops/backup,u/a_b/x" }), ["underscore", "backup"]);
    assert.deepEqual(
      await names({ script_path_exact: "!f/ops/deploy,!f/ops/backup" }),
      ["preview", "notUnderscore", "underscore"],
      "a negated path keeps jobs without a path",
    );
    assert.deepEqual(await names({ script_path_start: "u/a_" }), ["underscore"], "_ is no wildcard");
    assert.deepEqual(await names({ script_path_start: "!f/" }), ["preview", "notUnderscore", "underscore"]);
    assert.deepEqual(await names({ created_by: "bob" }), ["underscore", "deployCanceled"]);
    assert.deepEqual(await names({ created_by: "!alice" }), ["underscore", "deployCanceled"]);
    assert.deepEqual(await names({ tag: "gpu" }), ["backup"]);
    assert.deepEqual(await names({ job_kinds: "preview" }), ["preview"]);
    assert.deepEqual(await names({ job_kinds: "dependencies" }), ["dependency"]);
    assert.equal((await names({ job_kinds: "!script" })).length, 2);
    assert.deepEqual(await names({ job_kinds: "flow" }), []);
  });

  it("filters by state and creation time", async () => {
    assert.deepEqual(await names({ running: "true" }), ["backup"]);
    assert.equal((await names({ running: "false" })).includes("backup"), false);
    assert.deepEqual(await names({ success: "false" }), ["deployCanceled", "deployFailed"]);
    assert.deepEqual(await names({ success: "true", script_path_exact: "f/ops/deploy" }), [
      "dependency",
      "deployOk",
    ]);
    assert.deepEqual(await names({ status: "queued" }), ["underscore"]);
    assert.deepEqual(await names({ status: "canceled" }), ["deployCanceled"]);
    assert.deepEqual(
      await names({ created_after: "2025-01-01T00:02:00Z", created_before: "2025-01-01T00:04:00Z" }),
      ["backup", "deployCanceled"],
      "after is exclusive, before inclusive",
    );
    assert.deepEqual(await names({ created_before: "2025-01-01T02:02:00+02:00" }), [
      "deployFailed",
      "deployOk",
    ]);
  });

  it("splits the queue from the completed jobs", async () => {
    assert.deepEqual(await names({}, "queue"), ["underscore", "backup"]);
    assert.deepEqual(await names({ running: "false" }, "queue"), ["underscore"]);
    assert.deepEqual(await names({ success: "true" }, "queue"), []);
    const completed = await names({}, "completed");
    assert.equal(completed.length, 6);
    assert.ok(!completed.includes("backup") && !completed.includes("underscore"));
    assert.deepEqual(await names({ success: "false" }, "completed"), ["deployCanceled", "deployFailed"]);
  });

  it("caps the page size and refuses a bad page", async () => {
    assert.equal((await listJobs(services, alpha, { perPage: 5000 })).length, 8);
    await assert.rejects(
      listJobs(services, alpha, { page: 0 }),
      (error: unknown) => error instanceof AppError && error.field === "page",
    );
  });

  it("keeps each workspace to itself", async () => {
    assert.deepEqual(await names({}, undefined, beta), ["other"]);
    assert.equal((await names({ script_path_exact: "f/ops/deploy" })).includes("other"), false);
    for (const read of [
      () => getJob(services, alpha, ids.other!),
      () => getJobUpdate(services, alpha, ids.other!),
      () => getJob(services, beta, ids.deployOk!),
      () => getJob(services, alpha, "not-a-uuid"),
    ]) {
      await assert.rejects(
        read(),
        (error: unknown) => error instanceof AppError && error.code === "NOT_FOUND",
      );
    }
    assert.equal((await getJob(services, beta, ids.other!)).status, "success");
  });

  it("reads a job with or without its logs", async () => {
    await services.pool.query("INSERT INTO job_log (job_id, logs) VALUES ($1, 'hello\n')", [ids.deployOk]);
    assert.equal((await getJob(services, alpha, ids.deployOk!)).logs, "hello\n");
    assert.equal((await getJob(services, alpha, ids.deployOk!, { withLogs: false })).logs, undefined);
    assert.equal((await getJob(services, alpha, ids.deployFailed!)).logs, "", "no log row yet");
  });

  it("filters by schedule path and by label (wm_labels in the result)", async () => {
    const base = ROWS.filter((row) => !row.workspace).length;
    const extra: [string, string | null, unknown][] = [
      ["nightly", "f/ops/nightly", { wm_labels: ["deploy", "prod"], rows: 3 }],
      ["hourly", "f/ops/hourly", { wm_labels: ["deploy"] }],
      ["malformed", null, { wm_labels: "deploy" }],
      ["nullLabels", null, { wm_labels: null }],
      ["scalar", null, "deploy"],
    ];
    for (const [index, [name, schedule, result]] of extra.entries()) {
      ids[name] = await insertJob(services.pool, { name, status: "success", at: 100 + index });
      await services.pool.query("UPDATE job SET schedule_path = $2, result = $3::jsonb WHERE id = $1", [
        ids[name],
        schedule,
        JSON.stringify(result),
      ]);
    }
    try {
      assert.deepEqual(await names({ schedule_path: "f/ops/nightly" }), ["nightly"]);
      assert.deepEqual(await names({ schedule_path: "f/ops/nightly,f/ops/hourly" }), ["hourly", "nightly"]);
      assert.equal((await names({ schedule_path: "!f/ops/nightly" })).length, base + 4);
      assert.deepEqual(await names({ label: "prod" }), ["nightly"]);
      assert.deepEqual(await names({ label: "deploy" }), ["hourly", "nightly"]);
      assert.deepEqual(await names({ label: "deploy,prod" }), ["hourly", "nightly"]);
      assert.deepEqual(await names({ label: "nope" }), []);
      const unlabelled = await names({ label: "!deploy" });
      assert.equal(unlabelled.length, base + 2, "jobs without labels are not labelled deploy");
      assert.deepEqual(unlabelled.slice(0, 2), ["scalar", "nullLabels"]);
      assert.ok(!unlabelled.includes("malformed"), "a wm_labels that is no array matches no label filter");
      assert.deepEqual((await names({ label: "!prod" })).slice(0, 3), ["scalar", "nullLabels", "hourly"]);
      assert.deepEqual(await names({ label: "!prod,!deploy" }), unlabelled);
      assert.deepEqual(await names({ label: "deploy", schedule_path: "f/ops/hourly" }), ["hourly"]);
    } finally {
      await services.pool.query("DELETE FROM job WHERE id = ANY($1::uuid[])", [
        extra.map(([name]) => ids[name]),
      ]);
      for (const [name] of extra) delete ids[name];
    }
  });
});
