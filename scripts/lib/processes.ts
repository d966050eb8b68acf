import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

export interface Managed {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

/**
 * Starts a child in its own process group, so that stopping it also stops anything it spawned
 * (`next start` forks a server process), and prefixes its output lines with its name.
 */
export function startManaged(
  name: string,
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; quiet?: boolean },
): Managed {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const prefix = (stream: NodeJS.ReadableStream, out: NodeJS.WritableStream) => {
    let buffer = "";
    stream.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      if (!options.quiet) for (const line of lines) out.write(`[${name}] ${line}\n`);
    });
  };
  prefix(child.stdout!, process.stdout);
  prefix(child.stderr!, process.stderr);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { name, child, exited };
}

/** SIGTERM the child's group, then SIGKILL it if it has not exited after `graceMs`. */
export async function stopManaged(managed: Managed, graceMs: number): Promise<void> {
  const pid = managed.child.pid;
  if (pid === undefined || managed.child.exitCode !== null) return;
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }, graceMs);
  await managed.exited;
  clearTimeout(timer);
  // The group may still hold grandchildren (a job's interpreter); make sure none outlives us.
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // nothing left
  }
}

export async function waitForHttp(url: string, timeoutMs: number, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`process serving ${url} exited before it answered`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
}

/**
 * Starts the watchdog (watchdog.ts) that stops what `guard` was given once this process is gone,
 * however it ends. Returns `guard`; the watchdog itself exits after the last guarded process.
 */
export function startWatchdog(): {
  guard(what: "group" | "pid", pid: number, signal: NodeJS.Signals, graceMs: number): void;
} {
  const watchdog = spawn(process.execPath, [path.join(import.meta.dirname, "watchdog.ts")], {
    detached: true,
    stdio: ["pipe", "ignore", "inherit"],
  });
  watchdog.unref();
  // Never written to after the lines below: it closes when this process exits.
  const stdin = watchdog.stdin!;
  (stdin as unknown as { unref?: () => void }).unref?.();
  return {
    guard(what, pid, signal, graceMs) {
      stdin.write(`${what} ${pid} ${signal} ${graceMs}\n`);
    },
  };
}
