// File layout and YAML formatting of the Windmill CLI 1.819 (`wmill sync pull/push`). Each rule
// names where in the CLI bundle (node_modules/windmill-cli/esm/main.js) it was confirmed.
import { parse, stringify, type ScalarTag } from "yaml";
import type { SyncLanguage } from "./types.ts";

/**
 * wmill's key order (`prioritizeName` + `yamlOptions` in src/commands/sync/sync.ts): a few keys
 * first, then the rest by `localeCompare`, at every depth. `sync pull` writes every YAML file with
 * these options, so the same options make our files byte-identical to wmill's.
 */
export function prioritizeName(name: string): string {
  switch (name) {
    case "version":
      return "aaa";
    case "id":
      return "aa";
    case "type":
      return "ab";
    case "summary":
      return "ad";
    case "name":
      return "ae";
    case "display_name":
      return "af";
    case "description":
      return "ag";
    case "value":
      return "ah";
    case "content":
      return "ai";
    case "modules":
      return "aj";
    case "failure_module":
      return "ak";
    case "input_transforms":
      return "al";
    case "lock":
      return "az";
    case "locks":
      return "azz";
    default:
      return name;
  }
}

// wmill calls `localeCompare` without a locale; "en" pins it so the order does not depend on the
// machine's LANG (keys are ASCII identifiers, for which "en" and the root collation agree).
const collator = new Intl.Collator("en");

export const YAML_OPTIONS = {
  sortMapEntries: (a: { key: unknown }, b: { key: unknown }) =>
    collator.compare(prioritizeName(String(a.key)), prioritizeName(String(b.key))),
  aliasDuplicateObjects: false,
  singleQuote: true,
} as const;

/** YAML text of `value` exactly as wmill's `sync pull` writes it (ends with a newline). */
export function toYaml(value: unknown): string {
  return stringify(value, YAML_OPTIONS);
}

/**
 * wmill reads `lock: !inline path` (a tag) and `lock: '!inline path'` (a string) alike
 * (`WINDMILL_CUSTOM_TAGS` in src/utils/yaml.ts); both parse to the string "!inline path".
 */
const inlineTag: ScalarTag = { tag: "!inline", resolve: (value: string) => "!inline " + value };
const inlineFilesetTag: ScalarTag = {
  tag: "!inline_fileset",
  resolve: (value: string) => "!inline_fileset " + value,
};

/** Parses YAML like wmill (`yamlParseContent`); throws the yaml package's error on bad input. */
export function fromYaml(text: string): unknown {
  return parse(text, { customTags: [inlineTag, inlineFilesetTag], prettyErrors: true });
}

export const INLINE_PREFIX = "!inline ";

/**
 * Code file extension per language (`filePathExtensionFromContentType` in
 * src/commands/script/script.ts). With `defaultTs: deno` in wmill.yaml, deno scripts are `.ts` and
 * bun scripts `.bun.ts`.
 */
export function codeExtension(language: SyncLanguage, defaultTs: "bun" | "deno"): string {
  switch (language) {
    case "bash":
      return ".sh";
    case "python3":
      return ".py";
    case "bun":
      return defaultTs === "deno" ? ".bun.ts" : ".ts";
    case "deno":
      return defaultTs === "deno" ? ".ts" : ".deno.ts";
    case "postgresql":
      return ".pg.sql";
  }
}

/**
 * Every script extension wmill knows, longest match first (`exts` in src/commands/script/script.ts),
 * with the language it infers (`inferContentTypeFromFilePath` in src/utils/script_common.ts).
 * Languages Millrace does not run map to their Windmill name so the error can name it.
 */
export const WMILL_SCRIPT_EXTENSIONS: [string, string][] = [
  [".fetch.ts", "nativets"],
  [".deno.ts", "deno"],
  [".bun.ts", "bun"],
  [".ts", "<defaultTs>"],
  [".py", "python3"],
  [".go", "go"],
  [".sh", "bash"],
  [".pg.sql", "postgresql"],
  [".my.sql", "mysql"],
  [".bq.sql", "bigquery"],
  [".odb.sql", "oracledb"],
  [".sf.sql", "snowflake"],
  [".ms.sql", "mssql"],
  [".duckdb.sql", "duckdb"],
  [".sql", "<sql without dialect>"],
  [".gql", "graphql"],
  [".ps1", "powershell"],
  [".php", "php"],
  [".rs", "rust"],
  [".cs", "csharp"],
  [".nu", "nu"],
  [".playbook.yml", "ansible"],
  [".java", "java"],
  [".rb", "ruby"],
  [".r", "rlang"],
];

/** Suffixes of the per-kind metadata files (`getTypeStrFromPath` in src/types.ts). */
export const SUFFIX = {
  scriptMeta: ".script.yaml",
  scriptLock: ".script.lock",
  resource: ".resource.yaml",
  resourceType: ".resource-type.yaml",
  variable: ".variable.yaml",
  schedule: ".schedule.yaml",
  group: ".group.yaml",
  folderMeta: "folder.meta.yaml",
  settings: "wmill.yaml",
} as const;

/** Groups live in `groups/<name>.group.yaml` (`pushGroup`: `removePathPrefix(…, "groups")`). */
export const GROUPS_DIR = "groups";

/** Segments of item paths, as Millrace's `parsePath` accepts them (packages/core/src/paths.ts). */
export const SEGMENT = /^[A-Za-z0-9_-]+$/;
export const MAX_PATH_LENGTH = 255;

/** Why `path` is not a valid `u/<user>/<name>` or `f/<folder>/<name>` path, or null when it is. */
export function pathProblem(path: string): string | null {
  if (path.length > MAX_PATH_LENGTH) return `at most ${MAX_PATH_LENGTH} characters`;
  const segments = path.split("/");
  const [kind, owner, ...rest] = segments;
  if ((kind !== "u" && kind !== "f") || !owner || rest.length === 0) {
    return `must look like u/<user>/<name> or f/<folder>/<name>, got "${path}"`;
  }
  for (const segment of segments) {
    if (!SEGMENT.test(segment)) return `segment "${segment}" may only contain letters, digits, _ and -`;
  }
  return null;
}

/** `defaultTs` of a wmill.yaml text (`bun` when absent or unreadable, wmill's default). */
export function defaultTsOf(wmillYaml: string): "bun" | "deno" {
  try {
    const parsed = fromYaml(wmillYaml);
    if (parsed && typeof parsed === "object" && (parsed as Record<string, unknown>).defaultTs === "deno") {
      return "deno";
    }
  } catch {
    // reported by filesToSnapshot
  }
  return "bun";
}
