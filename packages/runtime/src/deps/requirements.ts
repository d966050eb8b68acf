import { builtinModules } from "node:module";
import ts from "typescript";
import type { Language } from "../languages.ts";

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

/**
 * Windmill's `# requirements:` block: the comment lines right after it, one requirement each
 * (`#pandas==2.0`); the block ends at the first line that is not a comment.
 */
export function pythonRequirements(content: string): string[] {
  const lines = content.split(/\r?\n/);
  const start = lines.findIndex((line) => /^\s*#\s*requirements\s*:\s*$/i.test(line));
  if (start === -1) return [];
  const packages: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const match = /^\s*#(.*)$/.exec(line);
    if (!match) break;
    const requirement = (match[1] ?? "").trim();
    if (requirement === "") continue;
    if (!PY_REQUIREMENT.test(requirement)) {
      throw new RequirementsError(
        `requirement "${requirement}" is not a package name with optional extras and version specifiers (e.g. requests==2.31.0)`,
      );
    }
    if (!packages.includes(requirement)) packages.push(requirement);
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
