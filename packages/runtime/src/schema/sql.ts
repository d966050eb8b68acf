import { SignatureError } from "./types.ts";
import { positionalSchema } from "./positional.ts";
import type { PositionalParam } from "./positional.ts";
import type { ArgSchema, PropertySchema, PropertyType } from "./types.ts";

// PostgreSQL scripts, the contract shared with the executor (exec/postgresql.ts):
//
// - Arguments are declared by line comments, one per placeholder, each alone on its line:
//     -- $1 name            (no type: text)
//     -- $2 limit (int) = 10
//     -- $3 tags (text[]) = ["a", "b"]
//   The lexer skips string literals, quoted identifiers, dollar-quoted bodies and block comments,
//   so a `-- $1` inside them declares nothing. The first comment for a position wins.
// - The schema is `database` first — {type: "object", format: "resource-postgresql"}, required:
//   the connection, passed as `$res:<path>` and resolved by the worker — then `$1..$n` in position
//   order, each property named by its comment. Positions must be exactly 1..n (positional.ts).
//   `order` is therefore ["database", name of $1, …, name of $n]; `database` is a reserved name.
// - At run time the executor connects with args.database and binds `$k` to args[name of $k]
//   (validateArgs has already filled defaults and checked types), cast to the declared raw type
//   (`$k::int`). `sqlArguments` gives it the declarations as this module reads them.

export const DATABASE_ARG = "database";

export interface SqlArgument {
  position: number;
  name: string;
  /** The declared PostgreSQL type as written (`varchar(10)`, `text[]`), or null when omitted. */
  type: string | null;
  /** The default's source text, or null when there is none. */
  defaultText: string | null;
  line: number;
}

const SQL_TYPES: Record<string, { type: PropertyType; format?: string }> = {
  int: { type: "integer" },
  int2: { type: "integer" },
  int4: { type: "integer" },
  int8: { type: "integer" },
  integer: { type: "integer" },
  smallint: { type: "integer" },
  bigint: { type: "integer" },
  serial: { type: "integer" },
  bigserial: { type: "integer" },
  oid: { type: "integer" },
  float: { type: "number" },
  float4: { type: "number" },
  float8: { type: "number" },
  real: { type: "number" },
  numeric: { type: "number" },
  decimal: { type: "number" },
  "double precision": { type: "number" },
  bool: { type: "boolean" },
  boolean: { type: "boolean" },
  uuid: { type: "string", format: "uuid" },
  date: { type: "string", format: "date" },
  timestamp: { type: "string", format: "date-time" },
  timestamptz: { type: "string", format: "date-time" },
  "timestamp with time zone": { type: "string", format: "date-time" },
  "timestamp without time zone": { type: "string", format: "date-time" },
  json: { type: "object" },
  jsonb: { type: "object" },
};

function syntaxError(line: number, message: string): SignatureError {
  return new SignatureError(`postgresql: ${message} at line ${line}`);
}

/** Block comments nest in PostgreSQL. */
function endOfBlockComment(sql: string, start: number): number {
  let depth = 0;
  let k = start;
  do {
    if (sql.startsWith("/*", k)) {
      depth++;
      k += 2;
    } else if (sql.startsWith("*/", k)) {
      depth--;
      k += 2;
    } else k++;
  } while (depth > 0 && k < sql.length);
  return k;
}

function endOfQuoted(sql: string, start: number, backslashEscapes: boolean): number {
  const quote = sql[start];
  let k = start + 1;
  while (k < sql.length) {
    if (backslashEscapes && sql[k] === "\\") k += 2;
    else if (sql[k] !== quote) k++;
    else if (sql[k + 1] === quote) k += 2;
    else return k + 1;
  }
  return sql.length;
}

/** The line comments (`-- …`) that start their line, outside strings, identifiers and block comments. */
function lineComments(sql: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let line = 1;
  let lineHasCode = false;
  let i = 0;
  const skipTo = (end: number) => {
    for (let k = i; k < end; k++) if (sql.charCodeAt(k) === 10) line++;
    i = end;
  };
  while (i < sql.length) {
    const ch = sql[i] as string;
    if (ch === "\n") {
      line++;
      lineHasCode = false;
      i++;
    } else if (ch === " " || ch === "\t" || ch === "\r") {
      i++;
    } else if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      const stop = end === -1 ? sql.length : end;
      if (!lineHasCode) out.push({ text: sql.slice(i + 2, stop).replace(/\r$/, ""), line });
      i = stop;
    } else if (sql.startsWith("/*", i)) {
      skipTo(endOfBlockComment(sql, i));
      lineHasCode = true;
    } else if (ch === "'" || ch === '"') {
      // E'…' strings take backslash escapes; standard strings and identifiers only doubled quotes.
      const escapes = ch === "'" && /[eE]/.test(sql[i - 1] ?? "") && !/\w/.test(sql[i - 2] ?? "");
      skipTo(endOfQuoted(sql, i, escapes));
      lineHasCode = true;
    } else if (ch === "$" && !/[\w$]/.test(sql[i - 1] ?? "")) {
      const tag = /^\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/.exec(sql.slice(i, i + 64))?.[0];
      const end = tag ? sql.indexOf(tag, i + tag.length) : -1;
      skipTo(tag ? (end === -1 ? sql.length : end + tag.length) : i + 1);
      lineHasCode = true;
    } else {
      i++;
      lineHasCode = true;
    }
  }
  return out;
}

