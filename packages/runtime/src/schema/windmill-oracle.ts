// TEST ONLY: never import this file from shipped code (index.ts, the worker, core).
//
// The schema Windmill gives a `main` signature, used as the oracle of oracle.test.ts. It is the
// two steps `wmill generate-metadata` takes: Windmill's own parser (npm windmill-parser-wasm-py /
// windmill-parser-wasm-ts, compiled from Windmill's Rust parsers) reads the signature into
// argument types, then windmill-cli (Apache-2.0, `argSigToJsonSchemaType` in its esm/main.js)
// turns each type into a JSON-schema property. The second step is restated below for a fresh
// schema (no earlier schema to merge with), which is what a new script gets.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import * as pyParser from "windmill-parser-wasm-py";
import * as tsParser from "windmill-parser-wasm-ts";

const require = createRequire(import.meta.url);

function wasmOf(pkg: string): Buffer {
  return readFileSync(
    path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "windmill_parser_wasm_bg.wasm"),
  );
}

let ready = false;
function init(): void {
  if (ready) return;
  pyParser.initSync({ module: wasmOf("windmill-parser-wasm-py") });
  tsParser.initSync({ module: wasmOf("windmill-parser-wasm-ts") });
  ready = true;
}

/** Windmill's parsed type of an argument (`Typ` in windmill-parser). */
export type WindmillTyp =
  | string
  | { str: string[] | null }
  | { list: WindmillTyp }
  | { object: { name: string | null; props: { key: string; typ: WindmillTyp }[] | null } }
  | { resource: string | null }
  | { oneof: { label: string; properties: { key: string; typ: WindmillTyp }[] }[] }
  | { dynselect: string }
  | { dynmultiselect: string };

export interface WindmillArg {
  name: string;
  typ: WindmillTyp;
  otyp: string | null;
  default: unknown;
  has_default: boolean;
}

export interface WindmillSignature {
  type?: string;
  error?: string;
  args: WindmillArg[];
}

/** Runs Windmill's parser: `python3` → parse_python; `bun` and `deno` → parse_deno (as wmill does). */
export function windmillParse(language: "python3" | "bun" | "deno", source: string): WindmillSignature {
  init();
  const raw = language === "python3" ? pyParser.parse_python(source) : tsParser.parse_deno(source);
  return JSON.parse(raw) as WindmillSignature;
}

/** A JSON-schema property as windmill-cli writes it (only the keys that carry meaning). */
export interface WindmillProperty {
  type: string;
  format?: string;
  enum?: string[];
  contentEncoding?: string;
  items?: Record<string, unknown>;
  properties?: Record<string, WindmillProperty>;
  oneOf?: { type: "object"; title: string; properties: Record<string, WindmillProperty> }[];
  default?: unknown;
}

function propsOf(props: { key: string; typ: WindmillTyp }[]): Record<string, WindmillProperty> {
  const out: Record<string, WindmillProperty> = {};
  for (const prop of props) out[prop.key] = windmillProperty(prop.typ);
  return out;
}

/** windmill-cli's argSigToJsonSchemaType applied to a new property (`{ description: "", type: "" }`). */
export function windmillProperty(t: WindmillTyp): WindmillProperty {
  if (typeof t === "string") {
    switch (t) {
      case "int":
        return { type: "integer" };
      case "float":
        return { type: "number" };
      case "bool":
        return { type: "boolean" };
      case "email":
        return { type: "string", format: "email" };
      case "sql":
        return { type: "string", format: "sql" };
      case "yaml":
        return { type: "string", format: "yaml" };
      case "bytes":
        return { type: "string", contentEncoding: "base64" };
      case "datetime":
        return { type: "string", format: "date-time" };
      case "date":
        return { type: "string", format: "date" };
      default:
        // "unknown" and anything else: the new property's type stays "" (no type: any value).
        return { type: "" };
    }
  }
  if ("oneof" in t) {
    return {
      type: "object",
      oneOf: t.oneof.map((o) => ({ type: "object", title: o.label, properties: propsOf(o.properties) })),
    };
  }
  if ("object" in t) {
    const out: WindmillProperty = { type: "object" };
    if (t.object.name) out.format = `resource-${t.object.name}`;
    if (t.object.props) out.properties = propsOf(t.object.props);
    return out;
  }
  if ("str" in t) return t.str ? { type: "string", enum: t.str } : { type: "string" };
  if ("resource" in t) return { type: "object", format: `resource-${t.resource}` };
  if ("dynselect" in t) return { type: "object", format: `dynselect-${t.dynselect}` };
  if ("dynmultiselect" in t) return { type: "object", format: `dynmultiselect-${t.dynmultiselect}` };
  // { list: element }
  const element = t.list;
  const out: WindmillProperty = { type: "array" };
  if (element === "int" || element === "float") out.items = { type: "number" };
  else if (element === "bytes") out.items = { type: "string", contentEncoding: "base64" };
  else if (typeof element === "object" && element !== null && "str" in element) {
    out.items = element.str ? { type: "string", enum: element.str } : { type: "string" };
  } else if (typeof element === "object" && element !== null && "resource" in element && element.resource) {
    out.items = { type: "resource", resourceType: element.resource };
  } else if (typeof element === "object" && element !== null && "object" in element && element.object) {
    if (element.object.name) out.format = `resource-${element.object.name}`;
    out.items =
      element.object.props && element.object.props.length > 0
        ? { type: "object", properties: propsOf(element.object.props) }
        : { type: "object" };
  } else out.items = { type: "object" };
  return out;
}

