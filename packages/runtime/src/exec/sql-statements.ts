// Splits a SQL script into statements and finds its `$n` parameters, skipping string literals,
// quoted identifiers, dollar-quoted bodies and comments, so that a `;` or `$1` inside them is text.

export interface SqlStatement {
  text: string;
  /** Offsets (in `text`) and numbers of the `$n` placeholders, in order. */
  params: { start: number; end: number; n: number }[];
}

const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;
const PLACEHOLDER = /\$(\d+)/y;
const WORD_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;

function endOfQuoted(sql: string, from: number, quote: string, backslashEscapes: boolean): number {
  let i = from;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashEscapes && c === "\\") i += 2;
    else if (c === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

function endOfBlockComment(sql: string, from: number): number {
  let depth = 1;
  let i = from;
  while (i < sql.length && depth > 0) {
    if (sql.startsWith("/*", i)) {
      depth++;
      i += 2;
    } else if (sql.startsWith("*/", i)) {
      depth--;
      i += 2;
    } else i++;
  }
  return i;
}

export function splitSqlStatements(sql: string): SqlStatement[] {
  const statements: SqlStatement[] = [];
  let start = 0;
  let params: SqlStatement["params"] = [];
  let hasCode = false;
  const flush = (end: number) => {
    if (hasCode) {
      const text = sql.slice(start, end);
      statements.push({
        text,
        params: params.map((p) => ({ start: p.start - start, end: p.end - start, n: p.n })),
      });
    }
    start = end + 1;
    params = [];
    hasCode = false;
  };
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const prev = i > 0 ? (sql[i - 1] as string) : "";
    if (c === "-" && sql[i + 1] === "-") {
      const newline = sql.indexOf("\n", i);
      i = newline === -1 ? sql.length : newline + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      i = endOfBlockComment(sql, i + 2);
    } else if (c === "'") {
      // E'…' strings take backslash escapes; standard strings do not.
      const escaped = (prev === "E" || prev === "e") && !WORD_CHAR.test(sql[i - 2] ?? "");
      i = endOfQuoted(sql, i + 1, "'", escaped);
      hasCode = true;
    } else if (c === '"') {
      i = endOfQuoted(sql, i + 1, '"', false);
      hasCode = true;
    } else if (c === "$") {
      hasCode = true;
      PLACEHOLDER.lastIndex = i;
      const placeholder = PLACEHOLDER.exec(sql);
      if (placeholder && !WORD_CHAR.test(prev)) {
        params.push({ start: i, end: i + placeholder[0].length, n: Number(placeholder[1]) });
        i += placeholder[0].length;
        continue;
      }
      DOLLAR_TAG.lastIndex = i;
      const tag = WORD_CHAR.test(prev) ? null : DOLLAR_TAG.exec(sql);
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        i = close === -1 ? sql.length : close + tag[0].length;
      } else i++;
    } else if (c === ";") {
      flush(i);
      i++;
    } else {
      if (!/\s/.test(c)) hasCode = true;
      i++;
    }
  }
  flush(sql.length);
  return statements;
}
