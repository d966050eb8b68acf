import { decodePythonString, tokenizePython } from "./python-tokens.ts";
import type { Token } from "./python-tokens.ts";
import { SignatureError, buildSchema, propertyFromValue, resourceProperty } from "./types.ts";
import type { ArgSchema, InferredParam, PropertySchema } from "./types.ts";

type TypeExpr =
  | { kind: "name"; name: string; args: TypeExpr[] | null }
  | { kind: "union"; items: TypeExpr[] }
  | { kind: "const"; value: unknown }
  | { kind: "other" };

const NOT_LITERAL = Symbol("not a literal");

function syntaxError(token: Token | undefined, message: string): SignatureError {
  const where = token ? `line ${token.line}` : "end of input";
  return new SignatureError(`python3: syntax error at ${where}: ${message}`);
}

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

/** Splits the tokens between `(` at `start` and its matching `)` on top-level commas. */
function splitParameters(tokens: Token[], start: number): Token[][] {
  const segments: Token[][] = [[]];
  let depth = 0;
  for (let i = start; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.kind === "op") {
      if (t.value === "(" || t.value === "[" || t.value === "{") depth++;
      else if (t.value === ")" || t.value === "]" || t.value === "}") {
        if (depth === 0) {
          if (tokens[i + 1]?.value !== ":" && tokens[i + 1]?.value !== "->") {
            throw syntaxError(tokens[i + 1], "expected ':' after the parameters of main");
          }
          return segments.filter((s) => s.length > 0);
        }
        depth--;
      } else if (t.value === "," && depth === 0) {
        segments.push([]);
        continue;
      }
    }
    (segments[segments.length - 1] as Token[]).push(t);
  }
  throw syntaxError(undefined, "parameter list of main is not closed");
}

class TokenReader {
  private pos = 0;
  private readonly tokens: Token[];
  constructor(tokens: Token[]) {
    this.tokens = tokens;
  }
  peek(): Token | undefined {
    return this.tokens[this.pos];
  }
  next(): Token | undefined {
    return this.tokens[this.pos++];
  }
  eat(value: string): boolean {
    if (this.peek()?.kind === "op" && this.peek()?.value === value) {
      this.pos++;
      return true;
    }
    return false;
  }
  done(): boolean {
    return this.pos >= this.tokens.length;
  }
}

function parseTypeExpr(r: TokenReader): TypeExpr {
  const items = [parseTypePrimary(r)];
  while (r.eat("|")) items.push(parseTypePrimary(r));
  return items.length === 1 ? (items[0] as TypeExpr) : { kind: "union", items };
}

function parseTypePrimary(r: TokenReader): TypeExpr {
  const t = r.next();
  if (!t) return { kind: "other" };
  if (t.kind === "string") {
    const text = decodePythonString(t.value);
    return { kind: "const", value: text };
  }
  if (t.kind === "number") return { kind: "const", value: Number(t.value.replace(/_/g, "")) };
  if (t.kind === "op" && t.value === "-" && r.peek()?.kind === "number") {
    return { kind: "const", value: -Number((r.next() as Token).value.replace(/_/g, "")) };
  }
  if (t.kind === "op" && t.value === "[") {
    while (!r.done() && !r.eat("]")) {
      parseTypeExpr(r);
      r.eat(",");
    }
    return { kind: "other" };
  }
  if (t.kind !== "name") return { kind: "other" };
  if (t.value === "None") return { kind: "const", value: null };
  if (t.value === "True" || t.value === "False") return { kind: "const", value: t.value === "True" };
  let name = t.value;
  while (r.eat(".")) name = r.next()?.value ?? name;
  let args: TypeExpr[] | null = null;
  if (r.eat("[")) {
    args = [];
    while (!r.done() && !r.eat("]")) {
      args.push(parseTypeExpr(r));
      r.eat(",");
    }
  }
  return { kind: "name", name, args };
}

function isNone(t: TypeExpr): boolean {
  return (t.kind === "const" && t.value === null) || (t.kind === "name" && t.name === "None");
}

interface MappedType {
  property: PropertySchema;
  optional: boolean;
}

function forwardReference(text: string): TypeExpr {
  try {
    return parseTypeExpr(new TokenReader(tokenizePython(text)));
  } catch {
    return { kind: "other" };
  }
}

