// The watchdog of `npm start`: a process of its own (its own process group, so a kill of the
// launcher's group does not reach it) that stops whatever the launcher started once the launcher
// is gone, however it went: Ctrl-C, SIGTERM to its PID, kill -9 of its group. The launcher holds
// the write end of this process's stdin and writes one line per process to guard; the kernel
// closes it when the launcher dies, for any reason.
//
// Line: `<group|pid> <id> <signal> <graceMs>`: on EOF the process group (or the single process)
// `id` gets `signal`, then SIGKILL if it is still there after `graceMs`. They are stopped in the
// reverse of the order they were given (the last started, first).
import readline from "node:readline";

interface Guarded {
  /** A process group's id (its leader's pid), or a pid when `single`. */
  pid: number;
  single: boolean;
  signal: NodeJS.Signals;
  graceMs: number;
}

const guarded: Guarded[] = [];

function target({ pid, single }: Guarded): number {
  return single ? pid : -pid;
}

function alive(guard: Guarded): boolean {
  try {
    process.kill(target(guard), 0);
    return true;
  } catch {
    return false;
  }
}

function send(guard: Guarded, signal: NodeJS.Signals): void {
  try {
    process.kill(target(guard), signal);
  } catch {
    // gone
  }
}

async function stopAll(): Promise<void> {
  for (const guard of guarded.reverse()) {
    if (!alive(guard)) continue;
    send(guard, guard.signal);
    const deadline = Date.now() + guard.graceMs;
    while (alive(guard) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    send(guard, "SIGKILL");
  }
  process.exit(0);
}

// The launcher's Ctrl-C reaches its own group only; this one has its own and must not die first.
process.on("SIGINT", () => {});
process.on("SIGHUP", () => {});

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const [kind, pid, signal, graceMs] = line.trim().split(/\s+/);
  if ((kind === "group" || kind === "pid") && pid && /^\d+$/.test(pid)) {
    guarded.push({
      pid: Number(pid),
      single: kind === "pid",
      signal: (signal ?? "SIGTERM") as NodeJS.Signals,
      graceMs: Number(graceMs ?? 10_000),
    });
  }
});
lines.on("close", () => void stopAll());