export interface WindmillSchema {
  properties: Record<string, WindmillProperty>;
  required: string[];
  order: string[];
}

/** The schema `wmill generate-metadata` writes for a new script with this source. */
export function windmillSchema(language: "python3" | "bun" | "deno", source: string): WindmillSchema {
  const signature = windmillParse(language, source);
  if (signature.type === "Invalid") throw new Error(`Windmill's parser: ${signature.error ?? "invalid"}`);
  const properties: Record<string, WindmillProperty> = {};
  const required: string[] = [];
  for (const arg of signature.args) {
    properties[arg.name] = { ...windmillProperty(arg.typ), default: arg.default };
    if (!arg.has_default && !required.includes(arg.name)) required.push(arg.name);
  }
  return { properties, required, order: signature.args.map((a) => a.name) };
}

/**
 * What the comparison looks at: type, format, enum, contentEncoding, items, properties, default
 * and (for a parameter) required. Left aside: descriptions, `nullable` and windmill-cli's
 * `originalType` (UI hints), the fields of an object that names a resource type (the resource type
 * defines them), `required` inside nested objects (windmill-cli writes none), an empty
 * `properties`, and a `null` default (both mean "no default").
 */
export interface Normalized {
  type?: string;
  format?: string;
  enum?: string[];
  contentEncoding?: string;
  items?: Normalized;
  properties?: Record<string, Normalized>;
  oneOf?: { title: string; properties: Record<string, Normalized> }[];
  default?: unknown;
  required?: boolean;
}

export function normalize(p: Record<string, unknown>): Normalized {
  const out: Normalized = {};
  let type = typeof p.type === "string" && p.type !== "" ? p.type : undefined;
  let format = typeof p.format === "string" ? p.format : undefined;
  if (type === "resource") {
    type = "object";
    format = `resource-${String(p.resourceType)}`;
  }
  if (type) out.type = type;
  if (format) out.format = format;
  if (Array.isArray(p.enum)) out.enum = p.enum as string[];
  if (typeof p.contentEncoding === "string") out.contentEncoding = p.contentEncoding;
  if (p.items && typeof p.items === "object") out.items = normalize(p.items as Record<string, unknown>);
  const properties = p.properties as Record<string, Record<string, unknown>> | undefined;
  if (properties && Object.keys(properties).length > 0 && !format?.startsWith("resource-")) {
    out.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, normalize(v)]));
  }
  if (Array.isArray(p.oneOf)) {
    out.oneOf = (p.oneOf as Record<string, unknown>[]).map((o) => ({
      title: String(o.title),
      properties: Object.fromEntries(
        Object.entries((o.properties ?? {}) as Record<string, Record<string, unknown>>).map(([k, v]) => [
          k,
          normalize(v),
        ]),
      ),
    }));
  }
  if (p.default !== undefined && p.default !== null) out.default = p.default;
  return out;
}

export interface Difference {
  param: string;
  windmill: Normalized | "absent";
  millrace: Normalized | "absent";
}

interface AnySchema {
  properties: Record<string, object>;
  required: string[];
  order?: string[];
}

/** Parameters whose normalized schema differs between Windmill's and Millrace's inference. */
export function differences(windmill: AnySchema, millrace: AnySchema): Difference[] {
  const side = (schema: AnySchema, name: string): Normalized | "absent" => {
    const p = schema.properties[name];
    if (!p) return "absent";
    return { ...normalize(p as Record<string, unknown>), required: schema.required.includes(name) };
  };
  const names = [...new Set([...Object.keys(windmill.properties), ...Object.keys(millrace.properties)])];
  const out: Difference[] = [];
  for (const param of names) {
    const w = side(windmill, param);
    const m = side(millrace, param);
    if (!isDeepStrictEqual(w, m)) out.push({ param, windmill: w, millrace: m });
  }
  const wOrder = (windmill.order ?? []).filter((n) => n in millrace.properties);
  const mOrder = (millrace.order ?? []).filter((n) => n in windmill.properties);
  if (out.length === 0 && !isDeepStrictEqual(wOrder, mOrder)) {
    out.push({ param: "(order)", windmill: { enum: wOrder }, millrace: { enum: mOrder } });
  }
  return out;
}