function mapLiterals(values: unknown[]): PropertySchema {
  if (values.length > 0 && values.every((v) => typeof v === "string")) {
    return { type: "string", description: "", enum: values as string[] };
  }
  if (values.length > 0 && values.every((v) => typeof v === "number" && Number.isInteger(v))) {
    return { type: "integer", description: "" };
  }
  if (values.length > 0 && values.every((v) => typeof v === "number"))
    return { type: "number", description: "" };
  if (values.length > 0 && values.every((v) => typeof v === "boolean"))
    return { type: "boolean", description: "" };
  return { description: "" };
}

function mapUnion(items: TypeExpr[]): MappedType {
  const rest = items.filter((t) => !isNone(t));
  const nullable = rest.length < items.length;
  let property: PropertySchema;
  if (rest.length === 1) property = mapType(rest[0] as TypeExpr).property;
  else if (rest.length > 1 && rest.every((t) => t.kind === "name" && t.name === "Literal")) {
    property = mapLiterals(rest.flatMap((t) => (t.kind === "name" ? (t.args ?? []) : [])).map(literalValue));
  } else property = { description: "" };
  if (nullable) property.nullable = true;
  return { property, optional: nullable };
}

function literalValue(t: TypeExpr): unknown {
  return t.kind === "const" ? t.value : NOT_LITERAL;
}

function itemsOf(args: TypeExpr[] | null): PropertySchema["items"] | undefined {
  const first = args?.[0];
  if (!first) return undefined;
  const inner = mapType(first).property;
  if (!inner.type) return undefined;
  return inner.enum ? { type: inner.type, enum: inner.enum } : { type: inner.type };
}

function mapType(t: TypeExpr): MappedType {
  if (t.kind === "union") return mapUnion(t.items);
  if (t.kind === "const") {
    return typeof t.value === "string"
      ? mapType(forwardReference(t.value))
      : { property: { description: "" }, optional: false };
  }
  if (t.kind === "other") return { property: { description: "" }, optional: false };
  const plain = (type: PropertySchema["type"]): MappedType => ({
    property: { type, description: "" },
    optional: false,
  });
  switch (t.name) {
    case "str":
      return plain("string");
    case "int":
      return plain("integer");
    case "float":
      return plain("number");
    case "bool":
      return plain("boolean");
    case "dict":
    case "Dict":
    case "Mapping":
    case "MutableMapping":
    case "TypedDict":
      return plain("object");
    case "list":
    case "List":
    case "Sequence":
    case "Iterable":
    case "tuple":
    case "Tuple":
    case "set":
    case "Set":
    case "frozenset":
    case "FrozenSet": {
      const mapped = plain("array");
      const items = itemsOf(t.args);
      if (items) mapped.property.items = items;
      return mapped;
    }
    case "bytes":
    case "bytearray":
      return {
        property: { type: "string", description: "", format: "base64", contentEncoding: "base64" },
        optional: false,
      };
    case "datetime":
      return { property: { type: "string", description: "", format: "date-time" }, optional: false };
    case "date":
      return { property: { type: "string", description: "", format: "date" }, optional: false };
    case "Optional":
      return mapUnion([...(t.args ?? []), { kind: "const", value: null }]);
    case "Union":
      return mapUnion(t.args ?? []);
    case "Literal":
      return { property: mapLiterals((t.args ?? []).map(literalValue)), optional: false };
    case "Annotated":
      return t.args?.[0] ? mapType(t.args[0]) : { property: { description: "" }, optional: false };
    case "Any":
    case "object":
    case "None":
      return { property: { description: "" }, optional: false };
    default:
      return { property: resourceProperty(t.name), optional: false };
  }
}

