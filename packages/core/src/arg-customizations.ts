import type { ArgSchema, PropertySchema } from "@millrace/runtime";
import { invalidInput } from "./errors.ts";

/**
 * "Customize arguments": what a deployer adds, per argument, on top of the schema inferred from
 * `main`'s signature. Kept with each version (script.arg_customizations) and merged onto the
 * inferred schema at deploy, so that the run form and the argument checks use them.
 */
export interface ArgCustomization {
  description?: string;
  default?: unknown;
  enum?: string[];
  format?: string;
  min?: number;
  max?: number;
}

export type ArgCustomizations = Record<string, ArgCustomization>;

const FIELD = "arg_customizations";
const ARG_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const FORMAT = /^(?:date-time|date|email|uri|uuid|sql|resource-[A-Za-z0-9_.-]+)$/;
const MAX_ARGS = 200;
const MAX_ENUM = 200;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Checks a deployer's customisations, naming the field at fault (`arg_customizations.<arg>.<key>`). */
export function checkArgCustomizations(input: unknown): ArgCustomizations | null {
  if (input === undefined || input === null) return null;
  if (!isObject(input)) throw invalidInput(FIELD, "must be an object of argument names");
  const names = Object.keys(input);
  if (names.length > MAX_ARGS) throw invalidInput(FIELD, `at most ${MAX_ARGS} arguments`);
  const checked: ArgCustomizations = {};
  for (const name of names) {
    const field = `${FIELD}.${name}`;
    if (!ARG_NAME.test(name)) throw invalidInput(field, `"${name}" is not an argument name`);
    const raw = input[name];
    if (!isObject(raw)) throw invalidInput(field, "must be an object");
    const out: ArgCustomization = {};
    for (const key of Object.keys(raw)) {
      const value = raw[key];
      if (value === undefined || value === null || value === "") continue;
      switch (key) {
        case "description":
          if (typeof value !== "string") throw invalidInput(`${field}.description`, "must be text");
          if (value.length > 1000) throw invalidInput(`${field}.description`, "at most 1000 characters");
          out.description = value;
          break;
        case "default":
          out.default = value;
          break;
        case "enum": {
          if (!Array.isArray(value) || !value.every((item) => typeof item === "string"))
            throw invalidInput(`${field}.enum`, "must be a list of choices (text)");
          const choices = value.map((item: string) => item.trim()).filter((item) => item !== "");
          if (choices.length > MAX_ENUM) throw invalidInput(`${field}.enum`, `at most ${MAX_ENUM} choices`);
          if (new Set(choices).size !== choices.length)
            throw invalidInput(`${field}.enum`, "lists a choice twice");
          if (choices.length > 0) out.enum = choices;
          break;
        }
        case "format":
          if (typeof value !== "string" || !FORMAT.test(value)) {
            throw invalidInput(
              `${field}.format`,
              `"${String(value)}" is not a format (date-time, date, email, uri, uuid, sql or resource-<type>)`,
            );
          }
          out.format = value;
          break;
        case "min":
        case "max":
          if (typeof value !== "number" || !Number.isFinite(value))
            throw invalidInput(`${field}.${key}`, "must be a number");
          out[key] = value;
          break;
        default:
          throw invalidInput(
            `${field}.${key}`,
            "is not something an argument can be customised with (description, default, enum, format, min, max)",
          );
      }
    }
    if (out.min !== undefined && out.max !== undefined && out.min > out.max)
      throw invalidInput(`${field}.max`, `must be at least the minimum (${out.min})`);
    if (out.enum && out.default !== undefined && !out.enum.includes(String(out.default)))
      throw invalidInput(`${field}.default`, `must be one of the choices (${out.enum.join(", ")})`);
    if (Object.keys(out).length > 0) checked[name] = out;
  }
  return Object.keys(checked).length > 0 ? checked : null;
}

/**
 * The inferred schema with the customisations merged onto it. Customisations of arguments the
 * signature no longer has are ignored here (and kept, for when the argument comes back).
 */
export function applyArgCustomizations(
  schema: ArgSchema,
  customizations: ArgCustomizations | null,
): ArgSchema {
  if (!customizations) return schema;
  const properties: Record<string, PropertySchema> = { ...schema.properties };
  for (const [name, custom] of Object.entries(customizations)) {
    const property = properties[name];
    if (!property) continue;
    const next: PropertySchema & { minimum?: number; maximum?: number } = { ...property };
    if (custom.description !== undefined) next.description = custom.description;
    if (custom.default !== undefined) next.default = custom.default;
    if (custom.enum !== undefined) next.enum = custom.enum;
    if (custom.format !== undefined) next.format = custom.format;
    if (custom.min !== undefined) next.minimum = custom.min;
    if (custom.max !== undefined) next.maximum = custom.max;
    properties[name] = next;
  }
  return { ...schema, properties };
}
