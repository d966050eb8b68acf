import assert from "node:assert/strict";
import { test } from "node:test";
import { inferSchema, SignatureError } from "../index.ts";
import { expectSchema, normalize } from "./testing.ts";
import type { ArgSchema } from "./types.ts";

const cases: [string, string, ArgSchema][] = [
  ["no parameters", "export async function main() {\n  return 1;\n}\n", expectSchema({}, [])],
  [
    "primitive types",
    "export async function main(a: string, b: number, c: boolean, d: bigint) {}\n",
    expectSchema(
      { a: { type: "string" }, b: { type: "number" }, c: { type: "boolean" }, d: { type: "integer" } },
      ["a", "b", "c", "d"],
    ),
  ],
  [
    "non-async exported function with defaults",
    'export function main(name = "world", n = 3, ratio: number = -1.5, on = false) {}\n',
    expectSchema(
      {
        name: { type: "string", default: "world" },
        n: { type: "integer", default: 3 },
        ratio: { type: "number", default: -1.5 },
        on: { type: "boolean", default: false },
      },
      [],
    ),
  ],
  [
    "exported arrow function",
    "export const main = async (a: string, b?: number) => {\n  return a;\n};\n",
    expectSchema({ a: { type: "string" }, b: { type: "number" } }, ["a"]),
  ],
  [
    "arrays",
    'export function main(a: string[], b: Array<number>, c: ReadonlyArray<boolean>, d: ("x" | "y")[], e: [string, number]) {}\n',
    expectSchema(
      {
        a: { type: "array", items: { type: "string" } },
        b: { type: "array", items: { type: "number" } },
        c: { type: "array", items: { type: "boolean" } },
        d: { type: "array", items: { type: "string", enum: ["x", "y"] } },
        e: { type: "array" },
      },
      ["a", "b", "c", "d", "e"],
    ),
  ],
  [
    "objects: inline types are objects, named object types resources",
    "interface Opts { a: string }\nexport function main(a: object, b: Record<string, number>, c: { x: string }, d: Opts) {}\n",
    expectSchema(
      {
        a: { type: "object" },
        b: { type: "object" },
        c: {
          type: "object",
          properties: { x: { type: "string", description: "" } },
          required: ["x"],
        },
        d: { type: "object", format: "resource-opts" },
      },
      ["a", "b", "c", "d"],
    ),
  ],
  [
    "string literal unions and local aliases become enums",
    'type Mode = "fast" | "slow";\nexport function main(m: Mode = "fast", level: "low" | "high") {}\n',
    expectSchema(
      {
        m: { type: "string", enum: ["fast", "slow"], default: "fast" },
        level: { type: "string", enum: ["low", "high"] },
      },
      ["level"],
    ),
  ],
  [
    "optional, undefined and null unions",
    "export function main(a?: string, b: number | undefined, c: string | null, d: string | null = null) {}\n",
    expectSchema(
      {
        a: { type: "string" },
        b: { type: "number" },
        c: { type: "string", nullable: true },
        d: { type: "string", nullable: true },
      },
      [],
    ),
  ],
  [
    "any, unknown and mixed unions have no type",
    "export function main(a: any, b: unknown, c: string | number, d) {}\n",
    expectSchema({ a: {}, b: {}, c: {}, d: {} }, ["a", "b", "c", "d"]),
  ],
  [
    "Date and resource types",
    "type Postgresql = { host: string };\nexport function main(when: Date, db: Postgresql, s3: S3Bucket, db2: Postgresql | undefined) {}\n",
    expectSchema(
      {
        when: { type: "string", format: "date-time" },
        db: { type: "object", format: "resource-postgresql" },
        s3: { type: "object", format: "resource-s3_bucket" },
        db2: { type: "object", format: "resource-postgresql" },
      },
      ["when", "db", "s3"],
    ),
  ],
  [
    "recursive aliases do not loop",
    "type Tree = { children: Tree[] };\ntype A = B;\ntype B = A;\nexport function main(t: Tree[], a: A) {}\n",
    expectSchema(
      {
        t: {
          type: "array",
          items: {
            type: "object",
            properties: { children: { type: "array", items: { type: "object" }, description: "" } },
            required: ["children"],
          },
        },
        a: {},
      },
      ["t", "a"],
    ),
  ],
  [
    "object and array literal defaults",
    'export function main(cfg = { a: 1, "b": [true, null] }, list: string[] = ["x"], computed = Date.now()) {}\n',
    expectSchema(
      {
        cfg: {
          type: "object",
          properties: { a: { type: "integer", description: "" }, b: { type: "array", description: "" } },
          default: { a: 1, b: [true, null] },
        },
        list: { type: "array", items: { type: "string" }, default: ["x"] },
        computed: {},
      },
      [],
    ),
  ],
  [
    "string enum declaration",
    'enum Color { Red = "red", Blue = "blue" }\nexport function main(c: Color = Color.Red) {}\n',
    expectSchema({ c: { type: "string", enum: ["red", "blue"] } }, []),
  ],
  [
    "rest parameters are skipped; other functions are ignored",
    "function helper(x: number) {}\nexport async function main(a: string, ...rest: string[]) {}\n",
    expectSchema({ a: { type: "string" } }, ["a"]),
  ],
];

for (const language of ["bun", "deno"] as const) {
  for (const [name, source, expected] of cases) {
    test(`${language} schema: ${name}`, () => {
      assert.deepEqual(normalize(inferSchema(language, source)), normalize(expected));
    });
  }
}

test("typescript schema: errors", () => {
  assert.throws(() => inferSchema("bun", "export function handler() {}\n"), {
    message: "bun: no exported `main` function found",
  });
  assert.throws(() => inferSchema("deno", "async function main() {}\n"), {
    message: "deno: `main` must be exported",
  });
  assert.throws(() => inferSchema("bun", "export default async function main(x: string) {}\n"), {
    message: "bun: `main` must be a named export (export async function main), not the default export",
  });
  assert.throws(
    () => inferSchema("bun", "export function main(a: string) {\n  const x = ;\n}\n"),
    (e: unknown) => e instanceof SignatureError && /^bun: syntax error at line 2: /.test(e.message),
  );
  assert.throws(() => inferSchema("bun", "export function main({ a }: { a: string }) {}\n"), /plain name/);
});
