import assert from "node:assert/strict";
import { test } from "node:test";
import { ArgsError, inferSchema, validateArgs } from "../index.ts";
import type { ArgSchema } from "../index.ts";

const schema: ArgSchema = inferSchema(
  "python3",
  [
    "def main(",
    "    name: str,",
    "    count: int = 2,",
    "    ratio: float = 0.5,",
    "    on: bool = False,",
    "    cfg: dict = {'a': [1]},",
    "    tags: List[int] = [],",
    '    mode: Literal["fast", "slow"] = "fast",',
    "    when: Optional[datetime] = None,",
    "    anything=None,",
    "):",
    "    pass",
  ].join("\n"),
);

function argsError(field: string, message: RegExp) {
  return (e: unknown): boolean => {
    assert.ok(e instanceof ArgsError, `expected ArgsError, got ${String(e)}`);
    assert.equal(e.field, field);
    assert.match(e.message, message);
    return true;
  };
}

test("validateArgs fills defaults, keeps schema order and drops unknown args", () => {
  const out = validateArgs(schema, { extra: 1, name: "x" });
  assert.deepEqual(out, {
    name: "x",
    count: 2,
    ratio: 0.5,
    on: false,
    cfg: { a: [1] },
    tags: [],
    mode: "fast",
  });
  assert.deepEqual(Object.keys(out), ["name", "count", "ratio", "on", "cfg", "tags", "mode"]);
});

test("validateArgs copies defaults so callers cannot mutate the schema", () => {
  const out = validateArgs(schema, { name: "x" });
  (out.cfg as { a: number[] }).a.push(2);
  assert.deepEqual(schema.properties.cfg?.default, { a: [1] });
});

test("validateArgs coerces loose inputs", () => {
  const out = validateArgs(schema, {
    name: 42,
    count: " 7 ",
    ratio: "1e3",
    on: "true",
    cfg: '{"b": 2}',
    tags: ["1", 2],
    when: "2024-05-01T10:00:00Z",
    anything: { deep: true },
  });
  assert.equal(out.name, "42");
  assert.equal(out.count, 7);
  assert.equal(out.ratio, 1000);
  assert.equal(out.on, true);
  assert.deepEqual(out.cfg, { b: 2 });
  assert.deepEqual(out.tags, [1, 2]);
  assert.equal(out.when, "2024-05-01T10:00:00Z");
  assert.deepEqual(out.anything, { deep: true });
});

test("validateArgs keeps null for nullable args and treats null as absent otherwise", () => {
  const out = validateArgs(schema, { name: "x", when: null, count: null });
  assert.equal(out.when, null);
  assert.equal(out.count, 2);
});

test("validateArgs errors name the field", () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{}, "name", /missing required argument "name"/],
    [{ name: null }, "name", /"name" must not be null/],
    [{ name: { a: 1 } }, "name", /"name" must be a string, got an object/],
    [{ name: "x", count: "abc" }, "count", /"count" must be an integer, got a string: "abc"/],
    [{ name: "x", count: 1.5 }, "count", /"count" must be an integer/],
    [{ name: "x", count: "" }, "count", /"count" must be an integer/],
    [{ name: "x", ratio: "1.2.3" }, "ratio", /"ratio" must be a number/],
    [{ name: "x", ratio: Number.NaN }, "ratio", /"ratio" must be a number/],
    [{ name: "x", on: "yes" }, "on", /"on" must be a boolean/],
    [{ name: "x", cfg: [1] }, "cfg", /"cfg" must be an object, got an array/],
    [{ name: "x", cfg: "not json" }, "cfg", /"cfg" must be an object/],
    [{ name: "x", tags: "nope" }, "tags", /"tags" must be an array/],
    [{ name: "x", tags: [1, "two"] }, "tags", /"tags\[1\]" must be an integer, got a string: "two"/],
    [{ name: "x", mode: "medium" }, "mode", /"mode" must be one of "fast", "slow", got "medium"/],
    [{ name: "x", when: "yesterday-ish" }, "when", /"when" must be a date-time string/],
  ];
  for (const [args, field, message] of cases) {
    assert.throws(() => validateArgs(schema, args), argsError(field, message), JSON.stringify(args));
  }
});

