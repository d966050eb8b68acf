import { PythonParser } from "./python-parser.ts";
import type { PyExpr, PyParameter } from "./python-parser.ts";
import { decodePythonString, tokenizePython } from "./python-tokens.ts";
import type { Token } from "./python-tokens.ts";
import { SignatureError, buildSchema, itemsOf, sameShape } from "./types.ts";
import type { ArgSchema, InferredParam, PropertySchema } from "./types.ts";

// Python `main` signatures → Windmill's JSON schema. The mapping follows Windmill's Python parser:
// str/int/float/bool/dict/list, list[T] with items, Optional[T] / T | None not required and nullable,
// Literal["a", "b"] and string Enum classes a string enum, datetime a date-time string, bytes a
// base64 string, and any other class name a resource type named as written (`db: postgresql` →
// format resource-postgresql; `wmill.S3Object` → resource-s3_object). Where Windmill's parser is
// plainly wrong, the mapping keeps the right answer: docs/schema-inference.md lists those cases.

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

/** An `Enum` class of the file: its members' values by member name. */
type EnumClass = Map<string, unknown>;

const ENUM_BASES = new Set(["Enum", "StrEnum", "IntEnum", "enum.Enum", "enum.StrEnum", "enum.IntEnum"]);

/**
 * The `class X(..., Enum):` definitions at the top level, with their `NAME = value` members
 * (read from the tokens: members are the indented `name = literal` lines of the class body).
 */
function findEnums(tokens: Token[]): Map<string, EnumClass> {
  const enums = new Map<string, EnumClass>();
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.indent !== 0 || t.value !== "class" || tokens[i + 2]?.value !== "(") continue;
    const name = tokens[i + 1]?.value as string;
    let j = i + 3;
    const bases: string[] = [];
    let base = "";
    for (; j < tokens.length && tokens[j]?.value !== ")"; j++) {
      const v = (tokens[j] as Token).value;
      if (v === ",") {
        bases.push(base);
        base = "";
      } else base += v;
    }
    bases.push(base);
    if (!bases.some((b) => ENUM_BASES.has(b))) continue;
    const members: EnumClass = new Map();
    // Members are the assignments at the body's own indentation (not those inside its methods).
    const bodyIndent = tokens[j + 2]?.indent ?? -1;
    for (j += 2; j < tokens.length && (tokens[j] as Token).indent !== 0; j++) {
      const m = tokens[j] as Token;
      if (m.indent !== bodyIndent || m.kind !== "name" || tokens[j + 1]?.value !== "=") continue;
      const value = tokens[j + 2];
      const next = tokens[j + 3];
      if (!value || (next && next.indent === -1)) continue;
      if (value.kind === "string") {
        const decoded = decodePythonString(value.value);
        if (decoded && "text" in decoded) members.set(m.value, decoded.text);
      } else if (value.kind === "number") members.set(m.value, Number(value.value.replace(/_/g, "")));
    }
    enums.set(name, members);
  }
  return enums;
}

class TypeMapper {
  readonly enums: Map<string, EnumClass>;

  constructor(enums: Map<string, EnumClass>) {
    this.enums = enums;
  }

  private union(members: PyExpr[]): Mapped {
    const rest = members.filter((m) => !isNone(m));
    const nullable = rest.length < members.length;
    let property: PropertySchema;
    if (rest.length === 1) property = this.map(rest[0] as PyExpr).property;
    else if (rest.length > 1 && rest.every((m) => literalArguments(m)[0] !== NOT_LITERAL)) {
      property = mapLiterals(rest.flatMap(literalArguments));
    } else property = { description: "" };
    if (nullable) property.nullable = true;
    return { property, optional: nullable };
  }

  private array(element: PyExpr | undefined): Mapped {
    const mapped = plain("array");
    const items = element ? itemsOf(this.map(element).property) : undefined;
    if (items) mapped.property.items = items;
    return mapped;
  }

