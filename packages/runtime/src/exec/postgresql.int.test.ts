// postgresql jobs against the test run's PostgreSQL (a scratch database of their own).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
// eslint-disable-next-line no-restricted-imports -- the test plays the user's own database
import pg from "pg";
import type { ExecuteOutcome } from "./execute.ts";
import { run, scratchDir } from "./testing.ts";

const root = scratchDir();
const adminUrl = process.env.MILLRACE_TEST_ADMIN_URL;
const dbname = `millrace_test_pgjob_${randomBytes(4).toString("hex")}`;
let database: Record<string, unknown>;

async function admin<T>(fn: (client: pg.Client) => Promise<T>, db?: string): Promise<T> {
  const url = new URL(adminUrl!);
  if (db) url.pathname = `/${db}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const sql = (content: string, args: Record<string, unknown> = {}, extra = {}) =>
  run(root, { language: "postgresql", content, args: { database, ...args }, ...extra });

function resultOf(outcome: ExecuteOutcome): unknown {
  assert.equal(outcome.status, "success", JSON.stringify(outcome));
  return outcome.status === "success" ? outcome.result : undefined;
}

function errorOf(outcome: ExecuteOutcome): { name: string; message: string } {
  assert.equal(outcome.status, "failure", JSON.stringify(outcome));
  return outcome.status === "failure" ? outcome.error : { name: "", message: "" };
}

describe("postgresql jobs", () => {
  before(async () => {
    assert.ok(adminUrl, "run through `npm run test:int` (MILLRACE_TEST_ADMIN_URL)");
    await admin((c) => c.query(`CREATE DATABASE "${dbname}"`));
    const url = new URL(adminUrl);
    // Shaped like a resolved `postgresql` resource; `prefer` falls back to plain text here.
    database = {
      host: url.hostname,
      port: Number(url.port || 5432),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      dbname,
      sslmode: "prefer",
    };
  });
  after(async () => {
    await admin((c) => c.query(`DROP DATABASE IF EXISTS "${dbname}" WITH (FORCE)`));
  });

  test("typed arguments by position, defaults from the comments, rows as the result", async () => {
    const content = [
      "-- $1 n (int)",
      "-- $2 name (text) = 'anon'",
      "-- $3 tags (text[])",
      "-- $4 doc (jsonb)",
      "-- $5 big (bigint)",
      "-- $6 day (date)",
      "SELECT $1 + 1 AS next, pg_typeof($1)::text AS t, $2 AS name, $3 AS tags, $4 AS doc,",
      "       $5 AS big, $6 AS day, $4 -> 'k' AS k;",
    ].join("\n");
    const r = await sql(content, {
      n: 41,
      tags: ["a", "b,c"],
      doc: [{ k: 1 }],
      big: "9007199254740993",
      day: "2024-02-29",
    });
    assert.deepEqual(resultOf(r.outcome), [
      {
        next: 42,
        t: "integer",
        name: "anon",
        tags: ["a", "b,c"],
        doc: [{ k: 1 }],
        big: "9007199254740993",
        day: "2024-02-29",
        k: null,
      },
    ]);
  });

  test("a multi-statement script returns the last statement's rows; literals keep their ;", async () => {
    const content = [
      "-- $1 label (text)",
      "CREATE TABLE items (id serial PRIMARY KEY, label text);",
      "INSERT INTO items (label) VALUES ($1), ('semi;colon'), ($1 || '-2');",
      "DO $$ BEGIN RAISE NOTICE 'inserted; %', (SELECT count(*) FROM items); END $$;",
      "SELECT id, label FROM items ORDER BY id;",
    ].join("\n");
    const r = await sql(content, { label: "first" });
    assert.deepEqual(resultOf(r.outcome), [
      { id: 1, label: "first" },
      { id: 2, label: "semi;colon" },
      { id: 3, label: "first-2" },
    ]);
    assert.match(r.logs, /NOTICE: inserted; 3/);
    const update = await sql("UPDATE items SET label = 'x' WHERE id = 1");
    assert.deepEqual(resultOf(update.outcome), []);
  });

  test("errors: SQL errors carry their code; an undeclared $n and a missing database are explained", async () => {
    const syntax = errorOf((await sql("SELEC 1")).outcome);
    assert.equal(syntax.name, "PostgresError 42601");
    assert.match(syntax.message, /syntax error/);
    const undeclared = errorOf((await sql("SELECT $1")).outcome);
    assert.match(undeclared.message, /uses \$1 but does not declare it/);
    const missing = await run(root, { language: "postgresql", content: "SELECT 1" });
    assert.match(errorOf(missing.outcome).message, /needs a `database` argument/);
    const badPassword = await run(root, {
      language: "postgresql",
      content: "SELECT 1",
      args: { database: { ...database, password: "wrong", user: "nobody_here" } },
    });
    assert.equal(badPassword.outcome.status, "failure");
  });

  async function sleepers(): Promise<number> {
    const { rows } = await admin((c) =>
      c.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()",
        [dbname],
      ),
    );
    return rows[0]!.n;
  }

  test("the job timeout cancels the running statement on the server", async () => {
    const r = await sql("SELECT pg_sleep(30)", {}, { timeoutMs: 500 });
    assert.deepEqual(errorOf(r.outcome), {
      name: "TimeoutError",
      message: "Job exceeded the timeout of 0.5 seconds",
    });
    assert.ok(r.ms < 5000, `took ${r.ms} ms`);
    assert.equal(await sleepers(), 0);
  });

  test("abort cancels the running statement on the server", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const r = await sql("SELECT pg_sleep(30)", {}, { signal: controller.signal });
    assert.deepEqual(r.outcome, { status: "canceled" });
    assert.ok(r.ms < 5000, `took ${r.ms} ms`);
    assert.equal(await sleepers(), 0);
  });
});
