import { Ajv, type CodeOptions, type ErrorObject, type ValidateFunction } from "ajv";
import { AppError, invalidInput } from "../errors.ts";
import { linearRegExp, UnsupportedPatternError } from "../linear-regexp.ts";
import { parsePath } from "../paths.ts";

export const MAX_SCHEMA_BYTES = 64 * 1024;
export const MAX_VALUE_BYTES = 1024 * 1024;
const MAX_CACHED_VALIDATORS = 200;

const regExp: NonNullable<CodeOptions["regExp"]> = Object.assign(
  (pattern: string, flags: string) => linearRegExp(pattern, flags),
  {
    code: "linearRegExp",
  },
);
// Formats are informative in resource type schemas (Windmill's hub uses custom ones): ignore them.
// User patterns never run on V8's backtracking engine (see linear-regexp.ts).
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, code: { regExp } });
const validators = new Map<string, ValidateFunction>();

const REFERENCE = /^\$(var|res):(.*)$/s;

/** `$var:<path>` / `$res:<path>` in a string value: resolved when a job reads the resource. */
export function parseReference(value: unknown): { kind: "var" | "res"; path: string } | null {
  if (typeof value !== "string") return null;
  const match = REFERENCE.exec(value);
  return match ? { kind: match[1] as "var" | "res", path: match[2] ?? "" } : null;
}

/**
 * The schema as compiled: without its top-level `$schema` (Windmill's resource types and wmill's
 * files name draft 2020-12, which this validator does not load; the keywords they use validate
 * the same). The stored schema keeps it, verbatim.
 */
function compiledForm(schema: object): object {
  if (!("$schema" in schema)) return schema;
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  void _dialect;
  return rest;
}

function validatorFor(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(compiledForm(schema));
    if (validators.size >= MAX_CACHED_VALIDATORS) validators.delete(validators.keys().next().value!);
    validators.set(key, validate);
  }
  return validate;
}

/** Checks a resource type's schema before it is stored: an object that compiles. */
export function checkTypeSchema(schema: unknown): Record<string, unknown> {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    throw invalidInput("schema", "must be a JSON Schema object");
  if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES)
    throw invalidInput("schema", `larger than ${MAX_SCHEMA_BYTES >> 10} KB`);
  try {
    validatorFor(schema);
  } catch (error) {
    if (error instanceof UnsupportedPatternError)
      throw invalidInput(patternField(schema, error), error.message);
    throw invalidInput("schema", `not a valid JSON Schema: ${(error as Error).message}`);
  }
  return schema as Record<string, unknown>;
}

/** `schema.properties.a.pattern`: where the refused pattern sits (`schema` when not found). */
function patternField(schema: object, error: UnsupportedPatternError): string {
  const search = (node: unknown, field: string): string | null => {
    if (typeof node !== "object" || node === null) return null;
    for (const [key, child] of Object.entries(node)) {
      if (key === "pattern" && typeof child === "string" && error.message.includes(JSON.stringify(child)))
        return `${field}.pattern`;
      if (key === "patternProperties" && typeof child === "object" && child !== null)
        for (const name of Object.keys(child))
          if (error.message.includes(JSON.stringify(name))) return `${field}.patternProperties`;
      const found = search(child, `${field}.${key}`);
      if (found) return found;
    }
    return null;
  };
  return search(schema, "schema") ?? "schema";
}

function pointerParts(pointer: string): string[] {
  return pointer
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function pointerToField(pointer: string): string {
  return ["value", ...pointerParts(pointer)].join(".");
}

function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const part of pointerParts(pointer)) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function describe(error: ErrorObject, typeName: string): { field: string; message: string } {
  const base = pointerToField(error.instancePath);
  if (error.keyword === "required") {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return { field: `${base}.${missing}`, message: "is required" };
  }
  if (error.keyword === "additionalProperties") {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return { field: `${base}.${extra}`, message: `is not a field of ${typeName}` };
  }
  if (error.keyword === "enum") {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
    return { field: base, message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}` };
  }
  return { field: base, message: error.message ?? "is invalid" };
}

/** Every `$var:`/`$res:` reference in the value must name a well-formed path. */
function checkReferences(node: unknown, field: string): void {
  const reference = parseReference(node);
  if (reference) {
    parsePath(reference.path, field);
    return;
  }
  if (Array.isArray(node)) node.forEach((item, i) => checkReferences(item, `${field}.${i}`));
  else if (typeof node === "object" && node !== null)
    for (const [key, item] of Object.entries(node)) checkReferences(item, `${field}.${key}`);
}

/**
 * Validates a resource value against its type's schema. A `$var:`/`$res:` reference stands in for
 * a value of any type (it is only known when a job reads it), so errors about the reference
 * itself are not errors. The message names the field at fault (`value.port: must be integer`).
 */
export function checkResourceValue(value: unknown, schema: object | null, typeName: string): void {
  if (value === undefined) throw invalidInput("value", "is required");
  if (JSON.stringify(value).length > MAX_VALUE_BYTES)
    throw invalidInput("value", `larger than ${MAX_VALUE_BYTES >> 20} MB`);
  checkReferences(value, "value");
  if (!schema) return;
  let validate: ValidateFunction;
  try {
    validate = validatorFor(schema);
  } catch (error) {
    // A type stored before its schema's checks were what they are now (a lookaround pattern).
    throw invalidInput("resource_type", `${typeName}'s schema cannot be used: ${(error as Error).message}`);
  }
  if (validate(value)) return;
  const problems = (validate.errors ?? [])
    .filter((error) => !(error.keyword !== "required" && parseReference(valueAt(value, error.instancePath))))
    .map((error) => describe(error, typeName));
  const first = problems[0];
  if (!first) return;
  const message = problems.map((p) => `${p.field}: ${p.message}`).join("; ");
  throw new AppError("INVALID_INPUT", message, first.field);
}
