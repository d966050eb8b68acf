import type { ArgSchema, PropertySchema } from "../schema/types.ts";

export class ArgsError extends Error {
  override name = "ArgsError";
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

type Shape = Pick<PropertySchema, "enum" | "format" | "items"> & { type?: string };

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

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

function coerce(field: string, label: string, shape: Shape, value: unknown): unknown {
  const fail = (expected: string): never => {
    throw new ArgsError(
      field,
      `argument "${label}" must be ${expected}, got ${kindOf(value)}: ${describe(value)}`,
    );
  };
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
      if ((shape.format === "date-time" || shape.format === "date") && Number.isNaN(Date.parse(text))) {
        fail(`a ${shape.format} string`);
      }
      if (shape.format === "base64" && !BASE64.test(text)) fail("a base64 string");
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
      return parsed;
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

/**
 * Checks run arguments against a script's schema before any process starts. Returns a new object in
 * schema order holding only declared arguments, with defaults filled in and loose inputs (numeric
 * strings, "true"/"false", JSON text for objects and arrays) converted.
 */
export function validateArgs(schema: ArgSchema, args: Record<string, unknown>): Record<string, unknown> {
  // Schemas also arrive from storage and sync (Windmill exports may omit `order` or `required`).
  const properties = schema.properties ?? {};
  const order = schema.order ?? [];
  const required = new Set(schema.required ?? []);
  const names = [...order, ...Object.keys(properties).filter((k) => !order.includes(k))];
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const property = properties[name];
    if (!property || Object.hasOwn(out, name)) continue;
    let value = Object.hasOwn(args, name) ? args[name] : undefined;
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
    // `$res:<path>` / `$var:<path>` stand for a resource or variable the worker resolves (with
    // the job's rights) right before the job runs: its type is only known then.
    if (typeof value === "string" && /^\$(res|var):/.test(value)) out[name] = value;
    else out[name] = value === null ? null : coerce(name, name, property, value);
  }
  return out;
}