  map(e: PyExpr): Mapped {
    const members = unionMembers(e);
    if (members) return this.union(members);
    if (e.kind === "constant" && typeof e.value === "string") return this.map(forwardReference(e.value));
    if (isNone(e)) return any();
    const subscript = e.kind === "subscript" ? e : null;
    const name = dottedName(subscript ? subscript.value : e);
    if (name === null) return any();
    const args = subscript?.index ?? [];
    const base = name.split(".").pop() as string;
    // tuple[int, str] holds items of different types; tuple[int, ...] holds ints.
    if ((base === "tuple" || base === "Tuple") && args.length > 0) {
      if (args.length === 2 && args[1]?.kind === "ellipsis") return this.array(args[0]);
      const shapes = args.map((a) => this.map(a).property);
      return this.array(shapes.every((x) => sameShape(x, shapes[0] as PropertySchema)) ? args[0] : undefined);
    }
    if (ARRAYS.has(base)) return this.array(args[0]);
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
        return this.union([...args, { kind: "constant", value: null }]);
      case "Union":
        return this.union(args);
      case "Literal":
        return { property: mapLiterals(literalArguments(e)), optional: false };
      case "Annotated":
      case "Required":
      case "NotRequired":
      case "Final":
        return args[0] ? this.map(args[0]) : any();
    }
    // typing.X names that are not types users pass in (Callable, Type, …) have no schema.
    if (name.startsWith("typing.")) return any();
    const enumClass = name === base ? this.enums.get(base) : undefined;
    if (enumClass) return { property: mapLiterals([...enumClass.values()]), optional: false };
    // Windmill names a resource type as the class is written; S3Object is its `s3_object` type.
    const resource = base === "S3Object" ? "s3_object" : base;
    return { property: { type: "object", description: "", format: `resource-${resource}` }, optional: false };
  }

  /** `Color.RED` of an Enum class of the file: the member's value. */
  enumMember(e: PyExpr): unknown {
    if (e.kind !== "attribute" || e.value.kind !== "name") return NOT_LITERAL;
    const members = this.enums.get(e.value.id);
    return members?.has(e.attr) ? members.get(e.attr) : NOT_LITERAL;
  }
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

/** The schema of an untyped parameter from its default, as Windmill infers it (1.0 is a float). */
function propertyFromExpr(e: PyExpr): PropertySchema {
  switch (e.kind) {
    case "constant":
      if (typeof e.value === "string") return { type: "string", description: "" };
      if (typeof e.value === "boolean") return { type: "boolean", description: "" };
      if (typeof e.value === "number") {
        return { type: e.float || !Number.isInteger(e.value) ? "number" : "integer", description: "" };
      }
      return { description: "" };
    case "bytes":
      return { type: "string", description: "", contentEncoding: "base64" };
    case "unary":
      return e.op === "-" || e.op === "+" ? propertyFromExpr(e.operand) : { description: "" };
    case "list":
    case "tuple": {
      const property: PropertySchema = { type: "array", description: "" };
      const elements = e.elements.map(propertyFromExpr);
      const first = elements[0];
      if (first && elements.every((x) => sameShape(x, first))) {
        const items = itemsOf(first);
        if (items) property.items = items;
      }
      return property;
    }
    case "dict": {
      const property: PropertySchema = { type: "object", description: "" };
      const properties: Record<string, PropertySchema> = {};
      for (const [k, v] of e.entries) {
        if (k.kind === "constant" && typeof k.value === "string") properties[k.value] = propertyFromExpr(v);
      }
      if (Object.keys(properties).length > 0) property.properties = properties;
      return property;
    }
    default:
      return { description: "" };
  }
}

function toParam(p: PyParameter, mapper: TypeMapper): InferredParam {
  let value = p.default ? literalValue(p.default) : NOT_LITERAL;
  if (value === NOT_LITERAL && p.default) value = mapper.enumMember(p.default);
  const mapped: Mapped = p.annotation
    ? mapper.map(p.annotation)
    : {
        property: value === NOT_LITERAL || !p.default ? { description: "" } : propertyFromExpr(p.default),
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
  const mapper = new TypeMapper(findEnums(tokens));
  return buildSchema(parameters.filter((p) => !p.variadic).map((p) => toParam(p, mapper)));
}
