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

/** The item shape of an array whose elements are described by `element` (undefined: any item). */
export function itemsOf(element: PropertySchema): ValueSchema | undefined {
  if (!element.type) return undefined;
  const { description: _d, default: _v, ...shape } = element;
  return shape;
}

/** `integers`: whether the language distinguishes ints (Python) from numbers (TypeScript). */
export function propertyFromValue(value: unknown, integers: boolean): PropertySchema {
  let type: PropertyType | undefined;
  if (typeof value === "string") type = "string";
  else if (typeof value === "boolean") type = "boolean";
  else if (typeof value === "number") type = integers && Number.isInteger(value) ? "integer" : "number";
  else if (Array.isArray(value)) type = "array";
  else if (value !== null && typeof value === "object") type = "object";
  return type ? { type, description: "" } : { description: "" };
}
