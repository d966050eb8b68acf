import { SignatureError } from "./types.ts";

// A shell lexer (POSIX token recognition, as bash applies it): words keep their quoting, so that an
// assignment's value can be parsed afterwards; comments and here-document bodies are dropped, so a
// `name="$1"` inside them is not mistaken for an argument.

export type ShellToken =
  | { kind: "word"; text: string; line: number }
  | { kind: "op"; text: string; line: number }
  | { kind: "newline"; text: "\n"; line: number };

const OPERATORS = [
  "<<<",
  "<<-",
  ";;&",
  "&&",
  "||",
  ";;",
  ";&",
  "<<",
  ">>",
  "<&",
  ">&",
  "<>",
  ">|",
  "&>",
  "|&",
];
const META = new Set([" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">"]);

function syntaxError(line: number, message: string): SignatureError {
  return new SignatureError(`bash: syntax error at line ${line}: ${message}`);
}

export class ShellLexer {
  private i = 0;
  private line = 1;
  private readonly source: string;
  private readonly heredocs: { delimiter: string; stripTabs: boolean }[] = [];

  constructor(source: string) {
    this.source = source.replace(/\r\n/g, "\n");
  }

  tokenize(): ShellToken[] {
    const tokens: ShellToken[] = [];
    const s = this.source;
    while (this.i < s.length) {
      const ch = s[this.i] as string;
      if (ch === " " || ch === "\t") {
        this.i++;
      } else if (ch === "\\" && s[this.i + 1] === "\n") {
        this.i += 2;
        this.line++;
      } else if (ch === "#") {
        while (this.i < s.length && s[this.i] !== "\n") this.i++;
      } else if (ch === "\n") {
        tokens.push({ kind: "newline", text: "\n", line: this.line });
        this.i++;
        this.line++;
        this.readHeredocBodies();
      } else if (META.has(ch)) {
        const op = OPERATORS.find((o) => s.startsWith(o, this.i)) ?? ch;
        tokens.push({ kind: "op", text: op, line: this.line });
        this.i += op.length;
        if (op === "<<" || op === "<<-") this.queueHeredoc(op === "<<-");
      } else {
        const line = this.line;
        tokens.push({ kind: "word", text: this.readWord(), line });
      }
    }
    if (this.heredocs.length > 0) this.readHeredocBodies();
    return tokens;
  }

  private queueHeredoc(stripTabs: boolean): void {
    while (this.source[this.i] === " " || this.source[this.i] === "\t") this.i++;
    const line = this.line;
    const word = this.readWord();
    if (word === "") throw syntaxError(line, "here-document without a delimiter");
    // Quoting in the delimiter only disables expansion in the body; the delimiter is its unquoted text.
    this.heredocs.push({ delimiter: word.replace(/\\(.)|["']/g, "$1"), stripTabs });
  }

  private readHeredocBodies(): void {
    const s = this.source;
    while (this.heredocs.length > 0) {
      const { delimiter, stripTabs } = this.heredocs.shift() as { delimiter: string; stripTabs: boolean };
      for (;;) {
        if (this.i >= s.length) return;
        const end = s.indexOf("\n", this.i);
        const text = s.slice(this.i, end === -1 ? s.length : end);
        this.i = end === -1 ? s.length : end + 1;
        this.line++;
        if ((stripTabs ? text.replace(/^\t+/, "") : text) === delimiter) break;
      }
    }
  }

  /** Reads one word from the current position, quotes and expansions included, up to a metacharacter. */
  private readWord(): string {
    const s = this.source;
    const start = this.i;
    while (this.i < s.length) {
      const ch = s[this.i] as string;
      if (META.has(ch)) break;
      this.skipUnit();
    }
    return s.slice(start, this.i);
  }

  /** Skips one character, quoted string or expansion starting at the current position. */
  private skipUnit(): void {
    const s = this.source;
    const ch = s[this.i] as string;
    const startLine = this.line;
    if (ch === "\\") {
      this.advance(2);
    } else if (ch === "'") {
      const end = s.indexOf("'", this.i + 1);
      if (end === -1) throw syntaxError(startLine, "unterminated single-quoted string");
      this.advance(end + 1 - this.i);
    } else if (ch === '"') {
      this.advance(1);
      while (this.i < s.length && s[this.i] !== '"') {
        if (s[this.i] === "$" || s[this.i] === "`" || s[this.i] === "\\") this.skipUnit();
        else this.advance(1);
      }
      if (this.i >= s.length) throw syntaxError(startLine, "unterminated double-quoted string");
      this.advance(1);
    } else if (ch === "`") {
      this.advance(1);
      while (this.i < s.length && s[this.i] !== "`") this.advance(s[this.i] === "\\" ? 2 : 1);
      if (this.i >= s.length) throw syntaxError(startLine, "unterminated backquote");
      this.advance(1);
    } else if (ch === "$" && s[this.i + 1] === "'") {
      this.advance(2);
      while (this.i < s.length && s[this.i] !== "'") this.advance(s[this.i] === "\\" ? 2 : 1);
      if (this.i >= s.length) throw syntaxError(startLine, "unterminated $'...' string");
      this.advance(1);
    } else if (ch === "$" && (s[this.i + 1] === "(" || s[this.i + 1] === "{")) {
      const close = s[this.i + 1] === "(" ? ")" : "}";
      this.advance(2);
      this.skipNested(close, startLine);
    } else {
      this.advance(1);
    }
  }

  /** Skips to the matching `close`, through quotes and nested expansions. */
  private skipNested(close: ")" | "}", startLine: number): void {
    const s = this.source;
    const open = close === ")" ? "(" : "{";
    let depth = 1;
    while (this.i < s.length) {
      const ch = s[this.i] as string;
      if (ch === close) {
        depth--;
        this.advance(1);
        if (depth === 0) return;
      } else if (ch === open) {
        depth++;
        this.advance(1);
      } else if (ch === "#" && close === ")" && /[\s(;|&]/.test(s[this.i - 1] ?? " ")) {
        while (this.i < s.length && s[this.i] !== "\n") this.advance(1);
      } else {
        this.skipUnit();
      }
    }
    throw syntaxError(startLine, `'${open}' was never closed`);
  }

  private advance(n: number): void {
    const end = Math.min(this.i + n, this.source.length);
    for (let k = this.i; k < end; k++) if (this.source.charCodeAt(k) === 10) this.line++;
    this.i = end;
  }
}

export function tokenizeShell(source: string): ShellToken[] {
  return new ShellLexer(source).tokenize();
}
