import { JSON_SCHEMA_DRAFT } from "./types.ts";
import type { ArgSchema, PropertySchema } from "./types.ts";

type Props = Record<string, Omit<PropertySchema, "description"> & { description?: string }>;

/** Expected schema for tests: properties in signature order, `description: ""` filled in. */
export function expectSchema(properties: Props, required: string[]): ArgSchema {
  const full: Record<string, PropertySchema> = {};
  for (const [name, p] of Object.entries(properties)) {
    const { type, ...rest } = p;
    full[name] = type === undefined ? { description: "", ...rest } : { type, description: "", ...rest };
  }
  return {
    $schema: JSON_SCHEMA_DRAFT,
    type: "object",
    properties: full,
    required,
    order: Object.keys(properties),
  };
}

/** Compares regardless of key order inside property objects. */
export function normalize(schema: ArgSchema): ArgSchema {
  const properties: Record<string, PropertySchema> = {};
  for (const [name, p] of Object.entries(schema.properties)) {
    properties[name] = Object.fromEntries(
      Object.entries(p).sort(([a], [b]) => a.localeCompare(b)),
    ) as PropertySchema;
  }
  return { ...schema, properties };
}

/** A signature and the schema Windmill's conventions give it. */
export interface SchemaCase {
  name: string;
  source: string;
  expected: ArgSchema;
}