/** `$1 name (type) = default`, parsed from a comment's text; null if it declares no argument. */
function parseDeclaration(text: string, line: number): SqlArgument | null {
  const head = /^\s*\$(\d+)(?=\s|$)\s*/.exec(text);
  if (!head) return null;
  let rest = text.slice(head[0].length);
  const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest)?.[0];
  if (!name) throw syntaxError(line, `\`$${head[1]}\` needs a name (\`-- $${head[1]} name (type)\`)`);
  rest = rest.slice(name.length).trimStart();
  let type: string | null = null;
  if (rest.startsWith("(")) {
    let depth = 0;
    let k = 0;
    for (; k < rest.length; k++) {
      if (rest[k] === "(") depth++;
      else if (rest[k] === ")" && --depth === 0) break;
    }
    if (depth !== 0) throw syntaxError(line, `the type of \`${name}\` is not closed`);
    type = rest.slice(1, k).trim().replace(/\s+/g, " ");
    rest = rest.slice(k + 1).trimStart();
  }
  let defaultText: string | null = null;
  if (rest.startsWith("=")) {
    defaultText = rest.slice(1).trim();
    rest = "";
  }
  if (rest.trim() !== "") throw syntaxError(line, `unexpected \`${rest.trim()}\` after argument \`${name}\``);
  return { position: Number(head[1]), name, type: type || null, defaultText: defaultText || null, line };
}

/** The `-- $n name (type) = default` declarations of a script, first one per position, in source order. */
export function sqlArguments(content: string): SqlArgument[] {
  const seen = new Set<number>();
  const out: SqlArgument[] = [];
  for (const comment of lineComments(content)) {
    const arg = parseDeclaration(comment.text, comment.line);
    if (!arg || seen.has(arg.position)) continue;
    seen.add(arg.position);
    out.push(arg);
  }
  return out;
}

// identifier words (`double precision`, `character varying`, `public.citext`), then an optional
// modifier list `(10)` / `(10, 2)`, then array brackets.
const TYPE_SYNTAX =
  /^([A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)?(?: [A-Za-z_][\w$]*)*)\s*(\(\s*\d+\s*(?:,\s*\d+\s*)?\))?((?:\s*\[\s*\d*\s*\])*)$/;

function mapSqlType(raw: string | null, line: number): PropertySchema {
  if (raw === null) return { type: "string", description: "" };
  const m = TYPE_SYNTAX.exec(raw);
  if (!m) throw syntaxError(line, `\`${raw}\` is not a PostgreSQL type`);
  const base = (m[1] as string).toLowerCase();
  // Types without a JSON counterpart (text, varchar, inet, interval, citext, enums…) are strings.
  const mapped = SQL_TYPES[base] ?? { type: "string" as const };
  if (m[3]) {
    return { type: "array", description: "", items: mapped.format ? { ...mapped } : { type: mapped.type } };
  }
  return mapped.format
    ? { type: mapped.type, description: "", format: mapped.format }
    : { type: mapped.type, description: "" };
}

function parseDefault(text: string, property: PropertySchema, line: number): unknown {
  const quoted = /^'((?:[^']|'')*)'$/.exec(text);
  if (text.toLowerCase() === "null") return null;
  switch (property.type) {
    case "integer":
    case "number": {
      const n = Number(text);
      if (
        !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text) ||
        (property.type === "integer" && !Number.isInteger(n))
      ) {
        throw syntaxError(line, `default \`${text}\` is not a valid ${property.type}`);
      }
      return n;
    }
    case "boolean": {
      const lower = text.toLowerCase();
      if (lower === "true" || lower === "false") return lower === "true";
      throw syntaxError(line, `default \`${text}\` is not a boolean`);
    }
    case "object":
    case "array":
      try {
        const value: unknown = JSON.parse(quoted ? (quoted[1] as string).replace(/''/g, "'") : text);
        if ((property.type === "array") !== Array.isArray(value) || typeof value !== "object")
          throw new Error();
        return value;
      } catch {
        throw syntaxError(line, `default is not a JSON ${property.type}`);
      }
    default:
      return quoted ? (quoted[1] as string).replace(/''/g, "'") : text;
  }
}

export function inferSqlSchema(content: string): ArgSchema {
  const params: PositionalParam[] = [];
  for (const arg of sqlArguments(content)) {
    if (arg.name === DATABASE_ARG) {
      throw syntaxError(
        arg.line,
        `\`${DATABASE_ARG}\` is reserved for the database resource; rename $${arg.position}`,
      );
    }
    const property = mapSqlType(arg.type, arg.line);
    if (arg.defaultText !== null) {
      const value = parseDefault(arg.defaultText, property, arg.line);
      if (value === null) property.nullable = true;
      else property.default = value;
    }
    params.push({
      name: arg.name,
      position: arg.position,
      line: arg.line,
      required: arg.defaultText === null,
      property,
    });
  }
  const schema = positionalSchema("postgresql", params);
  return {
    ...schema,
    properties: {
      [DATABASE_ARG]: { type: "object", description: "", format: "resource-postgresql" },
      ...schema.properties,
    },
    required: [DATABASE_ARG, ...schema.required],
    order: [DATABASE_ARG, ...schema.order],
  };
}
