// The README and docs/ as the tests read them: the fenced shell blocks marked to run
// (```sh test), and the relative links with their anchors, so that neither can drift.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** README.md first, then docs/*.md in name order: the order a newcomer reads them in. */
export function docFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs];
}

export interface ShellBlock {
  /** `docs/api.md:42`: the file and the line of the opening fence. */
  where: string;
  code: string;
}

interface Fence {
  info: string;
  line: number;
  body: string;
}

function fences(text: string): Fence[] {
  const found: Fence[] = [];
  const lines = text.split("\n");
  let open: { info: string; line: number; indent: number; body: string[] } | null = null;
  lines.forEach((line, index) => {
    const match = /^(\s*)```(.*)$/.exec(line);
    if (!open) {
      if (match) open = { info: match[2]!.trim(), line: index + 1, indent: match[1]!.length, body: [] };
      return;
    }
    if (match && match[2]!.trim() === "") {
      found.push({ info: open.info, line: open.line, body: open.body.join("\n") });
      open = null;
      return;
    }
    // A block inside a list item is indented with it; its commands are not.
    open.body.push(line.slice(Math.min(open.indent, line.length - line.trimStart().length)));
  });
  return found;
}

/** The blocks whose info string is `sh test`: commands a test instance can run as written. */
export function shellBlocks(file: string): ShellBlock[] {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  return fences(text)
    .filter((fence) => fence.info.split(/\s+/).join(" ") === "sh test")
    .map((fence) => ({ where: `${file}:${fence.line}`, code: fence.body }));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces become hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a markdown file's headings (outside code blocks), duplicates numbered as GitHub does. */
export function anchorsOf(file: string): Set<string> {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = anchorOf(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every relative link of `file` whose target file or anchor does not exist, as `file:line: link`. */
export function brokenLinks(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  const broken: string[] = [];
  let inFence = false;
  text.split("\n").forEach((line, index) => {
    if (/^\s*```/.test(line)) inFence = !inFence;
    if (inFence) return;
    // Inline code may show link syntax without being a link.
    const prose = line.replace(/`[^`]*`/g, "");
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
      const [target, anchor] = link.split("#") as [string, string | undefined];
      const resolved =
        target === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
      const exists = fs.existsSync(path.join(ROOT, resolved));
      const anchorOk =
        anchor === undefined || (exists && resolved.endsWith(".md") && anchorsOf(resolved).has(anchor));
      if (!exists || !anchorOk) broken.push(`${file}:${index + 1}: ${link}`);
    }
  });
  return broken;
}
