import assert from "node:assert/strict";
import { test } from "node:test";
import { inferSchema, SignatureError } from "../index.ts";
import { sqlArguments } from "./sql.ts";

test("postgresql schema: database comes first, then $1..$n in position order", () => {
  const schema = inferSchema("postgresql", "-- $2 b (int) = 1\n-- $1 a (text)\nSELECT $1, $2;\n");
  assert.deepEqual(schema.order, ["database", "a", "b"]);
  assert.deepEqual(schema.required, ["database", "a"]);
  assert.deepEqual(Object.keys(schema.properties), ["database", "a", "b"]);
  assert.deepEqual(schema.properties.database, {
    type: "object",
    description: "",
    format: "resource-postgresql",
  });
});

test("postgresql sqlArguments: the declarations the executor binds, as written", () => {
  const source = [
    '-- $2 tags (text[]) = ["a"]',
    "-- $1 name",
    "SELECT '",
    "-- $3 fake (int)",
    "';",
    "-- $1 duplicate (int)",
    "-- $3 price (numeric(10, 2))",
  ].join("\n");
  assert.deepEqual(sqlArguments(source), [
    { position: 2, name: "tags", type: "text[]", defaultText: '["a"]', line: 1 },
    { position: 1, name: "name", type: null, defaultText: null, line: 2 },
    { position: 3, name: "price", type: "numeric(10, 2)", defaultText: null, line: 7 },
  ]);
});

test("postgresql schema: errors name the line", () => {
  const bad: [string, RegExp][] = [
    ["-- $1 x (int) = abc\n", /default `abc` is not a valid integer at line 1/],
    ["-- $1 x (int) = 1.5\n", /default `1.5` is not a valid integer at line 1/],
    ["-- $1 x (bool) = yes\n", /default `yes` is not a boolean at line 1/],
    ["-- $1 x (jsonb) = [1]\n", /default is not a JSON object at line 1/],
    ["-- $1 x (int[]) = {1,2}\n", /default is not a JSON array at line 1/],
    ["select 1;\n-- $1 x (int; drop table t)\n", /`int; drop table t` is not a PostgreSQL type at line 2/],
    ["-- $1 x (varchar(10)\n", /the type of `x` is not closed at line 1/],
    ["-- $1\n", /`\$1` needs a name/],
    ["-- $1 x (int) trailing\n", /unexpected `trailing` after argument `x` at line 1/],
    ["-- $1 database (text)\n", /`database` is reserved/],
    ["-- $2 x (int)\n", /\$1 is never named/],
    ["-- $1 a (int)\n-- $2 a (int)\n", /`a` is bound to two positions/],
  ];
  for (const [source, message] of bad) {
    assert.throws(
      () => inferSchema("postgresql", source),
      (e: unknown) => e instanceof SignatureError && message.test(e.message),
      source,
    );
  }
});

test("postgresql schema: comments that are not declarations are ignored", () => {
  const schema = inferSchema("postgresql", "-- list users\n--$ 1 nope\n-- $x y\nSELECT 1;\n");
  assert.deepEqual(schema.order, ["database"]);
});
