import { readdirSync, readFileSync } from "node:fs";

const PAGE_SIZE = 4096;

function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return children;
  }
  for (const tid of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ")) {
        if (child.trim()) children.push(Number(child));
      }
    } catch {
      // the task ended while we looked
    }
  }
  return children;
}

/**
 * Resident memory of a process and all its descendants, in bytes (0 when /proc is unavailable).
 * Walks /proc/<pid>/task/<tid>/children rather than scanning every process on the machine.
 */
export function treeResidentBytes(rootPid: number): number {
  let total = 0;
  const stack = [rootPid];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    try {
      const resident = Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]);
      if (Number.isFinite(resident)) total += resident * PAGE_SIZE;
    } catch {
      continue;
    }
    stack.push(...childrenOf(pid));
  }
  return total;
}
