// The fixture repository modeled on windmill-labs/windmill-sync-example's shapes
// (fixtures/windmill-sync-example-like, written for Millrace, not copied) and the helpers that
// push a repository of that kind with the real wmill and tell what a second push would still
// change. Shared by wmill-sync-example.int.test.ts (the fixture, in `npm run test:int`) and
// wmill-sync-example.drill.ts (a real clone named by WINDMILL_SYNC_EXAMPLE).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const FIXTURE_DIR = fileURLToPath(new URL("./fixtures/windmill-sync-example-like", import.meta.url));

/**
 * Copies `source` (a Windmill repository) to `target`, leaving out `.git`. With `defaultTs:
 * "deno"` the copy is the same repository as a team that set `defaultTs: deno` holds it: wmill.yaml
 * says so, deno code files are plain `.ts` and bun ones `.bun.ts` (scripts and flow/app inline
 * files alike, the `!inline` references following), which is what `wmill sync pull` writes then.
 * `without`: paths (relative to `source`) left out of the copy.
 */
export function copyRepository(
  source: string,
  target: string,
  options: { defaultTs?: "deno"; without?: string[] } = {},
): void {
  const left = new Set((options.without ?? []).map((p) => path.join(source, p)));
  fs.cpSync(source, target, {
    recursive: true,
    filter: (src) => path.basename(src) !== ".git" && !left.has(src),
  });
  if (options.defaultTs !== "deno") return;
  const wmillYaml = path.join(target, "wmill.yaml");
  const yaml = fs.readFileSync(wmillYaml, "utf8");
  const replaced = yaml.replace(/^defaultTs:.*$/m, 'defaultTs: "deno"');
  fs.writeFileSync(wmillYaml, replaced === yaml ? `${yaml}\ndefaultTs: "deno"\n` : replaced);
  const renames = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".deno.ts")) renames.set(full, full.slice(0, -".deno.ts".length) + ".ts");
      else if (entry.name.endsWith(".ts") && !/\.(bun|fetch|native)\.ts$/.test(entry.name))
        renames.set(full, full.slice(0, -".ts".length) + ".bun.ts");
    }
  };
  walk(path.join(target, "f"));
  // Bun files first, so that a deno file's new `.ts` name is free.
  const ordered = [...renames].sort(
    ([a], [b]) => Number(a.endsWith(".deno.ts")) - Number(b.endsWith(".deno.ts")),
  );
  for (const [from, to] of ordered) fs.renameSync(from, to);
  // `!inline x.inline_script.ts` references in flow.yaml / app.yaml follow their files.
  for (const [from, to] of ordered) {
    const dir = path.dirname(from);
    for (const meta of ["flow.yaml", "app.yaml"]) {
      const file = path.join(dir, meta);
      if (!fs.existsSync(file)) continue;
      const text = fs.readFileSync(file, "utf8");
      const fromName = path.basename(from);
      fs.writeFileSync(
        file,
        text.replace(
          new RegExp(`(!inline\\s+)${fromName.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=['\\s]|$)`, "gm"),
          `$1${path.basename(to)}`,
        ),
      );
    }
  }
}

/** The change lines of a `wmill sync push --dry-run` (`+ script f/x`, `~ flow f/y`, `- …`). */
export function changeLines(output: string): string[] {
  return output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /^[+~-] [a-z_-]+ \S+\.[a-z]+$/.test(line));
}
