// Millrace's schema inference against Windmill's own: for every signature of the corpora (the
// real-world ones of fixtures/corpus-*.ts and the edge cases of fixtures/python.ts and
// fixtures/typescript.ts), the schema Millrace infers must equal the one `wmill generate-metadata`
// writes (Windmill's parser + windmill-cli's schema step, windmill-oracle.ts), compared on type,
// format, enum, contentEncoding, items, properties, default and required. Where Windmill's parser
// is plainly wrong, Millrace keeps its answer: each such parameter is listed below with the reason,
// must really disagree (so the list stays true), and its reason is a section of
// docs/schema-inference.md. Each language needs at least 40 signatures that agree throughout.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { inferSchema } from "./index.ts";
import { bunCorpus, denoCorpus, typescriptCorpus } from "./fixtures/corpus-typescript.ts";
import { pythonCorpus } from "./fixtures/corpus-python.ts";
import type { CorpusCase } from "./fixtures/corpus-python.ts";
import { pythonCases } from "./fixtures/python.ts";
import { denoCases, typescriptCases } from "./fixtures/typescript.ts";
import { differences, windmillSchema } from "./windmill-oracle.ts";
import type { Difference } from "./windmill-oracle.ts";

const MIN_AGREEING = 40;

/** Why Millrace keeps its own answer: each key is a `### <key>` section of docs/schema-inference.md. */
export const REASONS = {
  "bytes-default": "Windmill writes a bytes default as a list of byte values under a base64-string type",
  "list-int-items": "Windmill writes the items of list[int] as numbers; Millrace keeps integers",
  "list-other-items":
    "Windmill types the items of lists of booleans, lists, tuples and untyped values as objects",
  "subscripted-dict": "Windmill does not read Dict[K, V] / dict[K, V] (no type, or the default's shape)",
  "typing-union": "Windmill does not read Union[T, None]",
  "unparsed-signature": "Windmill's parser rejects a parenthesis inside a comment of the parameter list",
  "runtime-default":
    "a default computed at run time: Windmill writes '<function call>' as the default or makes the parameter required",
  "numeric-literal": "Windmill types Literal[1, 2] as a string and drops numeric literal unions",
  tuple: "Windmill reads tuples as a resource type named tuple, or as nothing and required",
  "qualified-names": "Windmill does not read typing.X or module-qualified names (dt.datetime)",
  "keyword-and-positional-only": "Windmill drops keyword-only and positional-only parameters",
  "negative-default": "Windmill drops negative number and template-literal defaults and makes some required",
  "garbled-default": "Windmill rewrites a dict default with a non-string key and drops its tuple values",
  "forward-reference": "Windmill does not read string annotations ('int', \"datetime\")",
  "any-object": "Windmill reads Any and object as resource types named Any and object",
  sets: "Windmill does not read set[T] and reads frozenset as a resource type",
  "literal-union": "Windmill drops the enum of Literal[...] | Literal[...] | None",
  "generic-containers":
    "Windmill reads Array<T>, ReadonlyArray<T>, readonly T[], Record, Map, Set, Partial and Promise as resource types",
  "exported-const-main": "Windmill finds no parameters in `export const main = ...`",
  "ts-enum": "Windmill reads a TypeScript enum as a resource type named after it",
  "alias-in-array": "Windmill puts a local object type's resource format on the array that holds it",
  "mixed-union": "Windmill types a union of unrelated types by its default's type (int | str = 1 → integer)",
} as const;
type Reason = keyof typeof REASONS;