test("validateArgs with a TypeScript schema", () => {
  const ts = inferSchema("bun", "export async function main(a: number, b?: string[], c = true) {}");
  assert.deepEqual(validateArgs(ts, { a: "3", b: '["x"]' }), { a: 3, b: ["x"], c: true });
  assert.throws(() => validateArgs(ts, { a: "three" }), argsError("a", /must be a number/));
});

test("validateArgs with an empty schema drops everything", () => {
  assert.deepEqual(validateArgs(inferSchema("bash", "echo hi"), { a: 1 }), {});
});

test("validateArgs accepts stored schemas without order or required", () => {
  const stored = { properties: { a: { type: "integer", description: "" } } } as unknown as ArgSchema;
  assert.deepEqual(validateArgs(stored, { a: "5", b: 1 }), { a: 5 });
});

test("validateArgs refuses each Python type's wrong values, naming the argument", () => {
  const py = inferSchema(
    "python3",
    [
      "def main(",
      "    at: datetime,",
      "    day: date,",
      "    blob: bytes,",
      '    env: Literal["dev", "prod"],',
      "    n: int,",
      "    x: float,",
      "    ids: List[int],",
      "    grid: list[list[float]],",
      "    opts: Optional[dict] = None,",
      "):",
      "    pass",
    ].join("\n"),
  );
  const good = {
    at: "2024-02-29T23:59:59.123+01:00",
    day: "2024-02-29",
    blob: "aGVsbG8=",
    env: "prod",
    n: 3,
    x: 2,
    ids: [1, "2"],
    grid: [[1.5], []],
  };
  assert.deepEqual(validateArgs(py, good), { ...good, ids: [1, 2] });
  assert.equal(validateArgs(py, { ...good, at: "2024-05-01 10:00" }).at, "2024-05-01 10:00");
  assert.equal(validateArgs(py, { ...good, opts: null }).opts, null);
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ at: "2024-02-30T10:00:00Z" }, "at", /"at" must be a date-time string/],
    [{ at: "2024-05-01" }, "at", /"at" must be a date-time string/],
    [{ at: "2024-05-01T25:00:00Z" }, "at", /"at" must be a date-time string/],
    [{ at: "May 1st" }, "at", /"at" must be a date-time string/],
    [{ day: "2023-02-29" }, "day", /"day" must be a date string/],
    [{ day: "2024-05-01T00:00:00Z" }, "day", /"day" must be a date string/],
    [{ blob: "not base64!" }, "blob", /"blob" must be a base64 string/],
    [{ blob: "abc" }, "blob", /"blob" must be a base64 string/],
    [{ env: "staging" }, "env", /"env" must be one of "dev", "prod", got "staging"/],
    [{ n: 2.5 }, "n", /"n" must be an integer/],
    [{ n: "2.0x" }, "n", /"n" must be an integer/],
    [{ x: "fast" }, "x", /"x" must be a number/],
    [{ ids: [1, 2.5] }, "ids", /"ids\[1\]" must be an integer/],
    [{ grid: [[1], "no"] }, "grid", /"grid\[1\]" must be an array/],
    [{ grid: [[1, "a"]] }, "grid", /"grid\[0\]\[1\]" must be a number/],
    [{ opts: [] }, "opts", /"opts" must be an object, got an array/],
  ];
  for (const [patch, field, message] of cases) {
    assert.throws(
      () => validateArgs(py, { ...good, ...patch }),
      argsError(field, message),
      JSON.stringify(patch),
    );
  }
  for (const name of Object.keys(good)) {
    const { [name]: _omitted, ...rest } = good as Record<string, unknown>;
    assert.throws(
      () => validateArgs(py, rest),
      argsError(name, new RegExp(`missing required argument "${name}"`)),
    );
  }
});

