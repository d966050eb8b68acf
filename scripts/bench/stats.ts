import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

export function summary(samples: number[]): { p50: number; p95: number; mean: number; n: number } {
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return { p50: percentile(samples, 50), p95: percentile(samples, 95), mean, n: samples.length };
}

export const ms = (value: number) => `${value.toFixed(1)} ms`;

/**
 * CPU time the whole machine has spent busy (all cores, ms). The difference over a series,
 * divided by its requests, is what one request costs the machine, every process included; a
 * series whose requests follow each other cannot go faster than that cost over the cores.
 */
export function machineBusyMs(): number {
  return os.cpus().reduce((sum, { times }) => sum + times.user + times.nice + times.sys + times.irq, 0);
}

/**
 * Waits until the machine has been idle (under `idleShare` of its CPUs busy, and `busy` false)
 * for `quietSecs` seconds in a row, at most `maxSecs`; answers how long it waited and how busy the machine was in
 * its first second (the share of all CPUs).
 */
export async function settle(
  options: {
    idleShare?: number;
    quietSecs?: number;
    maxSecs?: number;
    /** Also not quiet while this answers true (e.g. a database's autovacuum at work). */
    busy?: () => Promise<boolean>;
  } = {},
): Promise<{ waitedSecs: number; firstBusyShare: number }> {
  const { idleShare = 0.1, quietSecs = 3, maxSecs = 180, busy } = options;
  const cpus = os.cpus().length;
  const started = performance.now();
  let firstBusyShare = -1;
  let quiet = 0;
  while (quiet < quietSecs && performance.now() - started < maxSecs * 1000) {
    const before = machineBusyMs();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const share = (machineBusyMs() - before) / (1000 * cpus);
    if (firstBusyShare < 0) firstBusyShare = share;
    quiet = share < idleShare && !(await busy?.()) ? quiet + 1 : 0;
  }
  return { waitedSecs: (performance.now() - started) / 1000, firstBusyShare };
}

/**
 * Runs `series` and returns its result with the machine's busy CPU per request (ms) and that of
 * this process's descendants alone (`treeCpuPerRequest`, see treeCpuMs).
 */
export async function withCpuPerRequest<T>(
  requests: number,
  series: () => Promise<T>,
): Promise<{ result: T; cpuPerRequest: number; treeCpuPerRequest: number }> {
  const before = machineBusyMs();
  const treeBefore = treeCpuMs();
  const result = await series();
  return {
    result,
    cpuPerRequest: (machineBusyMs() - before) / requests,
    treeCpuPerRequest: (treeCpuMs() - treeBefore) / requests,
  };
}

// /proc counts CPU in clock ticks; Linux on x86 and arm64 builds with USER_HZ = 100.
const MS_PER_TICK = 10;

/**
 * CPU time (ms) this process's descendants have used: every live descendant's own time and that
 * of the children it reaped, plus what this process reaped. Unlike `machineBusyMs`, whatever else
 * runs on the machine (another build, another test) is not counted; kernel threads' work for a
 * process (namespace teardown, writeback) is not counted either.
 */
export function treeCpuMs(): number {
  let total = 0;
  for (const ms of treeCpuByProcess().values()) total += ms;
  return total;
}

/**
 * treeCpuMs by process: each descendant's own time under its command (`postgres: <role> <db>`,
 * `node <script>`), what it reaped under `<command> ⟶ reaped children`, and this process's
 * reaped children under `(reaped by the bench)`.
 */
export function treeCpuByProcess(): Map<string, number> {
  const parents = new Map<number, number>();
  const times = new Map<number, { own: number; reaped: number }>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // The command name may hold spaces and parentheses: the fields start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pid = Number(entry);
    parents.set(pid, Number(fields[1]));
    times.set(pid, {
      own: Number(fields[11]) + Number(fields[12]),
      reaped: Number(fields[13]) + Number(fields[14]),
    });
  }
  const inTree = (pid: number): boolean => {
    for (let at = parents.get(pid); at !== undefined && at > 1; at = parents.get(at)) {
      if (at === process.pid) return true;
    }
    return false;
  };
  const out = new Map<string, number>();
  const add = (label: string, ticks: number) => out.set(label, (out.get(label) ?? 0) + ticks * MS_PER_TICK);
  add("(reaped by the bench)", times.get(process.pid)?.reaped ?? 0);
  for (const [pid, time] of times) {
    if (!inTree(pid)) continue;
    const label = processLabel(pid);
    add(label, time.own);
    add(`${label} ⟶ reaped children`, time.reaped);
  }
  return out;
}

function processLabel(pid: number): string {
  let argv: string[];
  try {
    argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return "(gone)";
  }
  const command = path.basename(argv[0] ?? "?");
  // PostgreSQL backends name themselves "postgres: user db client state": keep the role.
  if (command.startsWith("postgres:")) return argv[0]!.split(" ").slice(0, 2).join(" ");
  if (command === "node" || command.startsWith("node")) {
    const script = argv.slice(1).find((arg) => !arg.startsWith("-"));
    return `node ${script ? script.split("/").slice(-3).join("/") : "?"}`;
  }
  return command;
}
