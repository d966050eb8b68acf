import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

export type Interpreter = "bash" | "python3" | "bun" | "deno" | "node";

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function searchPath(name: string): string {
  // The worker's own PATH is only used to locate interpreters, never handed to a job.
  // eslint-disable-next-line no-restricted-properties
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    // pyenv/asdf shims re-exec through a shell script per call (~170 ms): never pick one.
    if (!dir || /[/\\]shims$/.test(dir)) continue;
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return name;
}

function firstExecutable(candidates: (string | undefined)[]): string | undefined {
  return candidates.find((c): c is string => c !== undefined && isExecutableFile(c));
}

function packageDir(require: NodeJS.Require, specifier: string, from?: string): string | undefined {
  try {
    const resolved = from
      ? require.resolve(`${specifier}/package.json`, { paths: [from] })
      : require.resolve(`${specifier}/package.json`);
    return path.dirname(resolved);
  } catch {
    return undefined;
  }
}

function resolveBun(require: NodeJS.Require): string {
  const dir = packageDir(require, "bun");
  const arch = process.arch === "arm64" ? "aarch64" : "x64";
  const platformDir = dir ? packageDir(require, `@oven/bun-${process.platform}-${arch}`, dir) : undefined;
  return (
    firstExecutable([
      dir && path.join(dir, "bin", "bun.exe"),
      platformDir && path.join(platformDir, "bin", "bun"),
    ]) ?? searchPath("bun")
  );
}

function resolveDeno(require: NodeJS.Require): string {
  // The `deno` package's bin is a Node shim (bin.cjs) that would cost a Node start per job: use the binary.
  const dir = packageDir(require, "deno");
  const libc = process.platform === "linux" ? "-glibc" : "";
  const platformDir = dir
    ? packageDir(require, `@deno/${process.platform}-${process.arch}${libc}`, dir)
    : undefined;
  return (
    firstExecutable([dir && path.join(dir, "deno"), platformDir && path.join(platformDir, "deno")]) ??
    searchPath("deno")
  );
}

let cached: Readonly<Record<Interpreter, string>> | undefined;

export function resolvedInterpreters(): Readonly<Record<Interpreter, string>> {
  if (!cached) {
    const require = createRequire(import.meta.url);
    cached = Object.freeze({
      bash: firstExecutable(["/bin/bash", "/usr/bin/bash"]) ?? searchPath("bash"),
      python3: firstExecutable(["/usr/bin/python3"]) ?? searchPath("python3"),
      bun: resolveBun(require),
      deno: resolveDeno(require),
      node: process.execPath,
    });
  }
  return cached;
}

export function interpreterPaths(): Record<Interpreter, string> {
  return { ...resolvedInterpreters() };
}

/** The locale every job runs with (and warm sandboxes load ahead). */
export const JOB_LANG = "C.UTF-8";

let safePath: string | undefined;

/** The only PATH a job sees: the project's Node plus the system folders, never the worker's own PATH. */
export function jobPath(): string {
  safePath ??= [...new Set([path.dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"])].join(":");
  return safePath;
}

let prlimit: string | null | undefined;

/** util-linux `prlimit`, which sets the job's rlimits right before exec (null when missing). */
export function prlimitPath(): string | null {
  prlimit ??= firstExecutable(["/usr/bin/prlimit", "/bin/prlimit"]) ?? null;
  return prlimit;
}
