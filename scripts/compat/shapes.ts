// The answers windmill-client's generated types promise, as a small checkable shape: for each
// operation, `$OpenApiTs[path][method].res[200]` of node_modules/windmill-client/dist/types.gen.d.ts
// read with TypeScript's checker, reduced to what a client relies on: the required fields of each
// object (optional ones are left alone), their primitive types, array items, literal values,
// nullability. `checkShape` says where an answer departs from it.
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const typesFile = path.join(root, "node_modules/windmill-client/dist/types.gen.d.ts");

export type Shape =
  | { kind: "any" }
  | { kind: "string" | "number" | "boolean" | "null" }
  /** A file's bytes (the generated `Blob | File`): any answer that is not JSON. */
  | { kind: "binary" }
  | { kind: "literal"; value: string | number | boolean }
  | { kind: "array"; items: Shape }
  | { kind: "object"; required: Record<string, Shape> }
  | { kind: "union"; options: Shape[] };

const ANY: Shape = { kind: "any" };
const MAX_DEPTH = 4;

/** The shapes of the 2xx answers, by `METHOD path` (Windmill's path: `/w/{workspace}/...`). */
export function responseShapes(): Map<string, { status: number; shape: Shape }> {
  const program = ts.createProgram([typesFile], { noEmit: true, skipLibCheck: true, strict: true });
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(typesFile)!;
  const openApi = sf.statements.find(
    (s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === "$OpenApiTs",
  )!;
  const table = checker.getTypeAtLocation(openApi.name);

  const toShape = (type: ts.Type, depth: number, seen: Set<ts.Type>): Shape => {
    if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return ANY;
    if (type.flags & ts.TypeFlags.Null || type.flags & ts.TypeFlags.Undefined) return { kind: "null" };
    if (type.flags & ts.TypeFlags.Void) return ANY;
    if (type.isStringLiteral()) return { kind: "literal", value: type.value };
    if (type.isNumberLiteral()) return { kind: "literal", value: type.value };
    if (type.flags & ts.TypeFlags.BooleanLiteral)
      return { kind: "literal", value: checker.typeToString(type) === "true" };
    if (type.flags & ts.TypeFlags.StringLike) return { kind: "string" };
    if (type.flags & ts.TypeFlags.NumberLike) return { kind: "number" };
    if (type.flags & ts.TypeFlags.Boolean) return { kind: "boolean" };
    const name = type.getSymbol()?.name;
    if (name === "Blob" || name === "File") return { kind: "binary" };
    if (type.isUnion()) {
      const options = type.types.map((t) => toShape(t, depth, seen));
      // `true | false` (boolean) is one option; an option that is `any` makes the union any.
      if (options.some((o) => o.kind === "any")) return ANY;
      if (options.every((o) => o.kind === "binary")) return { kind: "binary" };
      return { kind: "union", options };
    }
    if (depth > MAX_DEPTH || seen.has(type)) return ANY;
    const next = new Set(seen).add(type);
    if (checker.isArrayType(type) || checker.isTupleType(type)) {
      const item = checker.getTypeArguments(type as ts.TypeReference)[0];
      return { kind: "array", items: item ? toShape(item, depth + 1, next) : ANY };
    }
    if (type.flags & ts.TypeFlags.Object || type.isIntersection()) {
      const required: Record<string, Shape> = {};
      for (const prop of checker.getPropertiesOfType(type)) {
        if (prop.flags & ts.SymbolFlags.Optional) continue;
        const propType = checker.getTypeOfSymbolAtLocation(prop, openApi);
        required[prop.name] = toShape(propType, depth + 1, next);
      }
      return { kind: "object", required };
    }
    return ANY;
  };

  const shapes = new Map<string, { status: number; shape: Shape }>();
  for (const pathProp of checker.getPropertiesOfType(table)) {
    const byMethod = checker.getTypeOfSymbolAtLocation(pathProp, openApi);
    for (const methodProp of checker.getPropertiesOfType(byMethod)) {
      const operation = checker.getTypeOfSymbolAtLocation(methodProp, openApi);
      const res = operation.getProperty("res");
      if (!res) continue;
      const byStatus = checker.getTypeOfSymbolAtLocation(res, openApi);
      const success = checker
        .getPropertiesOfType(byStatus)
        .map((p) => ({ status: Number(p.name), symbol: p }))
        .filter((p) => p.status >= 200 && p.status < 300)
        .sort((a, b) => a.status - b.status)[0];
      if (!success) continue;
      const shape = toShape(checker.getTypeOfSymbolAtLocation(success.symbol, openApi), 0, new Set());
      shapes.set(`${methodProp.name.toUpperCase()} ${pathProp.name}`, { status: success.status, shape });
    }
  }
  return shapes;
}

/** Where `value` departs from `shape` (empty when it conforms), as `field: expected …, got …`. */
export function checkShape(value: unknown, shape: Shape, at = "answer"): string[] {
  const got = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  switch (shape.kind) {
    case "any":
      return [];
    case "binary":
      // Reached only for a JSON answer (see probe): bytes were promised.
      return [`${at}: expected a file's bytes, got JSON`];
    case "null":
      return value === null || value === undefined ? [] : [`${at}: expected null, got ${got}`];
    case "string":
    case "number":
    case "boolean":
      return typeof value === shape.kind ? [] : [`${at}: expected ${shape.kind}, got ${got}`];
    case "literal":
      return value === shape.value
        ? []
        : [`${at}: expected ${JSON.stringify(shape.value)}, got ${JSON.stringify(value)}`];
    case "array": {
      if (!Array.isArray(value)) return [`${at}: expected an array, got ${got}`];
      return value.slice(0, 20).flatMap((item, i) => checkShape(item, shape.items, `${at}[${i}]`));
    }
    case "object": {
      if (got !== "object") return [`${at}: expected an object, got ${got}`];
      const record = value as Record<string, unknown>;
      return Object.entries(shape.required).flatMap(([name, field]) =>
        name in record
          ? checkShape(record[name], field, `${at}.${name}`)
          : [`${at}.${name}: required, missing`],
      );
    }
    case "union": {
      const failures = shape.options.map((option) => checkShape(value, option, at));
      if (failures.some((f) => f.length === 0)) return [];
      // The closest option's complaints (fewest), so the message points at the field at fault.
      return failures.sort((a, b) => a.length - b.length)[0]!;
    }
  }
}