test("validateArgs checks nested object fields and arrays of objects", () => {
  const schema = inferSchema(
    "bun",
    [
      "export async function main(",
      "  user: { name: string; age?: number; tags: string[] },",
      "  rows: { id: number; when: Date }[] = [],",
      ") {}",
    ].join("\n"),
  );
  const out = validateArgs(schema, {
    user: '{"name": "ada", "tags": ["x"], "extra": true}',
    rows: [{ id: "1", when: "2024-01-01T00:00:00Z" }],
  });
  assert.deepEqual(out, {
    user: { name: "ada", tags: ["x"], extra: true },
    rows: [{ id: 1, when: "2024-01-01T00:00:00Z" }],
  });
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ user: { tags: [] } }, "user", /"user" is missing field "name"/],
    [{ user: { name: "a", tags: [], age: "old" } }, "user", /"user.age" must be a number/],
    [{ user: { name: "a", tags: "x" } }, "user", /"user.tags" must be an array/],
    [{ user: { name: "a", tags: [] }, rows: [{ id: 1 }] }, "rows", /"rows\[0\]" is missing field "when"/],
    [
      { user: { name: "a", tags: [] }, rows: [{ id: 1, when: "soon" }] },
      "rows",
      /"rows\[0\].when" must be a date-time string/,
    ],
  ];
  for (const [args, field, message] of cases) {
    assert.throws(() => validateArgs(schema, args), argsError(field, message), JSON.stringify(args));
  }
});

test("validateArgs keeps $var: and $res: references for the worker to resolve", () => {
  const sql = inferSchema("postgresql", "-- $1 n (int) = 5\nSELECT $1;\n");
  assert.deepEqual(validateArgs(sql, { database: "$res:f/data/pg" }), { database: "$res:f/data/pg", n: 5 });
  assert.deepEqual(validateArgs(sql, { database: { host: "localhost" }, n: "$var:f/data/n" }), {
    database: { host: "localhost" },
    n: "$var:f/data/n",
  });
  assert.throws(
    () => validateArgs(sql, { n: 1 }),
    argsError("database", /missing required argument "database"/),
  );
  assert.throws(
    () => validateArgs(sql, { database: "f/data/pg" }),
    argsError("database", /must be an object/),
  );
});

test("validateArgs with a bash schema passes strings and fills defaults", () => {
  const bash = inferSchema("bash", 'name="$1"\ngreeting="${2:-hello}"\n');
  assert.deepEqual(validateArgs(bash, { name: 7 }), { name: "7", greeting: "hello" });
  assert.throws(() => validateArgs(bash, {}), argsError("name", /missing required argument "name"/));
  assert.throws(() => validateArgs(bash, { name: ["a"] }), argsError("name", /"name" must be a string/));
});

test("validateArgs: null inside arrays and objects only where nullable", () => {
  const schema = inferSchema(
    "bun",
    "export function main(a: (string | null)[], b: { c: number | null; d: string }) {}",
  );
  assert.deepEqual(validateArgs(schema, { a: ["x", null], b: { c: null, d: "y" } }), {
    a: ["x", null],
    b: { c: null, d: "y" },
  });
  assert.throws(
    () => validateArgs(schema, { a: [], b: { c: 1, d: null } }),
    argsError("b", /"b.d" must be a string, got null/),
  );
});

test("validateArgs accepts Windmill's stored base64 format for bytes", () => {
  const stored = {
    properties: { blob: { type: "string", format: "base64", description: "" } },
    required: ["blob"],
  } as unknown as ArgSchema;
  assert.deepEqual(validateArgs(stored, { blob: "AA==" }), { blob: "AA==" });
  assert.throws(() => validateArgs(stored, { blob: "A" }), argsError("blob", /base64/));
});
