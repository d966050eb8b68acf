import type { Pool } from "@millrace/db";
import { DEFAULT_TAGS } from "@millrace/runtime";
import { invalidInput } from "../errors.ts";
import { WORKSPACE_ID } from "../workspaces.ts";

export const CUSTOM_TAGS_SETTING = "custom_tags";

/**
 * One entry of the `custom_tags` instance setting, in Windmill's syntax: `gpu` (every workspace),
 * `gpu(ws1+ws2)` (only those), `gpu(^ws3)` (every workspace but those).
 */
export interface CustomTag {
  tag: string;
  scope: "all" | "only" | "except";
  workspaces: string[];
}

const TAG_CHAR = /[A-Za-z0-9_.\-$[\]]/;
// Custom tags may be dynamic (`normal-$workspace`), resolved when a job is enqueued.
const TAG_NAME = /^(?:[A-Za-z0-9_.-]|\$workspace|\$args\[[A-Za-z0-9_]+\])+$/;
const MAX_TAG_LENGTH = 128;
const MAX_CUSTOM_TAGS = 500;

function describe(char: string): string {
  return char === " " ? "space" : JSON.stringify(char);
}

/** Parses one entry; every error names `field` and says what is wrong where. */
export function parseCustomTag(source: unknown, field: string): CustomTag {
  if (typeof source !== "string") throw invalidInput(field, "must be a string");
  if (source.length === 0) throw invalidInput(field, "empty tag");
  const quoted = JSON.stringify(source);
  const open = source.indexOf("(");
  const name = open === -1 ? source : source.slice(0, open);
  if (name.length === 0) throw invalidInput(field, `${quoted}: missing the tag name before "("`);
  const badAt = [...name].findIndex((char) => !TAG_CHAR.test(char));
  if (badAt !== -1) {
    throw invalidInput(
      field,
      `${quoted}: unexpected ${describe(name[badAt] ?? "")} at position ${badAt} (tags use letters, digits, _ . - and $workspace)`,
    );
  }
  if (name.length > MAX_TAG_LENGTH || !TAG_NAME.test(name)) {
    throw invalidInput(
      field,
      `${quoted}: "${name}" is not a valid tag (letters, digits, _ . -, $workspace, $args[name])`,
    );
  }
  if (open === -1) return { tag: name, scope: "all", workspaces: [] };

  const close = source.indexOf(")", open);
  if (close === -1) throw invalidInput(field, `${quoted}: missing ")" to close the workspace list`);
  if (close !== source.length - 1) {
    throw invalidInput(field, `${quoted}: unexpected text after ")" at position ${close + 1}`);
  }
  let inner = source.slice(open + 1, close);
  let position = open + 1;
  let scope: CustomTag["scope"] = "only";
  if (inner.startsWith("^")) {
    scope = "except";
    inner = inner.slice(1);
    position += 1;
  }
  if (inner.length === 0)
    throw invalidInput(field, `${quoted}: empty workspace list at position ${position}`);
  const workspaces: string[] = [];
  for (const workspace of inner.split("+")) {
    if (workspace.length === 0) {
      throw invalidInput(
        field,
        `${quoted}: empty workspace id at position ${position} (ids are joined by "+")`,
      );
    }
    if (!WORKSPACE_ID.test(workspace)) {
      throw invalidInput(
        field,
        `${quoted}: "${workspace}" at position ${position} is not a workspace id (lowercase letters, digits, - and _)`,
      );
    }
    if (workspaces.includes(workspace))
      throw invalidInput(field, `${quoted}: workspace ${workspace} is listed twice`);
    workspaces.push(workspace);
    position += workspace.length + 1;
  }
  // Every worker serves the default tags and every script falls back to one: restricting them
  // would only break workspaces, never isolate them.
  if (DEFAULT_TAGS.includes(name)) {
    throw invalidInput(field, `${quoted}: "${name}" is a default tag and cannot be restricted to workspaces`);
  }
  return { tag: name, scope, workspaces };
}

