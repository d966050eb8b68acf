import { KEYWORDS, TokenCursor } from "./python-cursor.ts";
import type { Token } from "./python-tokens.ts";

// A recursive-descent parser for Python's parameter lists and expressions (the grammar of
// https://docs.python.org/3/reference/grammar.html, from `parameters` down to `atom`). It builds
// a small AST of what matters to a schema — names, attributes, subscripts, literals, `|` unions —
// and parses everything else (calls, lambdas, comprehensions, conditionals) only to validate it.

export type PyExpr =
  | { kind: "name"; id: string }
  | { kind: "attribute"; value: PyExpr; attr: string }
  | { kind: "subscript"; value: PyExpr; index: PyExpr[] }
  /** `float`: a number written as a float literal (`1.0`, `1e3`), a `float` in Python. */
  | { kind: "constant"; value: string | number | boolean | null; float?: boolean }
  | { kind: "bytes"; value: Uint8Array }
  | { kind: "ellipsis" }
  | { kind: "list" | "tuple" | "set"; elements: PyExpr[] }
  | { kind: "dict"; entries: [PyExpr, PyExpr][] }
  | { kind: "unary"; op: "-" | "+" | "~" | "not"; operand: PyExpr }
  | { kind: "binary"; op: string; left: PyExpr; right: PyExpr }
  /** Valid Python whose value is only known at run time (calls, lambdas, comprehensions, f-strings…). */
  | { kind: "dynamic" };

export interface PyParameter {
  name: string;
  annotation: PyExpr | null;
  default: PyExpr | null;
  /** `*args` / `**kwargs`: not part of the schema. */
  variadic: boolean;
  line: number;
}

export type StringDecoder = (token: string) => { text: string } | { bytes: Uint8Array } | null;

const COMPARISON = new Set(["==", "!=", "<", ">", "<=", ">=", "in", "is"]);

const DYNAMIC: PyExpr = { kind: "dynamic" };

export class PythonParser extends TokenCursor {
  private readonly decode: StringDecoder;

  constructor(tokens: Token[], start: number, decode: StringDecoder) {
    super(tokens, start);
    this.decode = decode;
  }

  /** `(` already consumed: parses up to and including `)`, then `-> annotation` and `:`. */
  parseParameters(): PyParameter[] {
    const params: PyParameter[] = [];
    const seen = new Set<string>();
    while (!this.isOp(")")) {
      const start = this.peek();
      if (this.eatOp("/")) {
        // positional-only marker
      } else if (this.isOp("*") || this.isOp("**")) {
        const star = this.next().value;
        if (star === "*" && (this.isOp(",") || this.isOp(")"))) {
          // bare `*`: keyword-only marker
        } else {
          const name = this.expectName("a parameter name");
          const annotation = this.eatOp(":") ? this.parseAnnotation(name, star === "*") : null;
          params.push({ name, annotation, default: null, variadic: true, line: start?.line ?? 0 });
        }
      } else {
        const name = this.expectName("a parameter name");
        if (seen.has(name)) throw this.error(start, `duplicate parameter ${name}`);
        seen.add(name);
        const annotation = this.eatOp(":") ? this.parseAnnotation(name, false) : null;
        let value: PyExpr | null = null;
        if (this.eatOp("=")) {
          this.checkComplete(name);
          value = this.parseExpression();
        }
        params.push({ name, annotation, default: value, variadic: false, line: start?.line ?? 0 });
      }
      if (!this.eatOp(",")) break;
    }
    this.expectOp(")");
    if (this.eatOp("->")) this.parseExpression();
    this.expectOp(":");
    return params;
  }

  private parseAnnotation(name: string, starred: boolean): PyExpr {
    this.checkComplete(name);
    // PEP 646: `*args: *Ts`
    if (starred && this.eatOp("*")) return { kind: "unary", op: "+", operand: this.parseExpression() };
    return this.parseExpression();
  }

  private checkComplete(name: string): void {
    if (this.isOp(",") || this.isOp(")")) throw this.error(this.peek(), `incomplete parameter ${name}`);
  }

  // expression: disjunction ['if' disjunction 'else' expression] | lambdef
  parseExpression(): PyExpr {
    if (this.eatKeyword("lambda")) {
      this.parseLambdaParameters();
      this.expectOp(":");
      this.parseExpression();
      return DYNAMIC;
    }
    const body = this.parseDisjunction();
    if (this.eatKeyword("if")) {
      this.parseDisjunction();
      this.expectKeyword("else");
      this.parseExpression();
      return DYNAMIC;
    }
    return body;
  }

  private parseLambdaParameters(): void {
    while (!this.isOp(":")) {
      if (this.eatOp("*") || this.eatOp("**")) {
        if (this.peek()?.kind === "name") this.next();
      } else if (!this.eatOp("/")) {
        this.expectName("a lambda parameter");
        if (this.eatOp("=")) this.parseExpression();
      }
      if (!this.eatOp(",")) break;
    }
  }

