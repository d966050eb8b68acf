// Locks that came from Windmill (a flow's inline step, pushed with `wmill`): Windmill's workers
// write other texts than Millrace's. What Millrace can use, it uses: a python lock's pins, the
// dependencies a bun lock's package.json names at the versions its bun.lock resolved. Anything
// else (a deno.lock, a binary bun.lockb, a lock this worker cannot read) is resolved again from
// the script's own imports, as a step without a lock would be, rather than failing the step.
import type { Language } from "../languages.ts";
import { scriptRequirements, type NpmRequirement, type Requirements } from "./requirements.ts";

export type LockPlan =
  /** A lock in Millrace's own format: installed exactly. */
  | { kind: "locked"; lock: string }
  /** Resolved from these requirements (null: nothing to install). */
  | { kind: "resolve"; requirements: Requirements | null };

const PACKAGE_JSON_HEADER = "# package.json";
const BUN_LOCK_HEADER = "# bun.lock";
const PIP_PIN = /^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?==[A-Za-z0-9.*+!_-]+$/;
// Windmill's split markers between package.json and the bun lock (text, or base64 of bun.lockb).
const WINDMILL_BUN_SPLIT = /\n\/\/bun\.lockb?\n/;

function fromContent(language: Language, content: string): LockPlan {
  return { kind: "resolve", requirements: scriptRequirements(language, content) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** bun.lock is JSON with trailing commas. */
function parseBunLock(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text.replace(/,(\s*[}\]])/g, "$1"));
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** `name@1.2.3` of bun.lock's `packages` entry for `key`, as [name, version]. */
function lockedVersion(bunLock: Record<string, unknown> | null, key: string): [string, string] | null {
  const packages = bunLock?.packages;
  if (!isRecord(packages)) return null;
  const entry = packages[key];
  const spec = Array.isArray(entry) ? entry[0] : undefined;
  if (typeof spec !== "string") return null;
  const at = spec.lastIndexOf("@");
  if (at <= 0) return null;
  return [spec.slice(0, at), spec.slice(at + 1)];
}

function pythonPlan(lock: string, content: string): LockPlan {
  // Windmill's python locks start with a comment naming the interpreter (`# py: 3.11`, `# py311`).
  const lines = lock
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  if (lines.length > 0 && lines.every((line) => PIP_PIN.test(line))) {
    return { kind: "locked", lock: lines.join("\n") };
  }
  return fromContent("python3", content);
}

function npmPlan(language: "bun" | "deno", lock: string, content: string): LockPlan {
  const lines = lock.split("\n");
  if (lines[0] === PACKAGE_JSON_HEADER) {
    const end = lines.indexOf(BUN_LOCK_HEADER);
    if (end === 2) return { kind: "locked", lock };
    if (end > 1) {
      // The same two files with a package.json spread over several lines: Millrace's one-line form.
      try {
        const pkg = JSON.stringify(JSON.parse(lines.slice(1, end).join("\n")));
        return { kind: "locked", lock: [PACKAGE_JSON_HEADER, pkg, ...lines.slice(end)].join("\n") };
      } catch {
        return fromContent(language, content);
      }
    }
    return fromContent(language, content);
  }
  const split = WINDMILL_BUN_SPLIT.exec(lock);
  if (!split) return fromContent(language, content);
  let pkg: unknown;
  try {
    pkg = JSON.parse(lock.slice(0, split.index));
  } catch {
    return fromContent(language, content);
  }
  const dependencies = isRecord(pkg) && isRecord(pkg.dependencies) ? pkg.dependencies : {};
  const bunLock = split[0].includes("lockb") ? null : parseBunLock(lock.slice(split.index + split[0].length));
  const packages: NpmRequirement[] = [];
  for (const [alias, spec] of Object.entries(dependencies)) {
    if (typeof spec !== "string") return fromContent(language, content);
    const aliased = /^npm:((?:@[^@/]+\/)?[^@]+)@(.+)$/.exec(spec);
    const pinned = lockedVersion(bunLock, alias);
    const name = aliased?.[1] ?? pinned?.[0] ?? alias;
    // The version bun.lock resolved, where it names one: the run gets what Windmill's did.
    const version = pinned && pinned[0] === name ? pinned[1] : (aliased?.[2] ?? spec);
    packages.push({ alias, name, version });
  }
  if (packages.length === 0) return fromContent(language, content);
  packages.sort((a, b) => (a.alias < b.alias ? -1 : a.alias > b.alias ? 1 : 0));
  return { kind: "resolve", requirements: { language, packages } };
}

/**
 * How a step's lock is installed: as it is when it is Millrace's own, else from what can be read
 * of Windmill's (see the top of this file). Throws RequirementsError when the script's own
 * requirements are invalid (as a deploy would have said).
 */
export function planLock(language: Language, lock: string, content: string): LockPlan {
  if (language === "python3") return pythonPlan(lock, content);
  if (language === "bun" || language === "deno") return npmPlan(language, lock, content);
  return { kind: "resolve", requirements: null };
}