/** Parses the whole setting; a tag declared twice is refused so that its rule is unambiguous. */
export function parseCustomTags(list: unknown, field = "value"): CustomTag[] {
  if (!Array.isArray(list)) throw invalidInput(field, 'must be a list of tags, e.g. ["gpu(ws1+ws2)"]');
  if (list.length > MAX_CUSTOM_TAGS) throw invalidInput(field, `at most ${MAX_CUSTOM_TAGS} tags`);
  const seen = new Map<string, number>();
  return list.map((entry: unknown, i) => {
    const parsed = parseCustomTag(entry, `${field}[${i}]`);
    const first = seen.get(parsed.tag);
    if (first !== undefined) {
      throw invalidInput(`${field}[${i}]`, `tag "${parsed.tag}" is already declared by ${field}[${first}]`);
    }
    seen.set(parsed.tag, i);
    return parsed;
  });
}

export function formatCustomTag({ tag, scope, workspaces }: CustomTag): string {
  if (scope === "all") return tag;
  return `${tag}(${scope === "except" ? "^" : ""}${workspaces.join("+")})`;
}

export function customTagAllows(entry: CustomTag, workspaceId: string): boolean {
  if (entry.scope === "all") return true;
  const listed = entry.workspaces.includes(workspaceId);
  return entry.scope === "only" ? listed : !listed;
}

/** Tags are matched by exact name; a tag no entry declares is unrestricted. */
export function isTagAllowed(tags: readonly CustomTag[], workspaceId: string, tag: string): boolean {
  if (DEFAULT_TAGS.includes(tag)) return true;
  const entry = tags.find((candidate) => candidate.tag === tag);
  return !entry || customTagAllows(entry, workspaceId);
}

/** Default tags, then the custom tags `workspaceId` may use (every custom tag when null). */
export function availableTags(tags: readonly CustomTag[], workspaceId: string | null): string[] {
  const result = [...DEFAULT_TAGS];
  for (const entry of tags) {
    if (result.includes(entry.tag)) continue;
    if (workspaceId === null || customTagAllows(entry, workspaceId)) result.push(entry.tag);
  }
  return result;
}

// Enqueue checks tags on every job: keep the setting in memory briefly. Another server's change
// is seen within CACHE_MS; this process's own changes invalidate at once (the cache lives on
// globalThis because Next bundles a module once per route). Keyed by pool because tests run
// several databases in one process.
const CACHE_MS = 1000;
type Cache = WeakMap<Pool, { at: number; tags: Promise<CustomTag[]> }>;
const CACHE_KEY = Symbol.for("millrace.customTagsCache");
const holder = globalThis as unknown as Record<symbol, Cache | undefined>;
const cache: Cache = (holder[CACHE_KEY] ??= new WeakMap());

async function readCustomTags(pool: Pool): Promise<CustomTag[]> {
  const { rows } = await pool.query<{ value: unknown }>("SELECT value FROM instance_setting WHERE key = $1", [
    CUSTOM_TAGS_SETTING,
  ]);
  if (!rows[0] || rows[0].value === null) return [];
  try {
    return parseCustomTags(rows[0].value);
  } catch (error) {
    // Fail closed: ignoring a broken setting would lift the restrictions it declares.
    throw new Error(`instance setting ${CUSTOM_TAGS_SETTING} is invalid: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

export function loadCustomTags(pool: Pool): Promise<CustomTag[]> {
  const hit = cache.get(pool);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.tags;
  const tags = readCustomTags(pool);
  cache.set(pool, { at: Date.now(), tags });
  tags.catch(() => {
    if (cache.get(pool)?.tags === tags) cache.delete(pool);
  });
  return tags;
}

export function invalidateCustomTagsCache(pool: Pool): void {
  cache.delete(pool);
}

/**
 * Refuses a tag restricted to other workspaces (INVALID_INPUT naming `field`, the tag and the
 * workspace). Default tags and tags no entry declares are allowed everywhere.
 */
export async function assertTagAllowed(
  pool: Pool,
  workspaceId: string,
  tag: string,
  field: string,
): Promise<void> {
  if (DEFAULT_TAGS.includes(tag)) return;
  if (isTagAllowed(await loadCustomTags(pool), workspaceId, tag)) return;
  throw invalidInput(field, `tag "${tag}" is not available in workspace ${workspaceId}`);
}
