import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Language } from "../languages.ts";
import { JOB_LANG, jobPath, resolvedInterpreters } from "../exec/interpreters.ts";
import { runProcess, type RunResult } from "../exec/process.ts";
import { cacheDir, lockHash, once, publish, tempDir } from "./cache.ts";
import { RequirementsError, type NpmRequirement, type Requirements } from "./requirements.ts";
import { planLock } from "./windmill-locks.ts";

export interface InstallOptions {
  /** Per machine: one folder per lock, shared by every worker process of the machine. */
  cacheRoot: string;
  /** Index and registry settings (PIP_INDEX_URL, PIP_FIND_LINKS, NPM_CONFIG_REGISTRY, proxies). */
  env: Record<string, string>;
  onLog(chunk: string): void;
  signal?: AbortSignal;
  timeoutMs: number;
}

/** What a job needs to use an installed lock. */
export interface InstalledDependencies {
  dir: string;
  /** Variables pointing the interpreter at the packages (PYTHONPATH). */
  env: Record<string, string>;
  /** bun/deno: the node_modules folder to link into the job folder. */
  nodeModulesDir?: string;
  /** Host paths the job must be able to read. */
  readOnlyPaths: string[];
}

export class InstallError extends Error {
  override name = "DependencyInstallError";
}

const SITE = "site-packages";
const PIP_LOCK_LINE = /^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?==[A-Za-z0-9.*+!_-]+$/;

function installed(language: Language, dir: string): InstalledDependencies {
  if (language === "python3") {
    return { dir, env: { PYTHONPATH: path.join(dir, SITE), PYTHONNOUSERSITE: "1" }, readOnlyPaths: [dir] };
  }
  return { dir, env: {}, nodeModulesDir: path.join(dir, "node_modules"), readOnlyPaths: [dir] };
}

function installerEnv(options: InstallOptions, home: string, extra: Record<string, string>) {
  // Never the worker's own environment: only the index settings it was configured with.
  return { ...options.env, ...extra, PATH: jobPath(), HOME: home, TMPDIR: home, LANG: JOB_LANG };
}

function tail(run: RunResult): string {
  return run.outputTail.trimEnd().split("\n").slice(-15).join("\n");
}

async function run(
  options: InstallOptions,
  what: string,
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  keepStdout = false,
): Promise<RunResult> {
  const result = await runProcess({
    command,
    args,
    cwd,
    env,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    onLog: options.onLog,
    keepStdout,
  });
  if (result.canceled) throw new InstallError(`${what} was canceled`);
  if (result.timedOut)
    throw new InstallError(`${what} timed out after ${Math.round(options.timeoutMs / 1000)} s`);
  if (result.spawnError) throw new InstallError(`could not start ${what}: ${result.spawnError.message}`);
  if (result.exitCode !== 0) {
    const status = result.exitSignal ? `signal ${result.exitSignal}` : `exit code ${result.exitCode}`;
    throw new InstallError(`${what} failed (${status}):\n${tail(result)}`);
  }
  return result;
}

// ------------------------------------------------------------------ python3 (pip --target)

function pipArgs(...args: string[]): string[] {
  return ["-m", "pip", ...args, "--no-input", "--disable-pip-version-check"];
}

function pipEnv(options: InstallOptions, home: string): Record<string, string> {
  return installerEnv(options, home, {
    PIP_CACHE_DIR: path.join(path.resolve(options.cacheRoot), "python3", ".pip-cache"),
    PIP_ROOT_USER_ACTION: "ignore",
    PYTHONNOUSERSITE: "1",
  });
}

async function pipInstall(options: InstallOptions, dir: string, requirements: string, noDeps: boolean) {
  writeFileSync(path.join(dir, "requirements.txt"), requirements);
  const python = resolvedInterpreters().python3;
  const args = pipArgs("install", "--target", path.join(dir, SITE), "--no-warn-script-location");
  if (noDeps) args.push("--no-deps");
  args.push("-r", "requirements.txt");
  await run(options, "pip install", python, args, dir, pipEnv(options, dir));
}

async function resolvePython(packages: string[], options: InstallOptions, target?: string): Promise<string> {
  const temp = tempDir(options.cacheRoot, "python3");
  try {
    options.onLog(`[millrace] pip install ${packages.join(" ")}\n`);
    await pipInstall(options, temp, `${packages.join("\n")}\n`, false);
    const python = resolvedInterpreters().python3;
    const freeze = await run(
      { ...options, onLog: () => {} },
      "pip freeze",
      python,
      pipArgs("freeze", "--path", path.join(temp, SITE)),
      temp,
      pipEnv(options, temp),
      true,
    );
    const lock = freeze.stdoutTail
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "")
      .sort()
      .join("\n");
    publish(temp, target ?? cacheDir(options.cacheRoot, "python3", lockHash("python3", lock)));
    return lock;
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
}