/** Documented disagreements: case name → parameter (or "(signature)") → reason. */
const PYTHON_DISAGREEMENTS: Record<string, Record<string, Reason>> = {
  // real-world signatures
  "batch delete by integer ids": { ids: "list-int-items" },
  "HTTP call with Dict[str, str] headers": { headers: "subscripted-dict" },
  "Union[str, None] note": { note: "typing-union" },
  "Any payload from a previous step": { previous_result: "any-object" },
  // edge cases
  "file upload as bytes": { header: "bytes-default" },
  "typed lists": { ids: "list-int-items" },
  "webhook payload and headers": { headers: "subscripted-dict" },
  "three spellings of optional": { note: "typing-union" },
  "one parameter per line, comments, trailing comma and return annotation": {
    "(signature)": "unparsed-signature",
  },
  "no annotations: types from literal defaults": { d: "list-int-items" },
  "defaults computed at run time have no default value but are optional": {
    path: "runtime-default",
    n: "runtime-default",
    key: "runtime-default",
  },
  "integer literals": { level: "numeric-literal" },
  "nested generics": { matrix: "list-other-items", pairs: "list-other-items" },
  "typing-qualified annotations": { a: "qualified-names", b: "qualified-names" },
  "keyword-only arguments and **kwargs": { limit: "keyword-and-positional-only" },
  "positional-only marker and *args": {
    a: "keyword-and-positional-only",
    b: "keyword-and-positional-only",
    op: "keyword-and-positional-only",
  },
  "signed, scientific and underscored numbers": { offset: "negative-default" },
  "f-string default is not static": { greeting: "runtime-default" },
  "nested literal containers and tuples as defaults": { opts: "garbled-default", point: "tuple" },
  "string forward references": { a: "forward-reference", b: "forward-reference", c: "list-int-items" },
  "Any and object accept anything": { data: "any-object", meta: "any-object" },
  "sets and a call default": { ids: "sets", words: "sets" },
  "float parameter with an integer default": { ratio: "negative-default" },
  "comprehension and conditional defaults": { squares: "runtime-default", mode: "runtime-default" },
  "Literal union spread over two Literals with None": { color: "literal-union" },
  "a union of unrelated types has no type": { value: "mixed-union" },
};

const TYPESCRIPT_DISAGREEMENTS: Record<string, Record<string, Reason>> = {
  // real-world signatures
  "arrow-function main": { url: "exported-const-main", retries: "exported-const-main" },
  "Record<string, string> headers": { headers: "generic-containers" },
  "Array<string> recipients": { recipients: "generic-containers" },
  // edge cases
  "arrays in both spellings, optional array": { tags: "generic-containers", flags: "list-other-items" },
  "exported arrow function": { url: "exported-const-main", method: "exported-const-main" },
  "exported function expression": { a: "exported-const-main", b: "exported-const-main" },
  "Record and object": { headers: "generic-containers" },
  "string enum declaration": { region: "ts-enum" },
  "object and array literal defaults": { opts: "list-int-items" },
  "negative number and template literal defaults": {
    offset: "negative-default",
    prefix: "negative-default",
    ratio: "negative-default",
  },
  "bigint and tuple": { point: "tuple" },
  "a local object alias inside an array is inlined": { items: "alias-in-array" },
  "readonly array and numeric literal union": { ids: "generic-containers" },
  "a union of unrelated types has no type": { value: "mixed-union" },
};

type OracleLanguage = "python3" | "bun" | "deno";

/** [language, real-world signatures, edge cases, documented disagreements] */
const suites: [OracleLanguage, CorpusCase[], CorpusCase[], Record<string, Record<string, Reason>>][] = [
  ["python3", pythonCorpus, pythonCases, PYTHON_DISAGREEMENTS],
  ["bun", [...typescriptCorpus, ...bunCorpus], typescriptCases, TYPESCRIPT_DISAGREEMENTS],
  [
    "deno",
    [...typescriptCorpus, ...denoCorpus],
    [...typescriptCases, ...denoCases],
    TYPESCRIPT_DISAGREEMENTS,
  ],
];

function compare(language: OracleLanguage, source: string): Difference[] {
  let windmill;
  try {
    windmill = windmillSchema(language, source);
  } catch {
    return [{ param: "(signature)", windmill: "absent", millrace: "absent" }];
  }
  return differences(windmill, inferSchema(language, source));
}

