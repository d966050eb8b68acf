import ts from "typescript";
import { SignatureError, buildSchema, propertyFromValue, resourceProperty } from "./types.ts";
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

function findMain(file: ts.SourceFile, language: TsLanguage): ts.SignatureDeclarationBase {
  let unexported = false;
  for (const statement of file.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name?.text === "main") {
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

class TypeMapper {
  private readonly aliases = new Map<string, ts.TypeNode | "object" | PropertySchema>();
  private readonly resolving = new Set<string>();

  constructor(file: ts.SourceFile) {
    for (const s of file.statements) {
      if (ts.isTypeAliasDeclaration(s) && !s.typeParameters) this.aliases.set(s.name.text, s.type);
      else if (ts.isInterfaceDeclaration(s) || ts.isClassDeclaration(s)) {
        if (s.name) this.aliases.set(s.name.text, "object");
      } else if (ts.isEnumDeclaration(s)) {
        const values = s.members.map((m) => (m.initializer ? literalValue(m.initializer) : NOT_LITERAL));
        this.aliases.set(
          s.name.text,
          values.every((v) => typeof v === "string")
            ? { type: "string", description: "", enum: values as string[] }
            : { description: "" },
        );
      }
    }
  }

  map(node: ts.TypeNode | undefined): Mapped {
    const any = (): Mapped => ({ property: { description: "" }, optional: false });
    const plain = (type: PropertySchema["type"], format?: string): Mapped => ({
      property: format ? { type, description: "", format } : { type, description: "" },
      optional: false,
    });
    if (!node) return any();
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
    if (ts.isParenthesizedTypeNode(node) || ts.isTypeOperatorNode(node)) return this.map(node.type);
    if (ts.isArrayTypeNode(node)) return this.array(node.elementType);
    if (ts.isTupleTypeNode(node)) return plain("array");
    if (ts.isTypeLiteralNode(node) || ts.isMappedTypeNode(node)) return plain("object");
    if (ts.isLiteralTypeNode(node)) return this.union([node]);
    if (ts.isUnionTypeNode(node)) return this.union(node.types);
    if (ts.isTypeReferenceNode(node)) {
      const name = ts.isIdentifier(node.typeName) ? node.typeName.text : node.typeName.right.text;
      const args = node.typeArguments ?? [];
      switch (name) {
        case "Array":
        case "ReadonlyArray":
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
          return plain("string", "date-time");
        case "Promise":
          return this.map(args[0]);
      }
      const alias = this.aliases.get(name);
      if (alias === "object") return plain("object");
      if (alias && !("kind" in alias)) return { property: structuredClone(alias), optional: false };
      if (alias && !this.resolving.has(name)) {
        this.resolving.add(name);
        try {
          return this.map(alias);
        } finally {
          this.resolving.delete(name);
        }
      }
      if (alias) return any();
      return { property: resourceProperty(name), optional: false };
    }
    return any();
  }

  private array(element: ts.TypeNode | undefined): Mapped {
    const property: PropertySchema = { type: "array", description: "" };
    const inner = element ? this.map(element).property : undefined;
    if (inner?.type)
      property.items = inner.enum ? { type: inner.type, enum: inner.enum } : { type: inner.type };
    return { property, optional: false };
  }

  private union(types: readonly ts.TypeNode[]): Mapped {
    let optional = false;
    let nullable = false;
    const rest: ts.TypeNode[] = [];
    for (const t of types) {
      if (t.kind === ts.SyntaxKind.UndefinedKeyword || t.kind === ts.SyntaxKind.VoidKeyword) optional = true;
      else if (ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword) nullable = true;
      else rest.push(t);
    }
    let property: PropertySchema;
    const literals = rest.map((t) =>
      ts.isLiteralTypeNode(t) ? literalValue(t.literal as ts.Expression) : NOT_LITERAL,
    );
    if (rest.length > 0 && literals.every((v) => typeof v === "string")) {
      property = { type: "string", description: "", enum: literals as string[] };
    } else if (rest.length > 0 && literals.every((v) => typeof v === "number")) {
      property = { type: "number", description: "" };
    } else if (rest.length > 0 && literals.every((v) => typeof v === "boolean")) {
      property = { type: "boolean", description: "" };
    } else if (rest.length === 1) {
      const inner = this.map(rest[0]);
      property = inner.property;
      optional ||= inner.optional;
    } else {
      property = { description: "" };
    }
    if (nullable) property.nullable = true;
    return { property, optional };
  }
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
    const mapped = param.type ? mapper.map(param.type) : undefined;
    const value = param.initializer ? literalValue(param.initializer) : NOT_LITERAL;
    const property: PropertySchema =
      mapped?.property ?? (value === NOT_LITERAL ? { description: "" } : propertyFromValue(value, false));
    if (value === null) property.nullable = true;
    else if (value !== NOT_LITERAL) property.default = value;
    const required = !param.questionToken && !param.initializer && !(mapped?.optional ?? false);
    params.push({ name: param.name.text, property, required });
  }
  return buildSchema(params);
}
