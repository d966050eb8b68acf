import { builtinModules } from "node:module";
import ts from "typescript";
import type { Language } from "../languages.ts";
import { inferredPythonRequirements } from "./python-imports.ts";

/** A script's declared dependencies, before resolution. */
export type Requirements =
  { language: "python3"; packages: string[] } | { language: "bun" | "deno"; packages: NpmRequirement[] };

export interface NpmRequirement {
  /** The specifier's package part as written (`pkg`, `pkg@1.2`, `@scope/pkg@^2`): the folder name in node_modules. */
  alias: string;
  name: string;
  /** `latest` when the import names no version. */
  version: string;
}

export class RequirementsError extends Error {
  override name = "RequirementsError";
}

// PEP 508 names with extras and version specifiers (and environment markers). No options
// (`--index-url`, `-r file`) and no direct references (`pkg @ file:///…`): a script must not point
// the worker's pip at another index or at the worker's own files.
const PY_VERSION = String.raw`(?:===|~=|==|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+`;
const PY_REQUIREMENT = new RegExp(
  String.raw`^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\s*\[\s*[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\s*\])?` +
    String.raw`\s*(?:${PY_VERSION}(?:\s*,\s*${PY_VERSION})*)?\s*(?:;[^#]*)?$`,
);

function checkedPythonRequirement(requirement: string): string {
  if (!PY_REQUIREMENT.test(requirement)) {
    throw new RequirementsError(
      `requirement "${requirement}" is not a package name with optional extras and version specifiers (e.g. requests==2.31.0)`,
    );
  }
  return requirement;
}

/**
 * A block of requirements: the comment lines right after its header (`# requirements:`), one
 * requirement each (`#pandas==2.0`), up to the first line that is not a comment; null without one.
 */
function pythonBlock(content: string, header: RegExp): string[] | null {
  const lines = content.split(/\r?\n/);
  const start = lines.findIndex((line) => header.test(line));
  if (start === -1) return null;
  const packages: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const match = /^\s*#(.*)$/.exec(line);
    if (!match) break;
    const requirement = (match[1] ?? "").trim();
    if (requirement === "") continue;
    checkedPythonRequirement(requirement);
    if (!packages.includes(requirement)) packages.push(requirement);
  }
  return packages;
}

const REQUIREMENTS_HEADER = /^\s*#\s*requirements\s*:\s*$/i;
const EXTRA_REQUIREMENTS_HEADER = /^\s*#\s*extra_requirements\s*:\s*$/i;

/**
 * A python3 script's requirements, as Windmill reads them: its `# requirements:` block when it
 * has one (the whole list, nothing inferred), else the packages its imports need (see
 * python-imports.ts: the standard library, relative imports, workspace scripts and `wmill` left
 * out, import names mapped to package names, `# pin:` comments obeyed) plus its
 * `# extra_requirements:` block.
 */
export function pythonRequirements(content: string): string[] {
  const declared = pythonBlock(content, REQUIREMENTS_HEADER);
  if (declared) return declared;
  const packages = inferredPythonRequirements(content).map(checkedPythonRequirement);
  for (const extra of pythonBlock(content, EXTRA_REQUIREMENTS_HEADER) ?? []) {
    if (!packages.includes(extra)) packages.push(extra);
  }
  return packages;
}

const NPM_NAME = /^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/;
const NPM_VERSION = /^[A-Za-z0-9.^~<>=*|+ _-]{1,64}$/;
const BUILTINS = new Set(builtinModules);
// Workers bundle Windmill's client (found through NODE_PATH): installed only when a version is named.
const BUNDLED = new Set(["windmill-client"]);

/** The package part of a bare specifier (`@scope/pkg@1/sub` → `@scope/pkg@1`), or null when it is not one. */
function packagePart(specifier: string): string | null {
  if (specifier === "" || specifier.startsWith(".") || specifier.startsWith("/")) return null;
  // `node:`, `bun:`, `npm:`, `jsr:`, `https:`: builtins, or resolved by the runtime itself.
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(specifier)) return null;
  const parts = specifier.split("/");
  const part = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? "");
  if (BUILTINS.has(part) || part === "bun" || BUNDLED.has(part)) return null;
  return part;
}

function npmRequirement(alias: string): NpmRequirement {
  const at = alias.indexOf("@", alias.startsWith("@") ? 1 : 0);
  const name = at === -1 ? alias : alias.slice(0, at);
  const version = at === -1 ? "latest" : alias.slice(at + 1);
  if (!NPM_NAME.test(name))
    throw new RequirementsError(`import "${alias}": "${name}" is not an npm package name`);
  if (!NPM_VERSION.test(version))
    throw new RequirementsError(`import "${alias}": "${version}" is not a version range`);
  return { alias, name, version };
}

