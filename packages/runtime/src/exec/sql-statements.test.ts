import assert from "node:assert/strict";
import { test } from "node:test";
import { splitSqlStatements } from "./sql-statements.ts";

const texts = (sql: string) => splitSqlStatements(sql).map((s) => s.text.trim());

test("splits on top-level semicolons and drops empty or comment-only statements", () => {
  assert.deepEqual(texts("select 1; select 2;\n-- trailing comment\n;  ;"), ["select 1", "select 2"]);
  assert.deepEqual(texts("-- $1 a (int)\nselect $1"), ["-- $1 a (int)\nselect $1"]);
});

test("semicolons and $n inside literals, identifiers, comments and dollar quotes are text", () => {
  const sql = [
    "select 'a;$1''b', E'c\\';$2', \"we;ird$3\" from t; -- x;$4",
    "/* a; /* nested; */ $5 */ select $$ ; $6 $$, $tag$ ; $7 $tag$, $1;",
    "select x$1 from y",
  ].join("\n");
  const statements = splitSqlStatements(sql);
  assert.equal(statements.length, 3);
  assert.deepEqual(
    statements.map((s) => s.params.map((p) => p.n)),
    [[], [1], []],
  );
  const second = statements[1]!;
  const p = second.params[0]!;
  assert.equal(second.text.slice(p.start, p.end), "$1");
});

test("an unterminated literal runs to the end instead of splitting", () => {
  assert.deepEqual(texts("select 'oops; select 2"), ["select 'oops; select 2"]);
});
