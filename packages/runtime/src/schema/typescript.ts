import ts from "typescript";
import { SignatureError, buildSchema, itemsOf, propertyFromValue, resourceProperty } from "./types.ts";
import type { ArgSchema, InferredParam, PropertySchema } from "./types.ts";

type TsLanguage = "bun" | "deno";

const NOT_LITERAL = Symbol("not a literal");

interface Mapped {
  property: PropertySchema;
  optional: boolean;
}

function syntaxErrors(file: ts.SourceFile): readonly ts.DiagnosticWithLocation[] {
  // parseDiagnostics is what Program#getSyntacticDiagnostics returns for a .ts file; reading it directly
  // avoids building a Program (and a compiler host) for every signature.
  return (file as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
}

function lineOf(file: ts.SourceFile, pos: number): number {
  return file.getLineAndCharacterOfPosition(pos).line + 1;
}

function isExported(node: ts.Node): boolean {
  return (
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
  );
}

/** `export default function main`: the job imports `main` by name, which a default export is not. */
function isDefaultExport(node: ts.Node): boolean {
  return (
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)
  );
}

function findMain(file: ts.SourceFile, language: TsLanguage): ts.SignatureDeclarationBase {
  let unexported = false;
  for (const statement of file.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name?.text === "main") {
      if (isDefaultExport(statement)) {
        throw new SignatureError(
          `${language}: \`main\` must be a named export (export async function main), not the default export`,
        );
      }
      if (isExported(statement)) return statement;
      unexported = true;
    }
    if (ts.isVariableStatement(statement)) {
      for (const decl of statement.declarationList.declarations) {
        if (!ts.isIdentifier(decl.name) || decl.name.text !== "main" || !decl.initializer) continue;
        let init: ts.Expression = decl.initializer;
        while (
          ts.isParenthesizedExpression(init) ||
          ts.isSatisfiesExpression(init) ||
          ts.isAsExpression(init)
        ) {
          init = init.expression;
        }
        if (!ts.isArrowFunction(init) && !ts.isFunctionExpression(init)) continue;
        if (isExported(statement)) return init;
        unexported = true;
      }
    }
  }
  throw new SignatureError(
    unexported
      ? `${language}: \`main\` must be exported`
      : `${language}: no exported \`main\` function found`,
  );
}

