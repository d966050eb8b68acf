import fs from "node:fs";
import path from "node:path";

const SOURCE_DIRS = ["apps/web", "packages/core/src", "packages/db/src", "packages/runtime/src"];
const SKIP = new Set(["node_modules", ".next", ".turbo"]);

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

/** True when there is no production build of the web app, or a source file changed after it. */
export function webBuildIsStale(root: string): boolean {
  const buildId = path.join(root, "apps/web/.next/BUILD_ID");
  if (!fs.existsSync(buildId)) return true;
  const builtAt = fs.statSync(buildId).mtimeMs;
  return SOURCE_DIRS.some(
    (dir) => fs.existsSync(path.join(root, dir)) && newestMtime(path.join(root, dir)) > builtAt,
  );
}