async function installPythonLock(lock: string, dir: string, options: InstallOptions): Promise<void> {
  const lines = lock.split("\n").filter((line) => line.trim() !== "");
  const bad = lines.find((line) => !PIP_LOCK_LINE.test(line.trim()));
  if (bad !== undefined) throw new InstallError(`lock line "${bad}" is not name==version`);
  const temp = tempDir(options.cacheRoot, "python3");
  try {
    options.onLog(`[millrace] installing ${lines.length} locked Python package(s)\n`);
    await pipInstall(options, temp, `${lines.join("\n")}\n`, true);
    publish(temp, dir);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
}

// ------------------------------------------------------------------ bun / deno (bun install)

const PACKAGE_JSON_HEADER = "# package.json";
const BUN_LOCK_HEADER = "# bun.lock";

function packageJson(packages: NpmRequirement[]): string {
  const dependencies: Record<string, string> = {};
  for (const p of packages) {
    // `import x from "pkg@1.2"` resolves the folder node_modules/pkg@1.2: an npm alias names it so.
    dependencies[p.alias] = p.alias === p.name ? p.version : `npm:${p.name}@${p.version}`;
  }
  return JSON.stringify({ name: "millrace-script-deps", private: true, dependencies });
}

function bunEnv(options: InstallOptions, home: string): Record<string, string> {
  return installerEnv(options, home, {
    BUN_INSTALL_CACHE_DIR: path.join(path.resolve(options.cacheRoot), "bun", ".install-cache"),
    DO_NOT_TRACK: "1",
  });
}

async function bunInstall(options: InstallOptions, dir: string, frozen: boolean): Promise<void> {
  const args = ["install", "--no-progress"];
  if (frozen) args.push("--frozen-lockfile");
  await run(options, "bun install", resolvedInterpreters().bun, args, dir, bunEnv(options, dir));
}

/** The lock of a TypeScript script: its package.json and bun.lock, one after the other. */
export function formatNpmLock(pkg: string, bunLock: string): string {
  return `${PACKAGE_JSON_HEADER}\n${pkg}\n${BUN_LOCK_HEADER}\n${bunLock}`;
}

export function parseNpmLock(lock: string): { packageJson: string; bunLock: string } {
  const lines = lock.split("\n");
  if (lines[0] !== PACKAGE_JSON_HEADER || lines[2] !== BUN_LOCK_HEADER) {
    throw new InstallError("the lock is not a Millrace npm lock (# package.json … # bun.lock …)");
  }
  return { packageJson: lines[1] ?? "{}", bunLock: lines.slice(3).join("\n") };
}

async function resolveNpm(
  packages: NpmRequirement[],
  options: InstallOptions,
  target?: string,
): Promise<string> {
  const temp = tempDir(options.cacheRoot, "bun");
  try {
    const pkg = packageJson(packages);
    writeFileSync(path.join(temp, "package.json"), pkg);
    options.onLog(`[millrace] bun install ${packages.map((p) => p.alias).join(" ")}\n`);
    await bunInstall(options, temp, false);
    const bunLock = readFileSync(path.join(temp, "bun.lock"), "utf8");
    const lock = formatNpmLock(pkg, bunLock);
    publish(temp, target ?? cacheDir(options.cacheRoot, "bun", lockHash("bun", lock)));
    return lock;
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
}

async function installNpmLock(lock: string, dir: string, options: InstallOptions): Promise<void> {
  const { packageJson: pkg, bunLock } = parseNpmLock(lock);
  const temp = tempDir(options.cacheRoot, "bun");
  try {
    writeFileSync(path.join(temp, "package.json"), pkg);
    writeFileSync(path.join(temp, "bun.lock"), bunLock);
    options.onLog("[millrace] installing locked npm packages (bun install --frozen-lockfile)\n");
    await bunInstall(options, temp, true);
    publish(temp, dir);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
}

// ------------------------------------------------------------------ entry points

/** bun and deno share one npm cache: the same lock installs the same node_modules. */
function cacheLanguage(language: Language): "python3" | "bun" {
  return language === "python3" ? "python3" : "bun";
}

/**
 * Resolves a script's requirements (the dependency job): installs them into this machine's cache
 * and returns the lock that pins them (pip freeze; package.json + bun.lock).
 */
export async function resolveDependencies(
  requirements: Requirements,
  options: InstallOptions,
): Promise<{ lock: string; installed: InstalledDependencies }> {
  const lock =
    requirements.language === "python3"
      ? await resolvePython(requirements.packages, options)
      : await resolveNpm(requirements.packages, options);
  const language = cacheLanguage(requirements.language);
  return {
    lock,
    installed: installed(language, cacheDir(options.cacheRoot, language, lockHash(language, lock))),
  };
}

/**
 * Makes a lock available on this machine: the cached folder when another job (or the dependency
 * job) installed it here already, else a fresh install of exactly the locked versions.
 */
export async function ensureInstalled(
  language: Language,
  lock: string,
  options: InstallOptions,
): Promise<InstalledDependencies> {
  if (language !== "python3" && language !== "bun" && language !== "deno") {
    throw new RequirementsError(`${language} scripts have no dependencies to install`);
  }
  const kind = cacheLanguage(language);
  const dir = cacheDir(options.cacheRoot, kind, lockHash(kind, lock));
  if (!existsSync(dir)) {
    await once(dir, () =>
      kind === "python3" ? installPythonLock(lock, dir, options) : installNpmLock(lock, dir, options),
    );
  }
  return installed(kind, dir);
}

/**
 * Makes a step's lock available whatever wrote it (see windmill-locks.ts): Millrace's own is
 * installed exactly; one from Windmill is resolved from what it pins (or from the script's
 * imports) once per machine, cached under the lock it came as, so later runs reuse it. Null:
 * nothing to install.
 */
export async function ensureLockInstalled(
  language: Language,
  lock: string,
  content: string,
  options: InstallOptions,
): Promise<InstalledDependencies | null> {
  const plan = planLock(language, lock, content);
  if (plan.kind === "locked") return ensureInstalled(language, plan.lock, options);
  const requirements = plan.requirements;
  if (!requirements) return null;
  const kind = cacheLanguage(language);
  const key = `windmill\n${lock}\n${JSON.stringify(requirements.packages)}`;
  const dir = cacheDir(options.cacheRoot, kind, lockHash(kind, key));
  if (!existsSync(dir)) {
    options.onLog("[millrace] the lock is not Millrace's: resolving what it pins\n");
    await once(dir, async () => {
      if (requirements.language === "python3") await resolvePython(requirements.packages, options, dir);
      else await resolveNpm(requirements.packages, options, dir);
    });
  }
  return installed(kind, dir);
}
