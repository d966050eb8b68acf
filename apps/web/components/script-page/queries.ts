import type { PrefetchCall } from "@/server/trpc/prefetch";

/** How many recent runs the script page lists. */
export const RECENT_RUNS = "10";

/**
 * What the script page asks for (script-page.tsx, versions.tsx): all three need only the path,
 * so the page route starts them with the page (one round trip, made by the server).
 */
export function scriptPageQueries(workspace: string, path: string): PrefetchCall[] {
  return [
    ["script.page", { workspace, path }],
    ["job.list", { workspace, script_path_exact: path, per_page: RECENT_RUNS }],
    ["script.versions", { workspace, path }],
  ];
}
