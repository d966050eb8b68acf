import assert from "node:assert/strict";
import { test } from "node:test";
import { inferSchema, SignatureError } from "../index.ts";
import { expectSchema, normalize } from "./testing.ts";
import type { ArgSchema } from "./types.ts";

const cases: [string, string, ArgSchema][] = [
  ["no parameters", "select 1;\n", expectSchema({}, [])],
  ["text", "-- $1 name (text)\nselect $1::text;\n", expectSchema({ name: { type: "string" } }, ["name"])],
  ["varchar with length", "-- $1 code (varchar(10))\n", expectSchema({ code: { type: "string" } }, ["code"])],
  [
    "string default in quotes",
    "-- $1 name (text) = 'it''s'\n",
    expectSchema({ name: { type: "string", default: "it's" } }, []),
  ],
  [
    "unquoted string default",
    "-- $1 name (text) = bob\n",
    expectSchema({ name: { type: "string", default: "bob" } }, []),
  ],
  [
    "integers",
    "-- $1 a (int) = 3\n-- $2 b (integer)\n-- $3 c (bigint) = -7\n",
    expectSchema(
      { a: { type: "integer", default: 3 }, b: { type: "integer" }, c: { type: "integer", default: -7 } },
      ["b"],
    ),
  ],
  [
    "numbers",
    "-- $1 a (float) = 1.5\n-- $2 b (real)\n-- $3 c (numeric(10,2))\n-- $4 d (double precision)\n",
    expectSchema(
      {
        a: { type: "number", default: 1.5 },
        b: { type: "number" },
        c: { type: "number" },
        d: { type: "number" },
      },
      ["b", "c", "d"],
    ),
  ],
  [
    "booleans",
    "-- $1 a (bool) = true\n-- $2 b (boolean) = FALSE\n",
    expectSchema({ a: { type: "boolean", default: true }, b: { type: "boolean", default: false } }, []),
  ],
  ["no type means text", "-- $1 who\n", expectSchema({ who: { type: "string" } }, ["who"])],
  [
    "ordered by position",
    "-- $2 b (int)\n-- $1 a (text)\n",
    expectSchema({ a: { type: "string" }, b: { type: "integer" } }, ["a", "b"]),
  ],
  [
    "timestamps, json and arrays",
    '-- $1 at (timestamptz)\n-- $2 doc (jsonb) = {"a": 1}\n-- $3 tags (text[])\n',
    expectSchema(
      {
        at: { type: "string", format: "date-time" },
        doc: { type: "object", default: { a: 1 } },
        tags: { type: "array", items: { type: "string" } },
      },
      ["at", "tags"],
    ),
  ],
  ["null default", "-- $1 x (int) = null\n", expectSchema({ x: { type: "integer", nullable: true } }, [])],
];

for (const [name, source, expected] of cases) {
  test(`postgresql schema: ${name}`, () => {
    assert.deepEqual(normalize(inferSchema("postgresql", source)), normalize(expected));
  });
}

test("postgresql schema: errors", () => {
  assert.throws(() => inferSchema("postgresql", "-- $1 x (geometry)\n"), /unknown type `geometry` at line 1/);
  assert.throws(() => inferSchema("postgresql", "-- $1 x (int) = abc\n"), /not a valid integer/);
  assert.throws(() => inferSchema("postgresql", "-- $2 x (int)\n"), SignatureError);
});
