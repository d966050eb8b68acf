import { SignatureError } from "./types.ts";
import { positionalSchema } from "./positional.ts";
import type { PositionalParam } from "./positional.ts";
import type { ArgSchema, PropertySchema, PropertyType } from "./types.ts";

// -- $1 name (type) = default
const PARAM_COMMENT =
  /^\s*--\s*\$(\d+)\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(\s*((?:[^()]|\([^()]*\))*?)\s*\))?\s*(?:=\s*(.*?))?\s*$/;

const SQL_TYPES: Record<string, { type: PropertyType; format?: string }> = {
  text: { type: "string" },
  varchar: { type: "string" },
  "character varying": { type: "string" },
  char: { type: "string" },
  character: { type: "string" },
  uuid: { type: "string", format: "uuid" },
  int: { type: "integer" },
  int2: { type: "integer" },
  int4: { type: "integer" },
  int8: { type: "integer" },
  integer: { type: "integer" },
  smallint: { type: "integer" },
  bigint: { type: "integer" },
  float: { type: "number" },
  float4: { type: "number" },
  float8: { type: "number" },
  real: { type: "number" },
  numeric: { type: "number" },
  decimal: { type: "number" },
  double: { type: "number" },
  "double precision": { type: "number" },
  bool: { type: "boolean" },
  boolean: { type: "boolean" },
  date: { type: "string", format: "date" },
  timestamp: { type: "string", format: "date-time" },
  timestamptz: { type: "string", format: "date-time" },
  json: { type: "object" },
  jsonb: { type: "object" },
};

function mapSqlType(raw: string, line: number): PropertySchema {
  const normalized = raw
    .toLowerCase()
    .replace(/\(\s*\d+(?:\s*,\s*\d+)?\s*\)/g, "")
    .replace(/\s+/g, " ")
    .trim();
  const isArray = normalized.endsWith("[]");
  const base = isArray ? normalized.slice(0, -2).trim() : normalized;
  const mapped = base === "" ? { type: "string" as const } : SQL_TYPES[base];
  if (!mapped) throw new SignatureError(`postgresql: unknown type \`${raw}\` at line ${line}`);
  if (isArray) return { type: "array", description: "", items: { type: mapped.type } };
  const property: PropertySchema = { type: mapped.type, description: "" };
  if (mapped.format) property.format = mapped.format;
  return property;
}

function parseDefault(raw: string, property: PropertySchema, line: number): unknown {
  const text = raw.trim();
  const quoted = /^'(.*)'$/.exec(text) ?? /^"(.*)"$/.exec(text);
  if (text.toLowerCase() === "null") return null;
  switch (property.type) {
    case "integer":
    case "number": {
      const n = Number(text);
      if (text === "" || !Number.isFinite(n) || (property.type === "integer" && !Number.isInteger(n))) {
        throw new SignatureError(
          `postgresql: default \`${text}\` at line ${line} is not a valid ${property.type}`,
        );
      }
      return n;
    }
    case "boolean": {
      const lower = text.toLowerCase();
      if (lower === "true" || lower === "false") return lower === "true";
      throw new SignatureError(`postgresql: default \`${text}\` at line ${line} is not a boolean`);
    }
    case "object":
    case "array":
      try {
        return JSON.parse(quoted ? (quoted[1] as string) : text);
      } catch {
        throw new SignatureError(`postgresql: default at line ${line} is not valid JSON`);
      }
    default:
      return quoted ? (quoted[1] as string).replace(/''/g, "'") : text;
  }
}

export function inferSqlSchema(content: string): ArgSchema {
  const params: PositionalParam[] = [];
  content.split(/\r?\n/).forEach((text, index) => {
    const m = PARAM_COMMENT.exec(text);
    if (!m) return;
    const line = index + 1;
    const property = mapSqlType(m[3] ?? "", line);
    const rawDefault = m[4];
    if (rawDefault !== undefined && rawDefault !== "") {
      const value = parseDefault(rawDefault, property, line);
      if (value === null) property.nullable = true;
      else property.default = value;
    }
    params.push({
      name: m[2] as string,
      position: Number(m[1]),
      line,
      required: rawDefault === undefined || rawDefault === "",
      property,
    });
  });
  return positionalSchema("postgresql", params);
}
