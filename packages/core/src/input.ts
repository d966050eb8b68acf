import { invalidInput } from "./errors.ts";

/**
 * How deeply JSON input (request bodies, job arguments, resource values, tRPC input) may nest:
 * the body itself is level 1, each object or array inside it one more. Deeper input is refused
 * before anything reads it, so that no recursive code (PostgreSQL's jsonb parser, the
 * interpreters' JSON decoders, our own walkers) meets an attacker-chosen depth.
 */
export const MAX_JSON_DEPTH = 100;

// A UTF-16 surrogate that is not half of a pair: not valid Unicode, and PostgreSQL refuses it.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A key or value shown in a message: control and surrogate characters escaped, at most 40 characters. */
function shown(text: string): string {
  const clipped = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  // Control characters and surrogates, escaped so that the message and its field stay one
  // printable line (no-control-regex: matching them is the point).
  // eslint-disable-next-line no-control-regex
  const unprintable = /[\u0000-\u001f\ud800-\udfff]/g;
  return clipped.replace(unprintable, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Why `text` cannot be stored (PostgreSQL's text and jsonb hold neither), or null. */
export function textInputProblem(text: string): string | null {
  if (text.includes("\u0000")) return "must not contain the NUL character (\\u0000)";
  if (LONE_SURROGATE.test(text))
    return "must not contain an unpaired surrogate (\\ud800-\\udfff), which is not valid Unicode";
  return null;
}

/** Refuses a text input (query parameter, path segment) that PostgreSQL cannot store. */
export function checkTextInput(field: string, text: string): void {
  const problem = textInputProblem(text);
  if (problem) throw invalidInput(field, problem);
}

/** Refuses query parameters whose name or value PostgreSQL cannot store, naming the parameter. */
export function checkQueryInput(entries: Iterable<[string, string]>): void {
  for (const [name, value] of entries) {
    const nameProblem = textInputProblem(name);
    if (nameProblem) throw invalidInput(shown(name), `the parameter's name ${nameProblem}`);
    checkTextInput(name, value);
  }
}

/**
 * Refuses JSON input that would fail deep inside the server instead of at the door: a string or
 * key holding NUL or an unpaired surrogate, or nesting deeper than MAX_JSON_DEPTH. The error names
 * the field at fault: `root` is the name of the whole value (`args`), or null when the value is
 * an object whose keys are themselves the field names (a request body).
 */
export function checkJsonInput(value: unknown, root: string | null = null): void {
  walk(value, root ?? "", root ?? "body", 1);
}

function child(parent: string, key: string): string {
  return parent ? `${parent}.${shown(key)}` : shown(key);
}

/** `top` is the field a depth error names: the first level below the root, not the deepest path. */
function walk(value: unknown, path: string, top: string, depth: number): void {
  if (typeof value === "string") {
    const problem = textInputProblem(value);
    if (problem) throw invalidInput(path || "body", problem);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  if (depth > MAX_JSON_DEPTH) {
    throw invalidInput(top, `nested more than ${MAX_JSON_DEPTH} levels deep (the limit for JSON input)`);
  }
  const firstLevel = depth === 1;
  if (Array.isArray(value)) {
    const base = path || "body";
    for (let i = 0; i < value.length; i++) {
      const itemPath = `${base}[${i}]`;
      walk(value[i], itemPath, firstLevel ? itemPath : top, depth + 1);
    }
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const problem = textInputProblem(key);
    if (problem) throw invalidInput(path || "body", `key "${shown(key)}" ${problem}`);
    const itemPath = child(path, key);
    walk(item, itemPath, firstLevel ? itemPath : top, depth + 1);
  }
}
