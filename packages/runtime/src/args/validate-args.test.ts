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
