import assert from "node:assert/strict";
import { test } from "node:test";
import { inferSchema, SignatureError } from "../index.ts";
import { expectSchema, normalize } from "./testing.ts";
import type { ArgSchema } from "./types.ts";

const cases: [string, string, ArgSchema][] = [
  ["no parameters", "def main():\n    return 1\n", expectSchema({}, [])],
  [
    "basic types",
    "def main(a: str, b: int, c: float, d: bool, e: dict, f: list):\n    pass\n",
    expectSchema(
      {
        a: { type: "string" },
        b: { type: "integer" },
        c: { type: "number" },
        d: { type: "boolean" },
        e: { type: "object" },
        f: { type: "array" },
      },
      ["a", "b", "c", "d", "e", "f"],
    ),
  ],
  [
    "async def with defaults",
    'async def main(name: str = "world", n: int = -3, ratio: float = 1.5e2, on: bool = True):\n    pass\n',
    expectSchema(
      {
        name: { type: "string", default: "world" },
        n: { type: "integer", default: -3 },
        ratio: { type: "number", default: 150 },
        on: { type: "boolean", default: true },
      },
      [],
    ),
  ],
  [
    "multi-line parameters with comments and trailing comma",
    "def main(\n    a: str,  # first, with a comma\n    b: int = 2,  # (paren in comment\n):\n    pass\n",
    expectSchema({ a: { type: "string" }, b: { type: "integer", default: 2 } }, ["a"]),
  ],
  [
    "generic containers",
    "from typing import List, Dict\ndef main(a: List[str], b: list[int], c: Dict[str, int], d: tuple[float, ...]):\n    pass\n",
    expectSchema(
      {
        a: { type: "array", items: { type: "string" } },
        b: { type: "array", items: { type: "integer" } },
        c: { type: "object" },
        d: { type: "array", items: { type: "number" } },
      },
      ["a", "b", "c", "d"],
    ),
  ],
  [
    "Optional, union with None and None default",
    "def main(a: Optional[str], b: int | None = None, c: typing.Optional[List[str]] = None, d: str = None):\n    pass\n",
    expectSchema(
      {
        a: { type: "string", nullable: true },
        b: { type: "integer", nullable: true },
        c: { type: "array", items: { type: "string" }, nullable: true },
        d: { type: "string", nullable: true },
      },
      [],
    ),
  ],
  [
    "Literal enums",
    'def main(mode: Literal["fast", "slow"] = "fast", tags: list[Literal["a", "b"]] = []):\n    pass\n',
    expectSchema(
      {
        mode: { type: "string", enum: ["fast", "slow"], default: "fast" },
        tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, default: [] },
      },
      [],
    ),
  ],
  [
    "datetime and bytes",
    "import datetime\ndef main(when: datetime.datetime, day: date, blob: bytes = b'\\x00'):\n    pass\n",
    expectSchema(
      {
        when: { type: "string", format: "date-time" },
        day: { type: "string", format: "date" },
        blob: { type: "string", contentEncoding: "base64", default: "AA==" },
      },
      ["when", "day"],
    ),
  ],
  [
    "literal containers as defaults, strings with commas and brackets",
    "def main(cfg: dict = {'a': [1, 2], \"b,c\": (True, None)}, s: str = 'x, y) z', t='''multi\nline'''):\n    pass\n",
    expectSchema(
      {
        cfg: { type: "object", default: { a: [1, 2], "b,c": [true, null] } },
        s: { type: "string", default: "x, y) z" },
        t: { type: "string", default: "multi\nline" },
      },
      [],
    ),
  ],
  [
    "no annotation: type from the default, unknown without",
    "def main(a, b=3, c=0.5, d='s', e=[1], f=os.environ.get('X')):\n    pass\n",
    expectSchema(
      {
        a: {},
        b: { type: "integer", default: 3 },
        c: { type: "number", default: 0.5 },
        d: { type: "string", default: "s" },
        e: { type: "array", items: { type: "integer" }, default: [1] },
        f: {},
      },
      ["a"],
    ),
  ],
  [
    "varargs, keyword-only and positional-only markers are skipped",
    "def main(a: int, /, b: str, *args, c: bool = False, **kwargs):\n    pass\n",
    expectSchema({ a: { type: "integer" }, b: { type: "string" }, c: { type: "boolean", default: false } }, [
      "a",
      "b",
    ]),
  ],
  [
    "resource types (named as written) and Any",
    "def main(db: postgresql, client: MyResource, x: Any):\n    pass\n",
    expectSchema(
      {
        db: { type: "object", format: "resource-postgresql" },
        client: { type: "object", format: "resource-MyResource" },
        x: {},
      },
      ["db", "client", "x"],
    ),
  ],
  [
    "a def main inside strings, comments or nested blocks does not count",
    '"""\ndef main(fake: int):\n"""\n# def main(also_fake)\nclass A:\n    def main(self, nope):\n        pass\n\ndef main(real: str):\n    pass\n',
    expectSchema({ real: { type: "string" } }, ["real"]),
  ],
  [
    "decorators, return annotation and line continuation",
    "@decorator(1)\ndef main(a: int, \\\n         b: str = 'q' 'r') -> dict[str, int]:\n    pass\n",
    expectSchema({ a: { type: "integer" }, b: { type: "string", default: "qr" } }, ["a"]),
  ],
  [
    "Enum classes: string values are an enum (a member default gives its value), not their methods' locals",
    'from enum import Enum\nclass Mode(str, Enum):\n    """Modes."""\n    FAST = "fast"\n    SLOW = "slow"\n\n    def label(self):\n        x = "nope"\n        return x\n\nclass Level(Enum):\n    LOW = 1\n    HIGH = 2\n\ndef main(mode: Mode = Mode.SLOW, level: Level = Level.HIGH, other: "Mode" = None):\n    pass\n',
    expectSchema(
      {
        mode: { type: "string", enum: ["fast", "slow"], default: "slow" },
        level: { type: "integer", default: 2 },
        other: { type: "string", enum: ["fast", "slow"], nullable: true },
      },
      [],
    ),
  ],
  [
    "string forward references and Annotated",
    "def main(a: 'int', b: Annotated[str, 'meta'] = 'x'):\n    pass\n",
    expectSchema({ a: { type: "integer" }, b: { type: "string", default: "x" } }, ["a"]),
  ],
];

