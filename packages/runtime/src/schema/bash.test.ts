import assert from "node:assert/strict";
import { test } from "node:test";
import { inferSchema, SignatureError } from "../index.ts";
import { expectSchema, normalize } from "./testing.ts";
import type { ArgSchema } from "./types.ts";

const cases: [string, string, ArgSchema][] = [
  ["no arguments", 'echo "hello"\n', expectSchema({}, [])],
  ["quoted $1", 'name="$1"\necho "$name"\n', expectSchema({ name: { type: "string" } }, ["name"])],
  ["unquoted $1", "name=$1\n", expectSchema({ name: { type: "string" } }, ["name"])],
  ["braces", 'name="${1}"\n', expectSchema({ name: { type: "string" } }, ["name"])],
  [
    "default value",
    'greeting="${1:-hello world}"\n',
    expectSchema({ greeting: { type: "string", default: "hello world" } }, []),
  ],
  ["empty default", 'x="${1:-}"\n', expectSchema({ x: { type: "string", default: "" } }, [])],
  ["dash default without colon", "x=${1-abc}\n", expectSchema({ x: { type: "string", default: "abc" } }, [])],
  [
    "ordered by position, not by line",
    'second="$2"\nfirst="$1"\nthird="${3:-c}"\n',
    expectSchema(
      { first: { type: "string" }, second: { type: "string" }, third: { type: "string", default: "c" } },
      ["first", "second"],
    ),
  ],
  [
    "indented, exported and commented",
    '  export token="$1"  # the token\nreadonly n="$2"; echo hi\n',
    expectSchema({ token: { type: "string" }, n: { type: "string" } }, ["token", "n"]),
  ],
  [
    "function locals and other expansions are ignored",
    'f() {\n  local x="$1"\n}\nall="$@"\ncount=$#\nname="$1"\n',
    expectSchema({ name: { type: "string" } }, ["name"]),
  ],
  ["$10 is not a position", 'x="$10"\n', expectSchema({}, [])],
  [
    "first binding of a position wins",
    'a="$1"\na2="$1"\nb="$2"\n',
    expectSchema({ a: { type: "string" }, b: { type: "string" } }, ["a", "b"]),
  ],
  [
    "CRLF line endings",
    'x="$1"\r\ny="${2:-z}"\r\n',
    expectSchema({ x: { type: "string" }, y: { type: "string", default: "z" } }, ["x"]),
  ],
];

for (const [name, source, expected] of cases) {
  test(`bash schema: ${name}`, () => {
    assert.deepEqual(normalize(inferSchema("bash", source)), normalize(expected));
  });
}

test("bash schema: a gap in positions is an error", () => {
  assert.throws(
    () => inferSchema("bash", 'a="$1"\nc="$3"\n'),
    (e: unknown) => {
      assert.ok(e instanceof SignatureError);
      assert.match(e.message, /\$2 is never named/);
      return true;
    },
  );
});

test("bash schema: one name bound to two positions is an error", () => {
  assert.throws(() => inferSchema("bash", 'a="$1"\na="$2"\n'), SignatureError);
});