for (const [language, realWorld, edgeCases, documented] of suites) {
  test(`${language}: Millrace's schemas agree with Windmill's parser on at least ${MIN_AGREEING} real-world signatures`, () => {
    const cases = [...realWorld, ...edgeCases];
    assert.equal(new Set(cases.map((c) => c.name)).size, cases.length, "case names are distinct");
    let agreeing = 0;
    let realWorldAgreeing = 0;
    const failures: string[] = [];
    for (const { name, source } of cases) {
      const found = compare(language, source);
      const expected = documented[name] ?? {};
      if (found.length === 0 && Object.keys(expected).length === 0) {
        agreeing++;
        if (realWorld.some((c) => c.name === name)) realWorldAgreeing++;
      }
      const foundParams = found.map((d) => d.param).sort();
      const expectedParams = Object.keys(expected).sort();
      if (JSON.stringify(foundParams) !== JSON.stringify(expectedParams)) {
        const undocumented = found.filter((d) => !(d.param in expected));
        const stale = expectedParams.filter((p) => !foundParams.includes(p));
        failures.push(
          `${name}:` +
            undocumented.map(
              (d) =>
                `\n  ${d.param}: Windmill ${JSON.stringify(d.windmill)}, Millrace ${JSON.stringify(d.millrace)}`,
            ) +
            (stale.length ? `\n  documented but agreeing: ${stale.join(", ")}` : ""),
        );
      }
    }
    const disagreeing = cases.filter((c) => documented[c.name]).length;
    console.log(
      `${language}: ${realWorldAgreeing} of ${realWorld.length} real-world signatures and ` +
        `${agreeing - realWorldAgreeing} of ${edgeCases.length} edge cases agree with Windmill's parser; ` +
        `${disagreeing} signatures have documented disagreements`,
    );
    assert.deepEqual(failures, [], "undocumented differences or stale disagreements");
    assert.ok(
      realWorldAgreeing >= MIN_AGREEING,
      `${realWorldAgreeing} agreeing real-world signatures, fewer than ${MIN_AGREEING}`,
    );
  });
}

test("every documented disagreement names a case of the corpus and a reason of docs/schema-inference.md", () => {
  const doc = readFileSync(new URL("../../../../docs/schema-inference.md", import.meta.url), "utf8");
  const names = new Set(
    [...pythonCorpus, ...pythonCases, ...typescriptCorpus, ...typescriptCases, ...denoCases].map(
      (c) => c.name,
    ),
  );
  for (const table of [PYTHON_DISAGREEMENTS, TYPESCRIPT_DISAGREEMENTS]) {
    for (const [name, params] of Object.entries(table)) {
      assert.ok(names.has(name), `no case named ${name}`);
      for (const reason of Object.values(params)) {
        assert.ok(doc.includes(`### ${reason}\n`), `docs/schema-inference.md has no section ### ${reason}`);
      }
    }
  }
  for (const reason of Object.keys(REASONS)) {
    assert.ok(doc.includes(`### ${reason}\n`), `docs/schema-inference.md has no section ### ${reason}`);
  }
});

test("the comparison sees a difference: a changed type, a dropped required, a changed default", () => {
  const windmill = windmillSchema("python3", "def main(a: int, b: str = 'x'):\n    pass\n");
  const millrace = inferSchema("python3", "def main(a: float, b: str = 'y', c = 1):\n    pass\n");
  assert.deepEqual(
    differences(windmill, millrace).map((d) => d.param),
    ["a", "b", "c"],
  );
});

test("shipped code imports neither Windmill's parsers nor the oracle", () => {
  const root = new URL("../../../../", import.meta.url);
  const offenders: string[] = [];
  for (const top of ["packages", "apps"]) {
    const entries = readdirSync(new URL(`${top}/`, root), { recursive: true, encoding: "utf8" });
    for (const entry of entries) {
      if (entry.includes("node_modules") || entry.includes(".next") || !/\.(ts|tsx|js|mjs)$/.test(entry))
        continue;
      if (/\.test\.tsx?$/.test(entry) || entry.endsWith("windmill-oracle.ts")) continue;
      const text = readFileSync(new URL(`${top}/${entry}`, root), "utf8");
      if (
        /(?:from\s*|import\(\s*|require\(\s*)["'](?:windmill-parser-wasm|[^"']*windmill-oracle)/.test(text)
      ) {
        offenders.push(`${top}/${entry}`);
      }
    }
  }
  assert.deepEqual(offenders, []);
});
