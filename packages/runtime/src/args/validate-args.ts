import type { ArgSchema, PropertySchema, ValueSchema } from "../schema/types.ts";
import { checkFormat, isBase64 } from "./formats.ts";

export class ArgsError extends Error {
  override name = "ArgsError";
  /** The top-level argument at fault (`args.<field>` in API errors). */
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

// `$var:<path>` / `$res:<path>`: a top-level argument the worker replaces with the variable's or
// resource's value when the job starts, so its type can only be checked then.
const REFERENCE = /^\$(var|res):/;

function describe(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

const FORMAT_NAMES: Record<string, string> = {
  "date-time": "a date-time string (e.g. 2024-05-01T10:00:00Z)",
  date: "a date string (YYYY-MM-DD)",
  uuid: "a UUID",
  email: "an email address",
  base64: "a base64 string",
};

/**
 * Checks one value against its shape and converts loose inputs (numeric strings, "true"/"false",
 * JSON text for objects and arrays). `label` is the path shown in errors (`tags[1]`, `cfg.host`).
 */
function coerce(field: string, label: string, shape: ValueSchema, value: unknown): unknown {
  const fail = (expected: string): never => {
    throw new ArgsError(
      field,
      `argument "${label}" must be ${expected}, got ${kindOf(value)}: ${describe(value)}`,
    );
  };
  if (value === null) {
    if (shape.nullable || !shape.type) return null;
    throw new ArgsError(field, `argument "${label}" must be ${typeName(shape)}, got null`);
  }
  switch (shape.type) {
    case "string": {
      let text: string;
      if (typeof value === "string") text = value;
      else if (typeof value === "number" || typeof value === "boolean") text = String(value);
      else return fail("a string");
      if (shape.enum && shape.enum.length > 0 && !shape.enum.includes(text)) {
        throw new ArgsError(
          field,
          `argument "${label}" must be one of ${shape.enum.map((e) => JSON.stringify(e)).join(", ")}, got ${describe(text)}`,
        );
      }
      if (!checkFormat(shape.format, text)) fail(FORMAT_NAMES[shape.format as string] as string);
      if (shape.contentEncoding === "base64" && !isBase64(text)) fail(FORMAT_NAMES.base64 as string);
      return text;
    }
    case "number":
    case "integer": {
      let n: number | undefined;
      if (typeof value === "number") n = value;
      else if (typeof value === "string" && value.trim() !== "") n = Number(value.trim());
      const integer = shape.type === "integer";
      if (n === undefined || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
        return fail(integer ? "an integer" : "a number");
      }
      return n;
    }
    case "boolean":
      if (typeof value === "boolean") return value;
      if (value === "true" || value === "false") return value === "true";
      return fail("a boolean");
    case "object": {
      const parsed = typeof value === "string" ? parseJson(value) : value;
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return fail("an object");
      return shape.properties ? coerceFields(field, label, shape, parsed as Record<string, unknown>) : parsed;
    }
    case "array": {
      const parsed = typeof value === "string" ? parseJson(value) : value;
      if (!Array.isArray(parsed)) return fail("an array");
      const items = shape.items;
      if (!items?.type) return parsed;
      return parsed.map((item: unknown, i) => coerce(field, `${label}[${i}]`, items, item));
    }
    default:
      return value;
  }
}

function typeName(shape: ValueSchema): string {
  return shape.type === "integer" || shape.type === "array" || shape.type === "object"
    ? `an ${shape.type}`
    : `a ${shape.type}`;
}

/** An object with declared fields: each is checked; undeclared fields are kept as they are. */
function coerceFields(
  field: string,
  label: string,
  shape: ValueSchema,
  value: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...value };
  const required = new Set(shape.required ?? []);
  for (const [key, property] of Object.entries(shape.properties ?? {})) {
    const present = Object.hasOwn(value, key) && value[key] !== undefined;
    if (!present) {
      if (property.default !== undefined) out[key] = structuredClone(property.default);
      else if (required.has(key)) throw new ArgsError(field, `argument "${label}" is missing field "${key}"`);
      continue;
    }
    out[key] = coerce(field, `${label}.${key}`, property, value[key]);
  }
  return out;
}

/**
 * Checks run arguments against a script's schema before any process starts. Returns a new object in
 * schema order holding only declared arguments, with defaults filled in and loose inputs converted.
 * Missing required arguments and wrong types throw an ArgsError naming the argument.
 */
export function validateArgs(schema: ArgSchema, args: Record<string, unknown>): Record<string, unknown> {
  // Schemas also arrive from storage and sync (Windmill exports may omit `order` or `required`).
  const properties: Record<string, PropertySchema> = schema.properties ?? {};
  const order = schema.order ?? [];
  const required = new Set(schema.required ?? []);
  const names = [...order, ...Object.keys(properties).filter((k) => !order.includes(k))];
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const property = properties[name];
    if (!property || Object.hasOwn(out, name)) continue;
    let value = Object.hasOwn(args, name) ? args[name] : undefined;
    // null stands for "no value" unless the argument accepts null (Optional[T], T | null).
    if (value === null && !property.nullable) {
      if (required.has(name) && property.default === undefined) {
        throw new ArgsError(name, `argument "${name}" must not be null`);
      }
      value = undefined;
    }
    if (value === undefined) {
      if (property.default !== undefined) out[name] = structuredClone(property.default);
      else if (required.has(name)) throw new ArgsError(name, `missing required argument "${name}"`);
      continue;
    }
    out[name] =
      typeof value === "string" && REFERENCE.test(value) ? value : coerce(name, name, property, value);
  }
  return out;
}
