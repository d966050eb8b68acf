import { PythonParser } from "./python-parser.ts";
import type { PyExpr, PyParameter } from "./python-parser.ts";
import { decodePythonString, tokenizePython } from "./python-tokens.ts";
import type { Token } from "./python-tokens.ts";
import { SignatureError, buildSchema, itemsOf, propertyFromValue, resourceProperty } from "./types.ts";
import type { ArgSchema, InferredParam, PropertySchema } from "./types.ts";

// Python `main` signatures → Windmill's JSON schema. The mapping follows Windmill's Python parser:
// str/int/float/bool/dict/list, list[T] with items, Optional[T] / T | None not required and nullable,
// Literal["a", "b"] a string enum, datetime a date-time string, bytes a base64 string, and any other
// class name a resource type (`db: postgresql` → format resource-postgresql).

const NOT_LITERAL = Symbol("not a literal");

interface Mapped {
  property: PropertySchema;
  optional: boolean;
}

const any = (): Mapped => ({ property: { description: "" }, optional: false });
const plain = (type: PropertySchema["type"], extra: Partial<PropertySchema> = {}): Mapped => ({
  property: { type, description: "", ...extra },
  optional: false,
});

const ARRAYS = new Set(
  `
  list List Sequence MutableSequence Iterable Collection tuple Tuple set Set frozenset FrozenSet
  AbstractSet
`
    .trim()
    .split(/\s+/),
);
const OBJECTS = new Set([
  "dict",
  "Dict",
  "Mapping",
  "MutableMapping",
  "TypedDict",
  "DefaultDict",
  "OrderedDict",
]);
const ANY = new Set(["Any", "object", "None", "NoneType", "TypeVar"]);

/** Finds `def main(` at the top level (column 0); a later definition rebinds `main`, as in Python. */
function findMain(tokens: Token[]): number {
  let found = -1;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.indent !== 0 || t.kind !== "name") continue;
    const def = t.value === "async" ? i + 1 : i;
    if (tokens[def]?.value === "def" && tokens[def + 1]?.value === "main" && tokens[def + 2]?.value === "(") {
      found = def + 3;
    }
  }
  return found;
}

/** The dotted name of `a.b.c`, or null if the expression is not a plain (qualified) name. */
function dottedName(e: PyExpr): string | null {
  if (e.kind === "name") return e.id;
  if (e.kind === "attribute") {
    const base = dottedName(e.value);
    return base === null ? null : `${base}.${e.attr}`;
  }
  return null;
}

function isNone(e: PyExpr): boolean {
  return (e.kind === "constant" && e.value === null) || (e.kind === "name" && e.id === "None");
}

/** Flattens `A | B | C` (PEP 604). */
function unionMembers(e: PyExpr): PyExpr[] | null {
  if (e.kind !== "binary" || e.op !== "|") return null;
  return [...(unionMembers(e.left) ?? [e.left]), ...(unionMembers(e.right) ?? [e.right])];
}

function forwardReference(text: string): PyExpr {
  try {
    const tokens = tokenizePython(text);
    const parser = new PythonParser(tokens, 0, decodePythonString);
    const expr = parser.parseExpression();
    return parser.position === tokens.length ? expr : { kind: "dynamic" };
  } catch {
    return { kind: "dynamic" };
  }
}

function mapLiterals(values: unknown[]): PropertySchema {
  if (values.length === 0) return { description: "" };
  if (values.every((v) => typeof v === "string"))
    return { type: "string", description: "", enum: values as string[] };
  if (values.every((v) => typeof v === "number" && Number.isInteger(v)))
    return { type: "integer", description: "" };
  if (values.every((v) => typeof v === "number")) return { type: "number", description: "" };
  if (values.every((v) => typeof v === "boolean")) return { type: "boolean", description: "" };
  return { description: "" };
}

function literalArguments(e: PyExpr): unknown[] {
  if (e.kind !== "subscript" || dottedName(e.value)?.split(".").pop() !== "Literal") return [NOT_LITERAL];
  return e.index.map((item) => (item.kind === "constant" ? item.value : NOT_LITERAL));
}

function mapUnion(members: PyExpr[]): Mapped {
  const rest = members.filter((m) => !isNone(m));
  const nullable = rest.length < members.length;
  let property: PropertySchema;
  if (rest.length === 1) property = mapType(rest[0] as PyExpr).property;
  else if (rest.length > 1 && rest.every((m) => literalArguments(m)[0] !== NOT_LITERAL)) {
    property = mapLiterals(rest.flatMap(literalArguments));
  } else property = { description: "" };
  if (nullable) property.nullable = true;
  return { property, optional: nullable };
}