function literalValue(expr: ts.Expression): unknown {
  if (ts.isStringLiteral(expr) || ts.isNoSubstitutionTemplateLiteral(expr)) return expr.text;
  if (ts.isNumericLiteral(expr)) return Number(expr.text);
  if (expr.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (expr.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (expr.kind === ts.SyntaxKind.NullKeyword) return null;
  if (ts.isPrefixUnaryExpression(expr) && ts.isNumericLiteral(expr.operand)) {
    if (expr.operator === ts.SyntaxKind.MinusToken) return -Number(expr.operand.text);
    if (expr.operator === ts.SyntaxKind.PlusToken) return Number(expr.operand.text);
  }
  if (ts.isParenthesizedExpression(expr) || ts.isAsExpression(expr) || ts.isSatisfiesExpression(expr)) {
    return literalValue(expr.expression);
  }
  if (ts.isArrayLiteralExpression(expr)) {
    const out: unknown[] = [];
    for (const el of expr.elements) {
      const v = literalValue(el);
      if (v === NOT_LITERAL) return NOT_LITERAL;
      out.push(v);
    }
    return out;
  }
  if (ts.isObjectLiteralExpression(expr)) {
    const out: Record<string, unknown> = {};
    for (const prop of expr.properties) {
      if (!ts.isPropertyAssignment(prop)) return NOT_LITERAL;
      const key = prop.name;
      if (!ts.isIdentifier(key) && !ts.isStringLiteral(key) && !ts.isNumericLiteral(key)) return NOT_LITERAL;
      const v = literalValue(prop.initializer);
      if (v === NOT_LITERAL) return NOT_LITERAL;
      out[key.text] = v;
    }
    return out;
  }
  return NOT_LITERAL;
}

type Declared = ts.TypeNode | "object" | PropertySchema;

function propertyName(name: ts.PropertyName): string | null {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return null;
}

/** `a.b.C` → ["a", "b", "C"]. */
function qualifiedName(name: ts.EntityName): string[] {
  return ts.isIdentifier(name) ? [name.text] : [...qualifiedName(name.left), name.right.text];
}

class TypeMapper {
  private readonly declared = new Map<string, Declared>();
  private readonly resolving = new Set<string>();

  constructor(file: ts.SourceFile) {
    for (const s of file.statements) {
      if (ts.isTypeAliasDeclaration(s) && !s.typeParameters) this.declared.set(s.name.text, s.type);
      else if (ts.isInterfaceDeclaration(s) || ts.isClassDeclaration(s)) {
        if (s.name) this.declared.set(s.name.text, "object");
      } else if (ts.isEnumDeclaration(s)) {
        const values = s.members.map((m) => (m.initializer ? literalValue(m.initializer) : NOT_LITERAL));
        this.declared.set(
          s.name.text,
          values.every((v) => typeof v === "string")
            ? { type: "string", description: "", enum: values as string[] }
            : { type: "number", description: "" },
        );
      }
    }
  }

  /**
   * `top`: the type of a parameter itself. There a named object type (`Postgresql`, `RT.Stripe`,
   * an interface) is a resource type, as in Windmill; inside arrays and objects it is a plain object.
   */
  map(node: ts.TypeNode | undefined, top: boolean): Mapped {
    const plain = (type: PropertySchema["type"], extra: Partial<PropertySchema> = {}): Mapped => ({
      property: { type, description: "", ...extra },
      optional: false,
    });
    if (!node) return anyType();
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword:
        return plain("string");
      case ts.SyntaxKind.NumberKeyword:
        return plain("number");
      case ts.SyntaxKind.BigIntKeyword:
        return plain("integer");
      case ts.SyntaxKind.BooleanKeyword:
        return plain("boolean");
      case ts.SyntaxKind.ObjectKeyword:
        return plain("object");
    }
    if (ts.isParenthesizedTypeNode(node) || ts.isTypeOperatorNode(node)) return this.map(node.type, top);
    if (ts.isArrayTypeNode(node)) return this.array(node.elementType);
    if (ts.isTupleTypeNode(node)) return plain("array");
    if (ts.isTypeLiteralNode(node)) return this.object(node);
    if (ts.isMappedTypeNode(node)) return plain("object");
    if (ts.isLiteralTypeNode(node)) return this.union([node], top);
    if (ts.isUnionTypeNode(node)) return this.union(node.types, top);
    if (ts.isTypeReferenceNode(node)) return this.reference(node, top);
    return anyType();
  }

  private reference(node: ts.TypeReferenceNode, top: boolean): Mapped {
    const parts = qualifiedName(node.typeName);
    const name = parts[parts.length - 1] as string;
    const args = node.typeArguments ?? [];
    const plain = (type: PropertySchema["type"], extra: Partial<PropertySchema> = {}): Mapped => ({
      property: { type, description: "", ...extra },
      optional: false,
    });
    if (parts.length === 2 && parts[0] === "RT") return { property: resourceProperty(name), optional: false };
    switch (name) {
      case "Array":
      case "ReadonlyArray":
      case "Set":
        return this.array(args[0]);
      case "Record":
      case "Map":
      case "Partial":
      case "Required":
      case "Readonly":
      case "Pick":
      case "Omit":
        return plain("object");
      case "Date":
        return plain("string", { format: "date-time" });
      case "Promise":
        return this.map(args[0], top);
      case "Base64":
        return plain("string", { contentEncoding: "base64" });
      case "Email":
        return plain("string", { format: "email" });
      case "Sql":
        return plain("string", { format: "sql" });
      case "Resource": {
        // Windmill's `wmill.Resource<"postgresql">`
        const arg = args[0];
        if (arg && ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) {
          return { property: resourceProperty(arg.literal.text), optional: false };
        }
        return plain("object");
      }
    }
    const declared = parts.length === 1 ? this.declared.get(name) : undefined;
    // A type name the file does not declare is a resource type wherever it appears (`Postgresql[]`,
    // as Windmill reads it); a local interface or class is one only as a parameter's own type.
    if (declared === undefined || (declared === "object" && top)) {
      return { property: resourceProperty(name), optional: false };
    }
    if (declared === "object") return plain("object");
    if (!("kind" in declared)) return { property: structuredClone(declared), optional: false };
    const isObject = ts.isTypeLiteralNode(declared) || declared.kind === ts.SyntaxKind.ObjectKeyword;
    // A recursive type stops at its first repetition.
    if (this.resolving.has(name)) return isObject ? plain("object") : anyType();
    if (top && isObject) return { property: resourceProperty(name), optional: false };
    this.resolving.add(name);
    try {
      return this.map(declared, false);
    } finally {
      this.resolving.delete(name);
    }
  }

  private object(node: ts.TypeLiteralNode): Mapped {
    const properties: Record<string, PropertySchema> = {};
    const required: string[] = [];
    for (const member of node.members) {
      if (!ts.isPropertySignature(member)) continue;
      const key = propertyName(member.name);
      if (key === null) continue;
      const mapped = this.map(member.type, false);
      properties[key] = mapped.property;
      if (!member.questionToken && !mapped.optional) required.push(key);
    }
    const property: PropertySchema = { type: "object", description: "" };
    if (Object.keys(properties).length > 0) Object.assign(property, { properties, required });
    return { property, optional: false };
  }

  private array(element: ts.TypeNode | undefined): Mapped {
    const property: PropertySchema = { type: "array", description: "" };
    const items = element ? itemsOf(this.map(element, false).property) : undefined;
    if (items) property.items = items;
    return { property, optional: false };
  }

  private union(types: readonly ts.TypeNode[], top: boolean): Mapped {
    let optional = false;
    let nullable = false;
    const rest: ts.TypeNode[] = [];
    for (const t of types) {
      if (t.kind === ts.SyntaxKind.UndefinedKeyword || t.kind === ts.SyntaxKind.VoidKeyword) optional = true;
      // `T | null`: Windmill makes the argument optional, as `T | undefined`.
      else if (ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword) {
        nullable = true;
        optional = true;
      } else rest.push(t);
    }
    let property: PropertySchema;
    const tagged = this.taggedUnion(rest);
    const literals = rest.map((t) =>
      ts.isLiteralTypeNode(t) ? literalValue(t.literal as ts.Expression) : NOT_LITERAL,
    );
    if (tagged) {
      property = tagged;
    } else if (rest.length > 0 && literals.every((v) => typeof v === "string")) {
      property = { type: "string", description: "", enum: literals as string[] };
    } else if (rest.length > 0 && literals.every((v) => typeof v === "number")) {
      property = { type: literals.every(Number.isInteger) ? "integer" : "number", description: "" };
    } else if (rest.length > 0 && literals.every((v) => typeof v === "boolean")) {
      property = { type: "boolean", description: "" };
    } else if (rest.length === 1) {
      const inner = this.map(rest[0], top);
      property = inner.property;
      optional ||= inner.optional;
    } else {
      property = { description: "" };
    }
    if (nullable) property.nullable = true;
    return { property, optional };
  }

  /**
   * `{ kind: "a"; … } | { kind: "b"; … }` (or `label`): Windmill's tagged union, an object with
   * one `oneOf` variant per member, titled by its tag.
   */
  private taggedUnion(types: ts.TypeNode[]): PropertySchema | null {
    if (types.length < 2 || !types.every(ts.isTypeLiteralNode)) return null;
    const tagOf = (node: ts.TypeLiteralNode, key: string): string | null => {
      for (const m of node.members) {
        if (!ts.isPropertySignature(m) || !m.type || propertyName(m.name) !== key) continue;
        if (ts.isLiteralTypeNode(m.type) && ts.isStringLiteral(m.type.literal)) return m.type.literal.text;
      }
      return null;
    };
    for (const key of ["kind", "label"]) {
      const tags = types.map((t) => tagOf(t, key));
      if (tags.some((t) => t === null)) continue;
      const oneOf = types.map((t, i) => {
        const { description: _d, ...variant } = this.object(t).property;
        return { ...variant, type: "object" as const, title: tags[i] as string };
      });
      return { type: "object", description: "", oneOf };
    }
    return null;
  }
}

function anyType(): Mapped {
  return { property: { description: "" }, optional: false };
}

export function inferTypeScriptSchema(language: TsLanguage, content: string): ArgSchema {
  const file = ts.createSourceFile("main.ts", content, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const first = syntaxErrors(file)[0];
  if (first) {
    const message = ts.flattenDiagnosticMessageText(first.messageText, " ");
    throw new SignatureError(`${language}: syntax error at line ${lineOf(file, first.start)}: ${message}`);
  }
  const main = findMain(file, language);
  const mapper = new TypeMapper(file);
  const params: InferredParam[] = [];
  for (const param of main.parameters) {
    if (param.dotDotDotToken) continue;
    if (!ts.isIdentifier(param.name)) {
      throw new SignatureError(
        `${language}: parameter ${params.length + 1} of main must be a plain name, not a destructuring pattern (line ${lineOf(file, param.getStart())})`,
      );
    }
    const mapped = param.type ? mapper.map(param.type, true) : undefined;
    const value = param.initializer ? literalValue(param.initializer) : NOT_LITERAL;
    const property: PropertySchema =
      mapped?.property ?? (value === NOT_LITERAL ? { description: "" } : propertyFromValue(value, true));
    if (value === null) property.nullable = true;
    else if (value !== NOT_LITERAL) property.default = value;
    const required = !param.questionToken && !param.initializer && !(mapped?.optional ?? false);
    params.push({ name: param.name.text, property, required });
  }
  return buildSchema(params);
}
