import { readdirSync, readFileSync } from "node:fs";

const PAGE_SIZE = 4096;

/**
 * The fields of /proc/<pid>/stat after the command name (which may itself hold spaces and
 * parentheses): index i is the man page's field i + 3.
 */
function statFields(pid: number | string): string[] | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

const SESSION = 3;
const THREADS = 17;
const RESIDENT_PAGES = 21;

function readChildren(file: string, into: number[]): void {
  try {
    for (const child of readFileSync(file, "utf8").split(" ")) {
      if (child.trim()) into.push(Number(child));
    }
  } catch {
    // the task ended while we looked
  }
}

/**
 * A process's children. A single-threaded one (most of a job's processes) has one task, its own:
 * its children file is read directly, without listing /proc/<pid>/task.
 */
export function childrenOf(pid: number, threads: number): number[] {
  const children: number[] = [];
  if (threads <= 1) {
    readChildren(`/proc/${pid}/task/${pid}/children`, children);
    return children;
  }
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return children;
  }
  for (const tid of tasks) readChildren(`/proc/${pid}/task/${tid}/children`, children);
  return children;
}

export interface TreeSample {
  /** Resident memory of the process and all its descendants (0 when /proc is unavailable). */
  residentBytes: number;
  /** Their tasks: processes and threads, as RLIMIT_NPROC counts them. */
  tasks: number;
}

/**
 * Samples a process tree: one read of /proc/<pid>/stat per process and one of its children file
 * (per thread, for a multi-threaded one), rather than a scan of every process on the machine.
 * `pids` receives the processes found, except those of the first `skipLevels` levels of the tree
 * (a sandbox's own processes, whose open files the disk watch need not read).
 */
export function sampleTree(rootPid: number, pids?: number[], skipLevels = 0): TreeSample {
  const sample: TreeSample = { residentBytes: 0, tasks: 0 };
  const stack: [pid: number, level: number][] = [[rootPid, 0]];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const [pid, level] = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const fields = statFields(pid);
    if (!fields) continue;
    const threads = Number(fields[THREADS]) || 1;
    sample.tasks += threads;
    sample.residentBytes += (Number(fields[RESIDENT_PAGES]) || 0) * PAGE_SIZE;
    if (level >= skipLevels) pids?.push(pid);
    for (const child of childrenOf(pid, threads)) stack.push([child, level + 1]);
  }
  return sample;
}

/**
 * Samples every process of a session, wherever it sits in the process tree: without a pid
 * namespace, a child whose parent exited is re-parented outside the job's tree (a fork bomb's
 * processes are), but it keeps its session. Costs a scan of /proc (~6 µs per process on the host).
 * `pids` receives the processes found.
 */
export function sampleSession(sessionId: number, pids?: number[]): TreeSample {
  const sample: TreeSample = { residentBytes: 0, tasks: 0 };
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return sample;
  }
  for (const entry of entries) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const fields = statFields(entry);
    if (!fields || Number(fields[SESSION]) !== sessionId) continue;
    pids?.push(Number(entry));
    sample.tasks += Number(fields[THREADS]) || 1;
    sample.residentBytes += (Number(fields[RESIDENT_PAGES]) || 0) * PAGE_SIZE;
  }
  return sample;
}
