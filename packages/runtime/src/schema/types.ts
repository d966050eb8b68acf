export interface ArgSchema {
  $schema: "https://json-schema.org/draft/2020-12/schema";
  type: "object";
  properties: Record<string, PropertySchema>;
  required: string[];
  order: string[];
}

export type PropertyType = "string" | "number" | "integer" | "boolean" | "object" | "array";

/** The shape of a value: what array items and nested object fields carry (no description, no default). */
export interface ValueSchema {
  type?: PropertyType;
  enum?: string[];
  /** `date-time`, `date`, `email`, `uuid`, `sql`, or `resource-<type>` for resource objects. */
  format?: string;
  contentEncoding?: "base64";
  items?: ValueSchema;
  /** Fields of an inline object type; `required` lists those that must be present. */
  properties?: Record<string, PropertySchema>;
  required?: string[];
  /** A tagged union of object types (`{ kind: "a"; … } | { kind: "b"; … }`): one entry per variant. */
  oneOf?: (ValueSchema & { type: "object"; title: string })[];
  nullable?: boolean;
}

export interface PropertySchema extends ValueSchema {
  description: string;
  default?: unknown;
}

export class SignatureError extends Error {
  override name = "SignatureError";
}

export interface InferredParam {
  name: string;
  property: PropertySchema;
  required: boolean;
}

export const JSON_SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema";

export function buildSchema(params: InferredParam[]): ArgSchema {
  const properties: Record<string, PropertySchema> = {};
  const required: string[] = [];
  const order: string[] = [];
  for (const p of params) {
    properties[p.name] = p.property;
    order.push(p.name);
    if (p.required) required.push(p.name);
  }
  return { $schema: JSON_SCHEMA_DRAFT, type: "object", properties, required, order };
}

export function toSnakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase();
}

/** Windmill's convention: a parameter typed by a resource type's name takes a resource of that type. */
export function resourceProperty(typeName: string): PropertySchema {
  return { type: "object", description: "", format: `resource-${toSnakeCase(typeName)}` };
}

/**
 * The item shape of an array whose elements are described by `element` (undefined: any item).
 * Integer items stay integers (windmill-cli writes `list[int]` items as numbers: a documented
 * disagreement, docs/schema-inference.md).
 */
export function itemsOf(element: PropertySchema): ValueSchema | undefined {
  if (!element.type) return undefined;
  const { description: _d, default: _v, ...shape } = element;
  return shape;
}

/**
 * The schema of an untyped parameter, from its default value, as Windmill infers it: a list's items
 * from its elements when they are all of one kind, an object's fields from its entries.
 * `integers`: whether a whole number is an integer (Windmill says so in both Python and TypeScript).
 */
export function propertyFromValue(value: unknown, integers: boolean): PropertySchema {
  if (typeof value === "string") return { type: "string", description: "" };
  if (typeof value === "boolean") return { type: "boolean", description: "" };
  if (typeof value === "number") {
    return { type: integers && Number.isInteger(value) ? "integer" : "number", description: "" };
  }
  if (Array.isArray(value)) {
    const property: PropertySchema = { type: "array", description: "" };
    const elements = value.map((v) => propertyFromValue(v, integers));
    const first = elements[0];
    if (first && elements.every((e) => sameShape(e, first))) {
      const items = itemsOf(first);
      if (items) property.items = items;
    }
    return property;
  }
  if (value !== null && typeof value === "object") {
    const property: PropertySchema = { type: "object", description: "" };
    const entries = Object.entries(value);
    if (entries.length > 0) {
      property.properties = Object.fromEntries(entries.map(([k, v]) => [k, propertyFromValue(v, integers)]));
    }
    return property;
  }
  return { description: "" };
}

/** Whether two inferred element shapes are alike (numbers: integers and floats alike). */
export function sameShape(a: ValueSchema, b: ValueSchema): boolean {
  const number = (t: ValueSchema["type"]) => (t === "integer" ? "number" : t);
  return (
    number(a.type) === number(b.type) && (a.type !== "object" || JSON.stringify(a) === JSON.stringify(b))
  );
}
