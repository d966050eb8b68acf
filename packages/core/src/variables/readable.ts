/**
 * SQL condition (on column `path`) restricting a list to what the caller may read; `$n` is the
 * parameter that receives `readablePrefixes` (null for admins, who read everything).
 */
export function readableCondition(param: number): string {
  return `($${param}::text[] IS NULL OR EXISTS (SELECT 1 FROM unnest($${param}::text[]) AS p WHERE starts_with(path, p)))`;
}

/** Windmill's `page` (1-based) and `per_page`, bounded. */
export function pageWindow(page: number | undefined, perPage: number | undefined) {
  const size = Math.min(Math.max(perPage ?? 100, 1), 1000);
  const index = Math.max(page ?? 1, 1);
  return { limit: size, offset: (index - 1) * size };
}