  private parseNamedExpression(): PyExpr {
    const expr = this.parseExpression();
    if (this.eatOp(":=")) {
      if (expr.kind !== "name") throw this.error(this.peek(), "cannot use := here");
      this.parseExpression();
      return DYNAMIC;
    }
    return expr;
  }

  private parseDisjunction(): PyExpr {
    let left = this.parseConjunction();
    while (this.eatKeyword("or")) left = { kind: "binary", op: "or", left, right: this.parseConjunction() };
    return left;
  }

  private parseConjunction(): PyExpr {
    let left = this.parseInversion();
    while (this.eatKeyword("and")) left = { kind: "binary", op: "and", left, right: this.parseInversion() };
    return left;
  }

  private parseInversion(): PyExpr {
    if (this.eatKeyword("not")) return { kind: "unary", op: "not", operand: this.parseInversion() };
    return this.parseComparison();
  }

  private parseComparison(): PyExpr {
    let left = this.parseBinary(0);
    for (;;) {
      const t = this.peek();
      let op: string | undefined;
      if (t && COMPARISON.has(t.value) && (t.kind === "op" || t.value === "in" || t.value === "is")) {
        this.next();
        op = t.value;
        if (op === "is" && this.eatKeyword("not")) op = "is not";
      } else if (t?.kind === "name" && t.value === "not" && this.peek(1)?.value === "in") {
        this.pos += 2;
        op = "not in";
      }
      if (!op) return left;
      left = { kind: "binary", op, left, right: this.parseBinary(0) };
    }
  }

  // bitwise_or > xor > and > shift > sum > term, all left-associative.
  private static readonly LEVELS: readonly (readonly string[])[] = [
    ["|"],
    ["^"],
    ["&"],
    ["<<", ">>"],
    ["+", "-"],
    ["*", "/", "//", "%", "@"],
  ];

  private parseBinary(level: number): PyExpr {
    const ops = PythonParser.LEVELS[level];
    if (!ops) return this.parseFactor();
    let left = this.parseBinary(level + 1);
    for (;;) {
      const t = this.peek();
      if (t?.kind !== "op" || !ops.includes(t.value)) return left;
      this.next();
      left = { kind: "binary", op: t.value, left, right: this.parseBinary(level + 1) };
    }
  }

  private parseFactor(): PyExpr {
    const t = this.peek();
    if (t?.kind === "op" && (t.value === "-" || t.value === "+" || t.value === "~")) {
      this.next();
      return { kind: "unary", op: t.value, operand: this.parseFactor() };
    }
    return this.parsePower();
  }

  private parsePower(): PyExpr {
    const awaited = this.eatKeyword("await");
    const base = this.parsePrimary();
    if (this.eatOp("**")) {
      this.parseFactor();
      return DYNAMIC;
    }
    return awaited ? DYNAMIC : base;
  }

  private parsePrimary(): PyExpr {
    let expr = this.parseAtom();
    for (;;) {
      if (this.eatOp(".")) {
        expr = { kind: "attribute", value: expr, attr: this.expectName("an attribute name") };
      } else if (this.eatOp("(")) {
        this.parseCallArguments();
        expr = DYNAMIC;
      } else if (this.eatOp("[")) {
        expr = { kind: "subscript", value: expr, index: this.parseSlices() };
      } else {
        return expr;
      }
    }
  }

  private parseCallArguments(): void {
    while (!this.eatOp(")")) {
      if (this.eatOp("*") || this.eatOp("**")) this.parseExpression();
      else if (this.peek()?.kind === "name" && this.peek(1)?.value === "=" && this.peek(1)?.kind === "op") {
        this.pos += 2;
        this.parseExpression();
      } else {
        this.parseNamedExpression();
        if (this.isKeyword("for") || this.isKeyword("async")) this.parseComprehension();
      }
      if (!this.eatOp(",")) {
        this.expectOp(")");
        return;
      }
    }
  }

  private parseSlices(): PyExpr[] {
    const items: PyExpr[] = [];
    while (!this.eatOp("]")) {
      items.push(this.parseSlice());
      if (!this.eatOp(",")) {
        this.expectOp("]");
        break;
      }
    }
    if (items.length === 0) throw this.error(this.peek(-1), "empty subscript");
    return items;
  }

  private parseSlice(): PyExpr {
    if (this.eatOp("*")) return { kind: "unary", op: "+", operand: this.parseBinary(0) };
    let expr: PyExpr | null = null;
    if (!this.isOp(":")) expr = this.parseNamedExpression();
    if (!this.isOp(":")) return expr as PyExpr;
    for (let k = 0; k < 2 && this.eatOp(":"); k++) {
      if (!this.isOp(":") && !this.isOp(",") && !this.isOp("]")) this.parseExpression();
    }
    return DYNAMIC;
  }