for (const [name, source, expected] of cases) {
  test(`python3 schema: ${name}`, () => {
    assert.deepEqual(normalize(inferSchema("python3", source)), normalize(expected));
  });
}

test("python3 schema: no main", () => {
  assert.throws(() => inferSchema("python3", "def handler(x):\n    pass\n"), {
    name: "SignatureError",
    message: "python3: no `def main(...)` found",
  });
});

test("python3 schema: syntax errors name the line", () => {
  const bad: [string, RegExp][] = [
    ["def main(a: int,\n  b: str\n\nx = 1\n", /syntax error at line 1: '\(' was never closed/],
    ["def main(a):\n    return 'oops\n", /syntax error at line 2: unterminated string literal/],
    ["x = ]\ndef main():\n    pass\n", /syntax error at line 1: unmatched '\]'/],
    ["def main(a: int = ):\n    pass\n", /syntax error at line 1: incomplete parameter a/],
    ['def main(a):\n    """never closed\n', /line 2: unterminated triple-quoted/],
    ["def main(a b):\n    pass\n", /line 1: expected '\)', found 'b'/],
    ["def main(a, a):\n    pass\n", /line 1: duplicate parameter a/],
    ["def main(a: int = 1 +):\n    pass\n", /line 1: unexpected '\)'/],
    ["def main(\n  a: List[],\n):\n    pass\n", /line 2: empty subscript/],
    ["def main(a: int = lambda: ):\n    pass\n", /line 1: unexpected '\)'/],
    ["def main(a: int = {1: }):\n    pass\n", /line 1: unexpected '}'/],
    ["def main(class: str):\n    pass\n", /expected a parameter name, found 'class'/],
    ["def main(a)\n    pass\n", /line 2: expected ':', found 'pass'/],
    ["def main(a: str = b'x' 'y'):\n    pass\n", /cannot mix bytes and nonbytes/],
  ];
  for (const [source, message] of bad) {
    assert.throws(
      () => inferSchema("python3", source),
      (e: unknown) => e instanceof SignatureError && message.test(e.message),
    );
  }
});
