import { createHash, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";

/** Folder name of a lock in the cache: the same lock always lands in the same folder. */
export function lockHash(language: string, lock: string): string {
  return createHash("sha256").update(`${language}\n${lock}`).digest("hex").slice(0, 32);
}

export function cacheDir(cacheRoot: string, language: string, hash: string): string {
  return path.join(path.resolve(cacheRoot), language, hash);
}

const prepared = new Set<string>();

/** A fresh folder beside the cache entries (same filesystem, so the final rename is atomic). */
export function tempDir(cacheRoot: string, language: string): string {
  const root = path.resolve(cacheRoot);
  const parent = path.join(root, language);
  if (!prepared.has(parent)) {
    mkdirSync(parent, { recursive: true, mode: 0o755 });
    // Jobs may run as another (unprivileged) user: they must reach the cache, read-only.
    chmodSync(root, 0o755);
    chmodSync(parent, 0o755);
    prepared.add(parent);
  }
  const dir = path.join(parent, `.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
  mkdirSync(dir, { mode: 0o755 });
  return dir;
}

/**
 * Moves a finished install into place. A cache folder exists only once complete: installs write
 * to a temp folder and rename it, so a concurrent install of the same lock (another worker
 * process on this machine) either wins the rename or finds the folder there and drops its copy.
 */
export function publish(temp: string, final: string): void {
  if (existsSync(final)) {
    rmSync(temp, { recursive: true, force: true });
    return;
  }
  try {
    renameSync(temp, final);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    rmSync(temp, { recursive: true, force: true });
    if ((code === "ENOTEMPTY" || code === "EEXIST") && existsSync(final)) return;
    throw error;
  }
}

// One install per cache folder at a time in this process; other processes are handled by publish.
const inFlight = new Map<string, Promise<unknown>>();

export function once<T>(key: string, work: () => Promise<T>): Promise<T> {
  const running = inFlight.get(key) as Promise<T> | undefined;
  if (running) return running;
  const promise = work().finally(() => inFlight.delete(key));
  inFlight.set(key, promise);
  return promise;
}
