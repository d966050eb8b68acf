// Temporary folders named after the process that made them, so that those of a process that died
// without cleaning up (kill -9, a crash, a power cut) are removed by the next one. Imports nothing
// but node: modules: the process launcher uses it (see output-pipes.ts).
import { readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";

/** `<pid>.<start time>`: the start time (clock ticks since boot) tells a reused pid apart. */
function ownerOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which may itself contain spaces and parentheses.
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    return start ? `${pid}.${start}` : null;
  } catch {
    return null;
  }
}

let own: string | undefined;

/** This process's tag for the folders it owns (`<pid>.<start time>`, or `<pid>.0` without /proc). */
export function ownerTag(): string {
  own ??= ownerOf(process.pid) ?? `${process.pid}.0`;
  return own;
}

function alive(tag: string): boolean {
  const pid = Number(tag.slice(0, tag.indexOf(".")));
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, as another user.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const current = ownerOf(pid);
  return current === null || tag.endsWith(".0") || current === tag;
}

/**
 * Removes the folders `<prefix><owner tag>-…` in `dir` whose owner process is gone. Once per
 * process and folder kind, when it makes its first such folder: a readdir of `dir` (~1 ms for a
 * few thousand entries) and a /proc read per folder found.
 */
export function removeStaleFolders(
  dir: string,
  prefix: string,
  remove: (folder: string) => void = (folder) => rmSync(folder, { recursive: true, force: true }),
): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  const pattern = /^(\d+\.\d+)-/;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const tag = pattern.exec(name.slice(prefix.length))?.[1];
    if (!tag || tag === ownerTag() || alive(tag)) continue;
    try {
      remove(path.join(dir, name));
      removed.push(name);
    } catch {
      // another process removed it first, or it is not ours to remove
    }
  }
  return removed;
}