  private parseAtom(): PyExpr {
    const t = this.next();
    if (!t) throw this.error(undefined, "expected an expression");
    if (t.kind === "number") return numberConstant(t.value);
    if (t.kind === "string") return this.parseStrings(t);
    if (t.kind === "name") {
      if (t.value === "None") return { kind: "constant", value: null };
      if (t.value === "True" || t.value === "False") return { kind: "constant", value: t.value === "True" };
      if (KEYWORDS.has(t.value)) throw this.error(t, `unexpected keyword '${t.value}'`);
      return { kind: "name", id: t.value };
    }
    switch (t.value) {
      case "...":
        return { kind: "ellipsis" };
      case "(":
        return this.parseParenthesized();
      case "[":
        return this.parseDisplay("]", "list");
      case "{":
        return this.parseBraces();
    }
    throw this.error(t, `unexpected '${t.value}'`);
  }

  private parseStrings(first: Token): PyExpr {
    const parts = [this.decode(first.value)];
    while (this.peek()?.kind === "string") parts.push(this.decode(this.next().value));
    if (parts.some((p) => p === null)) return DYNAMIC;
    const decoded = parts as ({ text: string } | { bytes: Uint8Array })[];
    if (decoded.every((p) => "text" in p)) {
      return { kind: "constant", value: decoded.map((p) => p.text).join("") };
    }
    if (decoded.every((p) => "bytes" in p)) {
      return { kind: "bytes", value: Buffer.concat(decoded.map((p) => p.bytes)) };
    }
    throw this.error(first, "cannot mix bytes and nonbytes literals");
  }

  private parseParenthesized(): PyExpr {
    if (this.eatOp(")")) return { kind: "tuple", elements: [] };
    if (this.eatKeyword("yield")) throw this.error(this.peek(-1), "'yield' outside function");
    const display = this.parseDisplay(")", "tuple");
    return display;
  }

  /** `[a, b]`, `(a, b)` / `(a)`, and their comprehensions; the opening bracket is consumed. */
  private parseDisplay(close: "]" | ")", kind: "list" | "tuple"): PyExpr {
    const elements: PyExpr[] = [];
    let trailingComma = false;
    while (!this.eatOp(close)) {
      elements.push(this.parseStarredOrNamed());
      if (elements.length === 1 && (this.isKeyword("for") || this.isKeyword("async"))) {
        this.parseComprehension();
        this.expectOp(close);
        return DYNAMIC;
      }
      trailingComma = this.eatOp(",");
      if (!trailingComma) {
        this.expectOp(close);
        break;
      }
    }
    if (kind === "tuple" && elements.length === 1 && !trailingComma) return elements[0] as PyExpr;
    return { kind, elements };
  }

  private parseStarredOrNamed(): PyExpr {
    if (this.eatOp("*")) {
      this.parseBinary(0);
      return DYNAMIC;
    }
    return this.parseNamedExpression();
  }

  /** `{}` dict, `{a: b}` dict, `{a}` set, and their comprehensions; `{` is consumed. */
  private parseBraces(): PyExpr {
    if (this.eatOp("}")) return { kind: "dict", entries: [] };
    if (this.isOp("**")) return this.parseDict();
    const first = this.parseStarredOrNamed();
    if (this.eatOp(":")) return this.parseDict(first);
    const elements = [first];
    if (this.isKeyword("for") || this.isKeyword("async")) {
      this.parseComprehension();
      this.expectOp("}");
      return DYNAMIC;
    }
    while (this.eatOp(",") && !this.isOp("}")) elements.push(this.parseStarredOrNamed());
    this.expectOp("}");
    return { kind: "set", elements };
  }

  private parseDict(firstKey?: PyExpr): PyExpr {
    const entries: [PyExpr, PyExpr][] = [];
    let dynamic = false;
    let key = firstKey;
    for (;;) {
      if (key) {
        const value = this.parseExpression();
        if (entries.length === 0 && (this.isKeyword("for") || this.isKeyword("async"))) {
          this.parseComprehension();
          this.expectOp("}");
          return DYNAMIC;
        }
        entries.push([key, value]);
      } else {
        this.expectOp("**");
        this.parseBinary(0);
        dynamic = true;
      }
      if (!this.eatOp(",") || this.isOp("}")) break;
      if (this.isOp("**")) key = undefined;
      else {
        key = this.parseExpression();
        this.expectOp(":");
      }
    }
    this.expectOp("}");
    return dynamic ? DYNAMIC : { kind: "dict", entries };
  }

  // for_if_clause: ['async'] 'for' star_targets 'in' disjunction ('if' disjunction)*
  private parseComprehension(): void {
    while (this.isKeyword("for") || this.isKeyword("async")) {
      this.eatKeyword("async");
      this.expectKeyword("for");
      do {
        if (this.isKeyword("in")) break;
        this.eatOp("*");
        this.parseBinary(0);
      } while (this.eatOp(","));
      this.expectKeyword("in");
      this.parseDisjunction();
      while (this.eatKeyword("if")) this.parseDisjunction();
    }
  }
}

function numberConstant(text: string): PyExpr {
  const clean = text.replace(/_/g, "").toLowerCase();
  if (clean.endsWith("j")) return DYNAMIC;
  if (/^0[xob]/.test(clean)) return { kind: "constant", value: Number(clean) };
  const n = Number(clean);
  if (!Number.isFinite(n)) return DYNAMIC;
  return /[.e]/.test(clean) ? { kind: "constant", value: n, float: true } : { kind: "constant", value: n };
}
