import type { Token } from "./python-tokens.ts";
import { SignatureError } from "./types.ts";

export const KEYWORDS = new Set(
  `
  False None True and as assert async await break class continue def del elif else except finally
  for from global if import in is lambda nonlocal not or pass raise return try while with yield
`
    .trim()
    .split(/\s+/),
);

/** Reading position over a token list, with the expect/eat helpers of a recursive-descent parser. */
export class TokenCursor {
  protected pos: number;
  protected readonly tokens: Token[];

  constructor(tokens: Token[], start: number) {
    this.tokens = tokens;
    this.pos = start;
  }

  get position(): number {
    return this.pos;
  }

  protected peek(offset = 0): Token | undefined {
    return this.tokens[this.pos + offset];
  }

  protected next(): Token {
    const t = this.tokens[this.pos];
    if (!t) throw this.error(undefined, "unexpected end of input");
    this.pos++;
    return t;
  }

  protected isOp(value: string): boolean {
    const t = this.peek();
    return t?.kind === "op" && t.value === value;
  }

  protected eatOp(value: string): boolean {
    if (!this.isOp(value)) return false;
    this.pos++;
    return true;
  }

  protected expectOp(value: string): void {
    if (!this.eatOp(value)) throw this.unexpected(`'${value}'`);
  }

  protected isKeyword(value: string): boolean {
    const t = this.peek();
    return t?.kind === "name" && t.value === value;
  }

  protected eatKeyword(value: string): boolean {
    if (!this.isKeyword(value)) return false;
    this.pos++;
    return true;
  }

  protected expectKeyword(value: string): void {
    if (!this.eatKeyword(value)) throw this.unexpected(`'${value}'`);
  }

  protected expectName(what: string): string {
    const t = this.peek();
    if (t?.kind !== "name" || KEYWORDS.has(t.value)) throw this.unexpected(what);
    this.pos++;
    return t.value;
  }

  protected unexpected(expected: string): SignatureError {
    const t = this.peek();
    return this.error(t, t ? `expected ${expected}, found '${t.value}'` : `expected ${expected}`);
  }

  error(token: Token | undefined, message: string): SignatureError {
    const where = token ? `line ${token.line}` : "end of input";
    return new SignatureError(`python3: syntax error at ${where}: ${message}`);
  }
}
