// The lines behind a restore's file names: what the Restore page shows before Apply, so that an
// admin sees what would be overwritten, not only which files.
import { structuredPatch } from "diff";

export interface RestoreDiff {
  added: string[];
  changed: string[];
  deleted: string[];
}

/**
 * One file's lines, unified-diff style: `@@` hunk headers and lines starting with `+`, `-` or a
 * space (changed files, 3 lines of context); `+` lines (added files); none (deleted files).
 */
export interface RestoreFileChange {
  file: string;
  status: "added" | "changed" | "deleted";
  lines: string[];
  /** Some of the file's lines were left out (per-file or total cap). */
  truncated: boolean;
}

export interface RestoreChanges {
  files: RestoreFileChange[];
  /** The total cap was reached: later files carry no lines. */
  truncated: boolean;
}

/** A report stays small enough for a page whatever the repository holds. */
export const RESTORE_DIFF_LIMITS = { linesPerFile: 200, totalLines: 2000, context: 3 };

const HIDDEN = "value: '(secret value hidden: not encrypted in this file)'";

/**
 * A secret variable's file with its value hidden unless it is ciphertext: a repository exported
 * with plain secrets (`wmill sync pull --plain-secrets`) must not put them on the page.
 * Ciphertext stays, so that a changed secret still shows as a changed line.
 */
export function hideSecretValues(file: string, text: string): string {
  if (!file.endsWith(".variable.yaml") || !/^is_secret:\s*true\s*$/m.test(text)) return text;
  const out: string[] = [];
  let inValue = false;
  for (const line of text.split("\n")) {
    if (/^value:/.test(line)) {
      inValue = true;
      out.push(/^value:\s*["']?enc:v\d+:/.test(line) ? line : HIDDEN);
      continue;
    }
    // A block or folded scalar's continuation lines are indented (or blank) under `value:`.
    if (inValue && (line.startsWith(" ") || line.startsWith("\t") || line === "")) {
      if (out[out.length - 1] !== HIDDEN) out.push(line);
      continue;
    }
    inValue = false;
    out.push(line);
  }
  return out.join("\n");
}

function linesOf(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function patchLines(file: string, before: string, after: string, context: number): string[] {
  // Bounded: a file rewritten wholesale would otherwise cost the diff quadratic time.
  const patch = structuredPatch(file, file, before, after, "", "", { context, timeout: 500 });
  if (!patch) return ["(too many changed lines to compare)"];
  return patch.hunks.flatMap((hunk) => [
    `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`,
    ...hunk.lines,
  ]);
}

/** The lines of each file of `diff`, `before` the workspace's files and `after` the repository's. */
export function restoreChanges(
  diff: RestoreDiff,
  before: Map<string, string>,
  after: Map<string, string>,
  limits = RESTORE_DIFF_LIMITS,
): RestoreChanges {
  let budget = limits.totalLines;
  let truncated = false;
  const take = (all: string[]): { lines: string[]; truncated: boolean } => {
    const count = Math.min(all.length, limits.linesPerFile, budget);
    budget -= count;
    if (count < all.length && budget === 0) truncated = true;
    return { lines: all.slice(0, count), truncated: count < all.length };
  };
  const files: RestoreFileChange[] = [];
  const sorted = [
    ...diff.changed.map((file) => ({ file, status: "changed" as const })),
    ...diff.added.map((file) => ({ file, status: "added" as const })),
    ...diff.deleted.map((file) => ({ file, status: "deleted" as const })),
  ];
  for (const { file, status } of sorted) {
    const old = hideSecretValues(file, before.get(file) ?? "");
    const next = hideSecretValues(file, after.get(file) ?? "");
    if (status === "deleted") files.push({ file, status, lines: [], truncated: false });
    else if (status === "added")
      files.push({ file, status, ...take(linesOf(next).map((line) => `+${line}`)) });
    else files.push({ file, status, ...take(patchLines(file, old, next, limits.context)) });
  }
  return { files, truncated };
}