function arrayOf(element: PyExpr | undefined): Mapped {
  const mapped = plain("array");
  const items = element ? itemsOf(mapType(element).property) : undefined;
  if (items) mapped.property.items = items;
  return mapped;
}

function mapType(e: PyExpr): Mapped {
  const members = unionMembers(e);
  if (members) return mapUnion(members);
  if (e.kind === "constant" && typeof e.value === "string") return mapType(forwardReference(e.value));
  if (isNone(e)) return any();
  const subscript = e.kind === "subscript" ? e : null;
  const name = dottedName(subscript ? subscript.value : e);
  if (name === null) return any();
  const args = subscript?.index ?? [];
  const base = name.split(".").pop() as string;
  if (ARRAYS.has(base)) return arrayOf(args[0]);
  if (OBJECTS.has(base)) return plain("object");
  if (ANY.has(base)) return any();
  switch (base) {
    case "str":
      return plain("string");
    case "int":
      return plain("integer");
    case "float":
    case "Decimal":
      return plain("number");
    case "bool":
      return plain("boolean");
    case "bytes":
    case "bytearray":
      return plain("string", { contentEncoding: "base64" });
    case "datetime":
      return plain("string", { format: "date-time" });
    case "date":
      // `datetime.date` is a date; a bare `date` imported from datetime too.
      return plain("string", { format: "date" });
    case "Optional":
      return mapUnion([...args, { kind: "constant", value: null }]);
    case "Union":
      return mapUnion(args);
    case "Literal":
      return { property: mapLiterals(literalArguments(e)), optional: false };
    case "Annotated":
    case "Required":
    case "NotRequired":
    case "Final":
      return args[0] ? mapType(args[0]) : any();
  }
  // typing.X names that are not types users pass in (Callable, Type, …) have no schema.
  if (name.startsWith("typing.")) return any();
  return { property: resourceProperty(base), optional: false };
}

/** What `ast.literal_eval` would accept (minus sets and complex numbers); NOT_LITERAL otherwise. */
function literalValue(e: PyExpr): unknown {
  switch (e.kind) {
    case "constant":
      return e.value;
    case "bytes":
      return Buffer.from(e.value).toString("base64");
    case "unary": {
      const v = literalValue(e.operand);
      if (typeof v !== "number" || (e.op !== "-" && e.op !== "+")) return NOT_LITERAL;
      return e.op === "-" ? -v : v;
    }
    case "list":
    case "tuple": {
      const out = e.elements.map(literalValue);
      return out.includes(NOT_LITERAL) ? NOT_LITERAL : out;
    }
    case "dict": {
      const out: Record<string, unknown> = {};
      for (const [k, v] of e.entries) {
        const key = literalValue(k);
        const value = literalValue(v);
        if (key === NOT_LITERAL || value === NOT_LITERAL || (key !== null && typeof key === "object")) {
          return NOT_LITERAL;
        }
        out[typeof key === "string" ? key : pythonKey(key)] = value;
      }
      return out;
    }
    default:
      return NOT_LITERAL;
  }
}

/** JSON object keys are strings: json.dumps turns 1, True and None keys into "1", "true", "null". */
function pythonKey(key: unknown): string {
  return key === null ? "null" : String(key);
}

function toParam(p: PyParameter): InferredParam {
  const value = p.default ? literalValue(p.default) : NOT_LITERAL;
  const mapped: Mapped = p.annotation
    ? mapType(p.annotation)
    : {
        property: value === NOT_LITERAL ? { description: "" } : propertyFromValue(value, true),
        optional: false,
      };
  const property = mapped.property;
  if (value === null) property.nullable = true;
  else if (value !== NOT_LITERAL) property.default = value;
  return { name: p.name, property, required: !p.default && !mapped.optional };
}

export function inferPythonSchema(content: string): ArgSchema {
  const tokens = tokenizePython(content);
  const start = findMain(tokens);
  if (start === -1) throw new SignatureError("python3: no `def main(...)` found");
  const parameters = new PythonParser(tokens, start, decodePythonString).parseParameters();
  return buildSchema(parameters.filter((p) => !p.variadic).map(toParam));
}