/** Evaluates a default value if it is a plain literal (what `ast.literal_eval` would accept, minus sets). */
function parseLiteral(r: TokenReader): unknown {
  const t = r.next();
  if (!t) return NOT_LITERAL;
  if (t.kind === "string") {
    let text = decodePythonString(t.value);
    while (text !== undefined && r.peek()?.kind === "string") {
      const more = decodePythonString((r.next() as Token).value);
      text = more === undefined ? undefined : text + more;
    }
    return text ?? NOT_LITERAL;
  }
  if (t.kind === "number") return parseNumber(t.value);
  if (t.kind === "op" && (t.value === "-" || t.value === "+") && r.peek()?.kind === "number") {
    const n = parseNumber((r.next() as Token).value);
    return typeof n === "number" && t.value === "-" ? -n : n;
  }
  if (t.kind === "name") {
    if (t.value === "True") return true;
    if (t.value === "False") return false;
    if (t.value === "None") return null;
    return NOT_LITERAL;
  }
  if (t.kind === "op" && (t.value === "[" || t.value === "(")) {
    const close = t.value === "[" ? "]" : ")";
    const out: unknown[] = [];
    while (!r.eat(close)) {
      const v = parseLiteral(r);
      if (v === NOT_LITERAL) return NOT_LITERAL;
      out.push(v);
      if (!r.eat(",") && r.peek()?.value !== close) return NOT_LITERAL;
    }
    return out;
  }
  if (t.kind === "op" && t.value === "{") {
    const out: Record<string, unknown> = {};
    while (!r.eat("}")) {
      const key = parseLiteral(r);
      if (key === NOT_LITERAL || !r.eat(":")) return NOT_LITERAL;
      const value = parseLiteral(r);
      if (value === NOT_LITERAL) return NOT_LITERAL;
      out[typeof key === "string" ? key : JSON.stringify(key)] = value;
      if (!r.eat(",") && r.peek()?.value !== "}") return NOT_LITERAL;
    }
    return out;
  }
  return NOT_LITERAL;
}

function parseNumber(text: string): unknown {
  const clean = text.replace(/_/g, "").toLowerCase();
  if (clean.endsWith("j")) return NOT_LITERAL;
  if (/^0[xob]/.test(clean)) return Number(clean);
  const n = Number(clean);
  return Number.isFinite(n) ? n : NOT_LITERAL;
}

function parseParameter(segment: Token[]): InferredParam | null {
  const first = segment[0] as Token;
  if (first.kind === "op" && (first.value === "*" || first.value === "**" || first.value === "/"))
    return null;
  if (first.kind !== "name")
    throw syntaxError(first, `unexpected '${first.value}' in the parameters of main`);
  const name = first.value;
  let annotation: Token[] | null = null;
  let defaultTokens: Token[] | null = null;
  let i = 1;
  if (segment[i]?.value === ":") {
    const eq = segment.findIndex(
      (t, k) => k > i && t.kind === "op" && t.value === "=" && depthAt(segment, k) === 0,
    );
    annotation = segment.slice(i + 1, eq === -1 ? undefined : eq);
    i = eq === -1 ? segment.length : eq;
  }
  if (segment[i]?.value === "=") {
    defaultTokens = segment.slice(i + 1);
    i = segment.length;
  }
  if (i < segment.length)
    throw syntaxError(segment[i], `unexpected '${segment[i]?.value}' after parameter ${name}`);
  if ((annotation && annotation.length === 0) || (defaultTokens && defaultTokens.length === 0)) {
    throw syntaxError(first, `incomplete parameter ${name}`);
  }

  let defaultValue: unknown = NOT_LITERAL;
  if (defaultTokens) {
    const reader = new TokenReader(defaultTokens);
    defaultValue = parseLiteral(reader);
    if (!reader.done()) defaultValue = NOT_LITERAL;
  }
  const mapped: MappedType = annotation
    ? mapType(parseTypeExpr(new TokenReader(annotation)))
    : {
        property: defaultValue === NOT_LITERAL ? { description: "" } : propertyFromValue(defaultValue, true),
        optional: false,
      };
  const property = mapped.property;
  if (defaultValue === null) property.nullable = true;
  else if (defaultValue !== NOT_LITERAL) property.default = defaultValue;
  return { name, property, required: !defaultTokens && !mapped.optional };
}

function depthAt(tokens: Token[], index: number): number {
  let depth = 0;
  for (let k = 0; k < index; k++) {
    const v = (tokens[k] as Token).value;
    if ((tokens[k] as Token).kind !== "op") continue;
    if (v === "(" || v === "[" || v === "{") depth++;
    else if (v === ")" || v === "]" || v === "}") depth--;
  }
  return depth;
}

export function inferPythonSchema(content: string): ArgSchema {
  const tokens = tokenizePython(content);
  const start = findMain(tokens);
  if (start === -1) throw new SignatureError("python3: no `def main(...)` found");
  return buildSchema(
    splitParameters(tokens, start)
      .map(parseParameter)
      .filter((p): p is InferredParam => p !== null),
  );
}
