// Windmill's add_batch_jobs (issue 38 item 5's bulk enqueue path), over HTTP on a real PostgreSQL:
// n copies of a no-op, a script or a raw script in one statement, each with its pg-boss dispatch
// as pg-boss's own insert would write it, claimable by workers; bad input refused by field with
// nothing written; the caller's role checked.
import assert from "node:assert/strict";
import type http from "node:http";
import { after, before, describe, it } from "node:test";
import {
  claimJobs,
  createApiToken,
  createUser,
  enqueueJobs,
  noopJob,
  principalOf,
  type Membership,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { serveFetchHandler, stopAppServices, bearerCaller } from "./testing/node-server.ts";

const WS = "batch";

let services: TestServices;
let server: http.Server;
let base: string;
let membership: Membership;
let me: string;
let token: string;
let operatorToken: string;

const call = bearerCaller(
  () => base,
  () => token,
);

const batch = (n: number | string, body: unknown, bearer = token) =>
  call("POST", `/api/w/${WS}/jobs/add_batch_jobs/${n}`, body, bearer);

async function jobCount(): Promise<number> {
  const { rows } = await services.pool.query("SELECT count(*)::int AS n FROM job WHERE workspace_id = $1", [
    WS,
  ]);
  return rows[0].n;
}

/** The pg-boss row of each job (its first dispatch shares its id). */
async function dispatches(ids: string[]) {
  const { rows } = await services.pool.query(
    `SELECT id::text, name, data, priority, state, retry_limit, retry_delay, retry_backoff, retry_delay_max,
            expire_seconds, deletion_seconds, policy, dead_letter, heartbeat_seconds, blocked, blocking,
            pending_dependencies, singleton_key, singleton_on, group_id, group_tier,
            keep_until - start_after AS kept_for
       FROM pgboss.job WHERE id = ANY($1::uuid[]) ORDER BY id`,
    [ids],
  );
  return rows;
}

describe("add_batch_jobs", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership } = await createTestMember(services, WS));
    me = membership.principal.username;
    token = await createApiToken(services, membership.principal, { label: "t" });
    const operator = await createUser(services, { email: "batch-op@example.com", password: "password123" });
    await services.db.workspaceMember.create({
      data: { workspaceId: WS, userId: operator.id, role: "operator" },
    });
    operatorToken = await createApiToken(services, principalOf(operator), { label: "op" });
    process.env.DATABASE_URL = services.database.url;
    process.env.MILLRACE_SECRET_KEY = "batch-jobs-test-key-0123456789abcdef";
    const { handleRest } = await import("./handler.ts");
    ({ server, url: base } = await serveFetchHandler(handleRest));
  });
  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await stopAppServices();
    await services?.close();
  });

  it("writes n no-op jobs with one audit entry; workers claim each of them once", async () => {
    const made = await batch(25, { kind: "noop", tag: "batchnoop" });
    assert.equal(made.status, 200, made.text);
    const ids = made.json() as string[];
    assert.equal(ids.length, 25);
    assert.equal(new Set(ids).size, 25);
    const { rows } = await services.pool.query(
      "SELECT id::text, kind, tag, status, created_by, args FROM job WHERE id = ANY($1::uuid[])",
      [ids],
    );
    assert.equal(rows.length, 25);
    for (const row of rows) {
      assert.deepEqual(
        { kind: row.kind, tag: row.tag, status: row.status, created_by: row.created_by, args: row.args },
        { kind: "noop", tag: "batchnoop", status: "queued", created_by: me, args: {} },
      );
    }
    const { rows: audit } = await services.pool.query(
      "SELECT parameters FROM audit_log WHERE workspace_id = $1 AND operation = 'jobs.run.noop'",
      [WS],
    );
    assert.equal(audit.length, 1);
    assert.equal(audit[0].parameters.count, 25);
    assert.ok(ids.includes(audit[0].parameters.first_job_id));

    const claimed = new Set<string>();
    for (let round = 0; round < 5 && claimed.size < 25; round++) {
      const jobs = await claimJobs(
        services.pool,
        services.boss,
        "batchnoop",
        Array.from({ length: 10 }, (_, i) => `batch-worker-${round}-${i}`),
      );
      for (const job of jobs) {
        assert.ok(!claimed.has(job.id), `${job.id} claimed twice`);
        claimed.add(job.id);
      }
    }
    assert.deepEqual([...claimed].sort(), [...ids].sort());
  });

  it("writes each dispatch as pg-boss's own insert does, column for column", async () => {
    const input = noopJob(WS, "batchparity", {}, me);
    const [single] = await enqueueJobs(services.pool, services.boss, [input]);
    const made = await batch(1, { kind: "noop", tag: "batchparity" });
    assert.equal(made.status, 200, made.text);
    const [copy] = made.json() as string[];
    const [ours, theirs] = await dispatches([copy!, single!]).then((rows) =>
      rows.sort((a) => (a.id === copy ? -1 : 1)),
    );
    const { id: _a, data: dataOurs, ...oursRest } = ours;
    const { id: _b, data: dataTheirs, ...theirsRest } = theirs;
    assert.deepEqual(oursRest, theirsRest);
    assert.deepEqual(dataOurs, { jobId: copy });
    assert.deepEqual(dataTheirs, { jobId: single });
  });

  it("runs copies of a script and of a raw script, as their single runs would be written", async () => {
    const created = await call("POST", `/api/w/${WS}/scripts/create`, {
      path: `u/${me}/batched`,
      language: "bash",
      summary: "",
      content: 'echo "batched"\n',
    });
    assert.equal(created.status, 201, created.text);
    const made = await batch(3, { kind: "script", path: `u/${me}/batched` });
    assert.equal(made.status, 200, made.text);
    const single = await call("POST", `/api/w/${WS}/jobs/run/p/u/${me}/batched`, {});
    const { rows } = await services.pool.query(
      `SELECT id::text, kind, script_path, script_hash, language, content, tag, timeout_secs, permissioned_as, trigger_kind
         FROM job WHERE id = ANY($1::uuid[])`,
      [[...(made.json() as string[]), single.text]],
    );
    assert.equal(rows.length, 4);
    const shape = ({ id: _id, ...rest }: Record<string, unknown>) => rest;
    for (const row of rows) assert.deepEqual(shape(row), shape(rows[0]));
    assert.equal(rows[0].script_path, `u/${me}/batched`);

    const raw = await batch(2, {
      kind: "rawscript",
      rawscript: { language: "python3", content: "def main():\n  return 1\n" },
    });
    assert.equal(raw.status, 200, raw.text);
    const { rows: previews } = await services.pool.query(
      "SELECT kind, language, tag FROM job WHERE id = ANY($1::uuid[])",
      [raw.json()],
    );
    assert.deepEqual(previews, [
      { kind: "preview", language: "python3", tag: "python3" },
      { kind: "preview", language: "python3", tag: "python3" },
    ]);
  });

  it("refuses bad input by field and writes nothing", async () => {
    const before = await jobCount();
    for (const [n, body, field] of [
      [0, { kind: "noop" }, "n"],
      [10_001, { kind: "noop" }, "n"],
      ["many", { kind: "noop" }, "n"],
      [2, { kind: "script" }, "path"],
      [2, { kind: "script", path: `u/${me}/missing` }, "missing"],
      [2, { kind: "rawscript" }, "rawscript"],
      [2, { kind: "flow", path: "f/x", flow_value: { modules: [] } }, "flow_value"],
      [2, { kind: "shell" }, "kind"],
      [2, { kind: "noop", tag: "no spaces" }, "tag"],
    ] as const) {
      const refused = await batch(n, body);
      assert.ok(
        [400, 404].includes(refused.status),
        `${JSON.stringify(body)}: ${refused.status} ${refused.text}`,
      );
      assert.ok(refused.text.includes(field), `${JSON.stringify(body)}: ${refused.text}`);
    }
    assert.equal(await jobCount(), before);
  });

  it("holds the caller to their role: an operator may batch runs, not raw scripts, nor another's private script", async () => {
    const ran = await batch(2, { kind: "noop" }, operatorToken);
    assert.equal(ran.status, 200, ran.text);
    const before = await jobCount();
    const hidden = await batch(2, { kind: "script", path: `u/${me}/batched` }, operatorToken);
    assert.equal(hidden.status, 404, hidden.text);
    const refused = await batch(
      2,
      { kind: "rawscript", rawscript: { language: "bash", content: "id" } },
      operatorToken,
    );
    assert.equal(refused.status, 403, refused.text);
    assert.equal(await jobCount(), before);
  });
});