/** Bare imports of npm packages (`import x from "pkg"`, `"pkg@1.2"`, dynamic imports, requires). */
export function npmRequirements(content: string): NpmRequirement[] {
  const { importedFiles } = ts.preProcessFile(content, true, true);
  const seen = new Map<string, NpmRequirement>();
  for (const { fileName } of importedFiles) {
    const alias = packagePart(fileName);
    if (alias && !seen.has(alias)) seen.set(alias, npmRequirement(alias));
  }
  return [...seen.values()].sort((a, b) => (a.alias < b.alias ? -1 : a.alias > b.alias ? 1 : 0));
}

/** The package names of a script's `npm:` imports (`npm:@scope/pkg@^1/sub` → `@scope/pkg`). */
export function npmSchemeImports(content: string): string[] {
  const { importedFiles } = ts.preProcessFile(content, true, true);
  const names = new Set<string>();
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith("npm:")) continue;
    const specifier = fileName.slice(4).replace(/^\/+/, "");
    const parts = specifier.split("/");
    const part = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? "");
    const at = part.indexOf("@", part.startsWith("@") ? 1 : 0);
    names.add(at === -1 ? part : part.slice(0, at));
  }
  return [...names];
}

function versionParts(text: string): [number, number, number] | null {
  const match = /^(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$/.exec(text);
  if (!match) return null;
  const part = (value: string | undefined) =>
    value === undefined || !/^\d+$/.test(value) ? -1 : Number(value);
  return [Number(match[1]), part(match[2]), part(match[3])];
}

function compareVersions(a: [number, number, number], b: [number, number, number]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/**
 * Whether `version` (the bundled package's, `x.y.z`) satisfies the range an import names: no
 * range, `latest`, `*`, an exact version, `x`, `x.y`, `^x.y.z`, `~x.y.z`, `>=x.y.z`. Anything
 * else is left to the registry.
 */
export function satisfiesRange(version: string, range: string): boolean {
  const have = versionParts(version);
  if (!have) return false;
  const wanted = range.trim();
  if (wanted === "" || wanted === "latest" || wanted === "*") return true;
  const op = /^(\^|~|>=|=)?\s*(.+)$/.exec(wanted);
  const parts = op ? versionParts(op[2]!) : null;
  if (!op || !parts) return false;
  const [major, minor, patch] = parts;
  const floor: [number, number, number] = [major, Math.max(minor, 0), Math.max(patch, 0)];
  switch (op[1]) {
    case ">=":
      return compareVersions(have, floor) >= 0;
    case "^":
      return have[0] === major && compareVersions(have, floor) >= 0;
    case "~":
      return have[0] === major && (minor < 0 || have[1] === minor) && compareVersions(have, floor) >= 0;
    default:
      return have[0] === major && (minor < 0 || have[1] === minor) && (patch < 0 || have[2] === patch);
  }
}

const CLIENT_IMPORT = /^(?:npm:\/?)?windmill-client(?:@([^/]*))?(?:\/.*)?$/;

/**
 * Whether a bun/deno script imports the windmill-client workers bundle (`bundledVersion`):
 * `windmill-client` or `npm:windmill-client`, at a version the bundled copy satisfies (a bare
 * import that names a version is a requirement, installed like any other). False when it does
 * not import it, or when one of its imports asks for a version the bundle is not.
 */
export function importsBundledClient(content: string, bundledVersion: string): boolean {
  const { importedFiles } = ts.preProcessFile(content, true, true);
  let found = false;
  for (const { fileName } of importedFiles) {
    const match = CLIENT_IMPORT.exec(fileName);
    if (!match) continue;
    const range = match[1];
    if (!fileName.startsWith("npm:") && range !== undefined) return false;
    if (range !== undefined && !satisfiesRange(bundledVersion, range)) return false;
    found = true;
  }
  return found;
}

/** The dependencies a script declares, or null when it has none (or its language has none). */
export function scriptRequirements(language: Language | string, content: string): Requirements | null {
  if (language === "python3") {
    const packages = pythonRequirements(content);
    return packages.length > 0 ? { language, packages } : null;
  }
  if (language === "bun" || language === "deno") {
    const packages = npmRequirements(content);
    return packages.length > 0 ? { language, packages } : null;
  }
  return null;
}

/** Cheap check for the enqueue path: does this language/content declare dependencies? */
export function hasRequirements(language: Language | string, content: string): boolean {
  try {
    return scriptRequirements(language, content) !== null;
  } catch {
    // Invalid requirements were refused at deploy; a preview with them fails in its worker.
    return true;
  }
}
