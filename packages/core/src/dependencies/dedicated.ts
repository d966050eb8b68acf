import type { Pool } from "@millrace/db";
import type { EnqueueInput } from "../jobs/job-input.ts";

/**
 * The tag of a script served by dedicated workers. Windmill names it `<workspace>:<path>`; tags
 * are pg-boss queue names here, which allow no `:`, so Millrace uses `<workspace>/<path>`. No
 * ordinary tag contains a `/`, so these never collide with one.
 */
export function dedicatedTag(workspaceId: string, path: string): string {
  return `${workspaceId}/${path}`;
}

/** `<workspace>:<path>` (DEDICATED_WORKER, a group's `dedicated_worker`) → its parts. */
export function parseDedicatedTarget(value: string): { workspaceId: string; path: string } | null {
  const colon = value.indexOf(":");
  if (colon <= 0 || colon === value.length - 1) return null;
  return { workspaceId: value.slice(0, colon), path: value.slice(colon + 1) };
}

// A script is served by dedicated workers when a worker group config names it, or when a live
// worker (DEDICATED_WORKER set in its environment) serves its tag.
const LIVE_WORKER_SECS = 60;
const CACHE_MS = 1000;
type Cache = WeakMap<Pool, { at: number; tags: Promise<Set<string>> }>;
const CACHE_KEY = Symbol.for("millrace.dedicatedTagsCache");
const holder = globalThis as unknown as Record<symbol, Cache | undefined>;
const cache: Cache = (holder[CACHE_KEY] ??= new WeakMap());

async function readDedicatedTags(pool: Pool): Promise<Set<string>> {
  const { rows } = await pool.query<{ target: string | null; tag: string | null }>(
    `SELECT config->>'dedicated_worker' AS target, NULL AS tag FROM worker_group_config
      WHERE config ? 'dedicated_worker'
     UNION
     SELECT NULL, t FROM worker_ping, unnest(tags) AS t
      WHERE last_ping_at > now() - make_interval(secs => $1) AND t LIKE '%/%'`,
    [LIVE_WORKER_SECS],
  );
  const tags = new Set<string>();
  for (const row of rows) {
    if (row.tag) tags.add(row.tag);
    const target = row.target ? parseDedicatedTarget(row.target) : null;
    if (target) tags.add(dedicatedTag(target.workspaceId, target.path));
  }
  return tags;
}

export function loadDedicatedTags(pool: Pool): Promise<Set<string>> {
  const hit = cache.get(pool);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.tags;
  const tags = readDedicatedTags(pool).catch(() => new Set<string>());
  cache.set(pool, { at: Date.now(), tags });
  return tags;
}

export function invalidateDedicatedTagsCache(pool: Pool): void {
  cache.delete(pool);
}

/**
 * Runs of a script served by dedicated workers go to their tag instead of the script's own: a
 * version deployed with `dedicated_worker` always does (its runs wait for a dedicated worker, as
 * in Windmill), any other when a worker group config or a live worker serves its tag.
 */
export async function routeToDedicatedWorkers(pool: Pool, inputs: EnqueueInput[]): Promise<EnqueueInput[]> {
  if (!inputs.some((input) => input.kind === "script" && input.scriptPath)) return inputs;
  const flagged = (input: EnqueueInput) =>
    input.kind === "script" && !!input.scriptPath && input.dedicatedWorker === true;
  const tags = inputs.some((input) => !flagged(input)) ? await loadDedicatedTags(pool) : new Set<string>();
  if (tags.size === 0 && !inputs.some(flagged)) return inputs;
  return inputs.map((input) => {
    if (input.kind !== "script" || !input.scriptPath) return input;
    const tag = dedicatedTag(input.workspaceId, input.scriptPath);
    return flagged(input) || tags.has(tag) ? { ...input, tag } : input;
  });
}
