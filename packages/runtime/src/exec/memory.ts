import { readdirSync, readFileSync } from "node:fs";

const PAGE_SIZE = 4096;

function childrenOf(pid: number, sample: TreeSample): number[] {
  const children: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return children;
  }
  sample.tasks += tasks.length;
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

export interface TreeSample {
  /** Resident memory of the process and all its descendants (0 when /proc is unavailable). */
  residentBytes: number;
  /** Their tasks: processes and threads, as RLIMIT_NPROC counts them. */
  tasks: number;
}

/**
 * Samples a process tree. Walks /proc/<pid>/task/<tid>/children rather than scanning every
 * process on the machine. `pids` receives the processes found.
 */
export function sampleTree(rootPid: number, pids?: number[]): TreeSample {
  const sample: TreeSample = { residentBytes: 0, tasks: 0 };
  const stack = [rootPid];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    try {
      const resident = Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]);
      if (Number.isFinite(resident)) sample.residentBytes += resident * PAGE_SIZE;
    } catch {
      continue;
    }
    pids?.push(pid);
    stack.push(...childrenOf(pid, sample));
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
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // Fields after the command name, which may itself contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[3]) !== sessionId) continue;
    pids?.push(Number(entry));
    sample.tasks += Number(fields[17]) || 1;
    sample.residentBytes += (Number(fields[21]) || 0) * PAGE_SIZE;
  }
  return sample;
}
