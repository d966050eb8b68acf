import { SignatureError } from "./types.ts";

export type TokenKind = "name" | "number" | "string" | "op";

export interface Token {
  kind: TokenKind;
  value: string;
  line: number;
  /** Column of the token when it is the first token of a logical line, else -1. */
  indent: number;
}

const STRING_PREFIX = /^(?:[rRuUbBfFtT]|[rR][bBfFtT]|[bBfFtT][rR])$/;
const NUMBER =
  /(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?)/y;
const NAME = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/uy;
const OPERATORS = [
  "**=",
  "//=",
  ">>=",
  "<<=",
  "...",
  "->",
  "**",
  "//",
  "==",
  "!=",
  "<=",
  ">=",
  ":=",
  "<<",
  ">>",
];
const CLOSING: Record<string, string> = { ")": "(", "]": "[", "}": "{" };

function syntaxError(line: number, message: string): SignatureError {
  return new SignatureError(`python3: syntax error at line ${line}: ${message}`);
}

/**
 * A small Python tokenizer: enough to find top-level definitions and read parameter lists without being
 * fooled by strings, comments, or brackets spanning lines. Indentation is only reported, not validated.
 */
export function tokenizePython(source: string): Token[] {
  const tokens: Token[] = [];
  const brackets: { char: string; line: number }[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let atLogicalLineStart = true;

  const push = (kind: TokenKind, value: string, startLine: number, col: number): void => {
    tokens.push({ kind, value, line: startLine, indent: atLogicalLineStart ? col : -1 });
    atLogicalLineStart = false;
  };

  while (i < source.length) {
    const ch = source[i] as string;
    if (ch === "\n") {
      i++;
      line++;
      lineStart = i;
      if (brackets.length === 0) atLogicalLineStart = true;
      continue;
    }
    if (ch === " " || ch === "\t" || ch === "\r" || ch === "\f") {
      i++;
      continue;
    }
    if (ch === "#") {
      while (i < source.length && source[i] !== "\n") i++;
      continue;
    }
    if (ch === "\\") {
      const skip = source[i + 1] === "\r" ? 2 : 1;
      const next = source[i + skip];
      if (next === undefined) break;
      if (next !== "\n") throw syntaxError(line, "unexpected character after line continuation");
      i += skip + 1;
      line++;
      lineStart = i;
      continue;
    }
    const col = i - lineStart;

    NAME.lastIndex = i;
    const name = NAME.exec(source);
    if (name) {
      const word = name[0];
      const quote = source[i + word.length];
      if ((quote === '"' || quote === "'") && STRING_PREFIX.test(word)) {
        const startLine = line;
        const end = scanString(source, i + word.length, line);
        line += countNewlines(source, i, end);
        if (line !== startLine) lineStart = source.lastIndexOf("\n", end - 1) + 1;
        push("string", source.slice(i, end), startLine, col);
        i = end;
      } else {
        push("name", word, line, col);
        i += word.length;
      }
      continue;
    }
    if (ch === '"' || ch === "'") {
      const startLine = line;
      const end = scanString(source, i, line);
      line += countNewlines(source, i, end);
      if (line !== startLine) lineStart = source.lastIndexOf("\n", end - 1) + 1;
      push("string", source.slice(i, end), startLine, col);
      i = end;
      continue;
    }
    if (/[0-9]/.test(ch) || (ch === "." && /[0-9]/.test(source[i + 1] ?? ""))) {
      NUMBER.lastIndex = i;
      const num = NUMBER.exec(source);
      const text = num ? num[0] : ch;
      push("number", text, line, col);
      i += text.length;
      continue;
    }
    const op = OPERATORS.find((o) => source.startsWith(o, i)) ?? ch;
    if (op === "(" || op === "[" || op === "{") {
      brackets.push({ char: op, line });
    } else if (op === ")" || op === "]" || op === "}") {
      const open = brackets.pop();
      if (!open) throw syntaxError(line, `unmatched '${op}'`);
      if (open.char !== CLOSING[op]) {
        throw syntaxError(line, `closing '${op}' does not match '${open.char}' opened at line ${open.line}`);
      }
    }
    push("op", op, line, col);
    i += op.length;
  }
  const unclosed = brackets.pop();
  if (unclosed) throw syntaxError(unclosed.line, `'${unclosed.char}' was never closed`);
  return tokens;
}

function countNewlines(source: string, from: number, to: number): number {
  let n = 0;
  for (let k = from; k < to; k++) if (source.charCodeAt(k) === 10) n++;
  return n;
}

/** Returns the index just past the closing quote of the string starting at `start` (its opening quote). */
function scanString(source: string, start: number, line: number): number {
  const quote = source[start] as string;
  const triple = source.startsWith(quote.repeat(3), start);
  const delimiter = triple ? quote.repeat(3) : quote;
  let i = start + delimiter.length;
  while (i < source.length) {
    const ch = source[i];
    if (ch === "\\") {
      i += 2;
      continue;
    }
    if (!triple && ch === "\n") break;
    if (source.startsWith(delimiter, i)) return i + delimiter.length;
    i++;
  }
  throw syntaxError(
    line,
    triple ? "unterminated triple-quoted string literal" : "unterminated string literal",
  );
}

const SIMPLE_ESCAPES: Record<string, string> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  n: "\n",
  r: "\r",
  t: "\t",
  b: "\b",
  f: "\f",
  v: "\v",
  a: "\x07",
  "\n": "",
};

/**
 * Decodes a string token: text for str literals, bytes for b"" literals, null for f-strings and
 * t-strings, whose value is not static.
 */
export function decodePythonString(token: string): { text: string } | { bytes: Uint8Array } | null {
  const quoteAt = token.search(/["']/);
  const prefix = token.slice(0, quoteAt).toLowerCase();
  if (prefix.includes("f") || prefix.includes("t")) return null;
  const quote = token[quoteAt] as string;
  const triple = token.startsWith(quote.repeat(3), quoteAt);
  const width = triple ? 3 : 1;
  const body = token.slice(quoteAt + width, token.length - width);
  const isBytes = prefix.includes("b");
  const text = prefix.includes("r") ? body : unescape(body, isBytes);
  if (!isBytes) return { text };
  // Bytes literals hold ASCII characters and \xNN escapes only, so each char is one byte.
  return { bytes: Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff) };
}

function unescape(body: string, isBytes: boolean): string {
  return body.replace(
    /\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|\r?\n|.)/gs,
    (whole, esc: string) => {
      const simple = SIMPLE_ESCAPES[esc.replace("\r", "")];
      if (simple !== undefined) return simple;
      if (/^[0-7]/.test(esc)) return String.fromCodePoint(parseInt(esc, 8));
      if (esc[0] === "x" || (!isBytes && (esc[0] === "u" || esc[0] === "U"))) {
        return String.fromCodePoint(parseInt(esc.slice(1), 16));
      }
      return whole;
    },
  );
}
