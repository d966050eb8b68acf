// Flows in wmill 1.819's layout: a folder `<path>__flow/` (`nonDottedPaths: true` in wmill.yaml) or
// `<path>.flow/` (wmill's default) holding `flow.yaml`, whose rawscript steps say
// `content: '!inline <file>'` (and `lock: '!inline <file>'` for a non-empty lock), and one file
// per inline step beside it. Names and order follow windmill-utils-internal's extractor and path
// assigner as bundled in node_modules/windmill-cli/esm/main.js (`extractInlineScripts`,
// `newPathAssigner`, `sanitizeForFilesystem`, `getLanguageExtension`; `ZipFSElement` for what
// `sync pull` writes, `pushFlow`/`replaceInlineScripts` for what `flow push` reads).
import { fromYaml, INLINE_PREFIX } from "./layout.ts";
import type { JsonObject, SyncError } from "./types.ts";

/** The latest version of one flow: Windmill's OpenFlow with the inline code in place. */
export interface SyncFlow {
  path: string;
  summary: string;
  description: string;
  /** FlowValue: `modules`, `failure_module`, … (rawscript `content` and `lock` inline). */
  value: JsonObject;
  /** The flow's input schema; null when it has none. */
  schema: JsonObject | null;
  /** Windmill's `ws_error_handler_muted`, when the flow had it (written back as it came). */
  ws_error_handler_muted?: boolean | null;
}

export const FLOW_METADATA_FILE = "flow.yaml";
export const DOTTED_FLOW_SUFFIX = ".flow";
export const NON_DOTTED_FLOW_SUFFIX = "__flow";

/** `<path>__flow/…` or `<path>.flow/…`: the flow's path, folder and the file inside it. */
export function splitFlowFile(file: string): { path: string; folder: string; rest: string } | null {
  const match = /^(.+?)(__flow|\.flow)\/(.+)$/.exec(file);
  if (!match) return null;
  return { path: match[1]!, folder: match[1]! + match[2]!, rest: match[3]! };
}

/** `nonDottedPaths` of a wmill.yaml text (false when absent or unreadable, wmill's default). */
export function nonDottedPathsOf(wmillYaml: string): boolean {
  try {
    const parsed = fromYaml(wmillYaml);
    return (
      !!parsed && typeof parsed === "object" && (parsed as Record<string, unknown>).nonDottedPaths === true
    );
  } catch {
    return false;
  }
}

/** wmill's LANGUAGE_EXTENSIONS for the five languages Millrace runs (path-assigner.ts). */
const LANGUAGE_EXTENSIONS: Record<string, string> = {
  python3: "py",
  bun: "bun.ts",
  deno: "deno.ts",
  bash: "sh",
  postgresql: "pg.sql",
  go: "go",
  powershell: "ps1",
  mysql: "my.sql",
  bigquery: "bq.sql",
  oracledb: "odb.sql",
  snowflake: "sf.sql",
  mssql: "ms.sql",
  graphql: "gql",
  nativets: "native.ts",
  php: "php",
  rust: "rs",
  csharp: "cs",
  nu: "nu",
  ansible: "playbook.yml",
  java: "java",
  duckdb: "duckdb.sql",
  bunnative: "ts",
  ruby: "rb",
  rlang: "r",
};

function languageExtension(language: string, defaultTs: "bun" | "deno"): string {
  if (language === defaultTs || language === "bunnative") return "ts";
  return LANGUAGE_EXTENSIONS[language] ?? "no_ext";
}

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/;

function sanitizeForFilesystem(summary: string): string {
  const name = summary
    .replaceAll(" ", "_")
    // eslint-disable-next-line no-control-regex
    .replace(/[/\\:*?"<>|\x00-\x1f\x7f]/g, "")
    .replace(/_+/g, "_")
    .replace(/^[._]+|[._]+$/g, "")
    .toLowerCase();
  return WINDOWS_RESERVED.test(name) ? `_${name}` : name;
}

/** wmill's `newPathAssigner`: file names from step summaries (or ids), deduplicated. */
function pathAssigner(defaultTs: "bun" | "deno", skipInlineScriptSuffix: boolean) {
  let counter = 0;
  const seen = new Set<string>();
  return (summary: string, language: string): [string, string] => {
    let name = summary ? sanitizeForFilesystem(summary) : "";
    let original = name;
    if (name === "") {
      original = "inline_script";
      name = "inline_script_0";
    }
    while (seen.has(name.toLowerCase())) {
      counter++;
      name = `${original}_${counter}`;
    }
    seen.add(name.toLowerCase());
    return [
      `${name}${skipInlineScriptSuffix ? "." : ".inline_script."}`,
      languageExtension(language, defaultTs),
    ];
  };
}

type Module = { id?: unknown; summary?: unknown; value?: Record<string, unknown> };

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function asModules(value: unknown): Module[] {
  return Array.isArray(value) ? (value.filter(isObject) as Module[]) : [];
}

/**
 * Every step of `modules` in wmill's extraction order: depth first, loops' bodies, branchall's
 * branches, branchone's branches then its default.
 */
function walk(modules: Module[], visit: (module: Module) => void): void {
  for (const m of modules) {
    const value = m.value;
    if (!isObject(value)) continue;
    switch (value.type) {
      case "rawscript":
        visit(m);
        break;
      case "forloopflow":
      case "whileloopflow":
        walk(asModules(value.modules), visit);
        break;
      case "branchall":
        for (const branch of Array.isArray(value.branches) ? value.branches : [])
          if (isObject(branch)) walk(asModules(branch.modules), visit);
        break;
      case "branchone":
        for (const branch of Array.isArray(value.branches) ? value.branches : [])
          if (isObject(branch)) walk(asModules(branch.modules), visit);
        walk(asModules(value.default), visit);
        break;
    }
  }
}

/** The top-level module lists wmill extracts from: the steps, then the failure and preprocessor steps. */
function roots(value: Record<string, unknown>): Module[][] {
  const lists = [asModules(value.modules)];
  if (isObject(value.failure_module)) lists.push([value.failure_module as Module]);
  if (isObject(value.preprocessor_module)) lists.push([value.preprocessor_module as Module]);
  return lists;
}

/** The `flow.yaml` document of a flow (the inline code replaced by `!inline` references). */
export function flowDocument(flow: SyncFlow, defaultTs: "bun" | "deno", nonDotted: boolean) {
  const value = structuredClone(flow.value) as Record<string, unknown>;
  const files = new Map<string, string>();
  const assign = pathAssigner(defaultTs, nonDotted);
  for (const list of roots(value)) {
    walk(list, (m) => {
      const raw = m.value!;
      const id = typeof m.id === "string" ? m.id : "";
      const summary = typeof m.summary === "string" ? m.summary : id;
      const language = typeof raw.language === "string" ? raw.language : "";
      const [base, ext] = assign(summary, language);
      const file = base + ext;
      files.set(file, typeof raw.content === "string" ? raw.content : "");
      raw.content = INLINE_PREFIX + file;
      if (typeof raw.lock === "string" && raw.lock !== "") {
        files.set(base + "lock", raw.lock);
        raw.lock = INLINE_PREFIX + base + "lock";
      }
    });
  }
  const document: JsonObject = {
    summary: flow.summary,
    description: flow.description,
    value: value as JsonObject,
  };
  if (flow.schema !== null) document.schema = flow.schema;
  // wmill compares the whole document: a field the repository had must come back, and only then.
  if (typeof flow.ws_error_handler_muted === "boolean")
    document.ws_error_handler_muted = flow.ws_error_handler_muted;
  return { document, files };
}

/** The document a flow travels as in the workspace tarball (`<path>.flow.json`): code inline. */
export function flowTarballDocument(flow: SyncFlow): JsonObject {
  const document: JsonObject = { summary: flow.summary, description: flow.description, value: flow.value };
  if (flow.schema !== null) document.schema = flow.schema;
  if (typeof flow.ws_error_handler_muted === "boolean")
    document.ws_error_handler_muted = flow.ws_error_handler_muted;
  return document;
}

/**
 * Reads one flow folder: its `flow.yaml` and the `!inline` files it names (a missing code file is
 * an error; a missing lock file reads as an empty lock, as `wmill flow push` does).
 */
export function readFlowFolder(
  path: string,
  folder: string,
  files: Map<string, string>,
  errors: SyncError[],
): SyncFlow | null {
  const file = `${folder}/${FLOW_METADATA_FILE}`;
  const text = files.get(file);
  if (text === undefined) {
    errors.push({ file: folder, message: `flow folder without ${FLOW_METADATA_FILE}` });
    return null;
  }
  let doc: unknown;
  try {
    doc = fromYaml(text);
  } catch (error) {
    errors.push({ file, message: `malformed YAML: ${(error as Error).message.split("\n")[0]}` });
    return null;
  }
  if (!isObject(doc)) {
    errors.push({ file, message: "must be a YAML map" });
    return null;
  }
  const before = errors.length;
  const str = (field: string): string => {
    const v = doc[field];
    if (v === undefined || v === null) return "";
    if (typeof v === "string") return v;
    errors.push({ file, field, message: `${field} must be a string` });
    return "";
  };
  const summary = str("summary");
  const description = str("description");
  let schema: JsonObject | null = null;
  if (doc.schema !== undefined && doc.schema !== null) {
    if (isObject(doc.schema)) schema = doc.schema as JsonObject;
    else errors.push({ file, field: "schema", message: "schema must be a map" });
  }
  if (!isObject(doc.value)) {
    errors.push({ file, field: "value", message: "value must be a map with the flow's modules" });
    return null;
  }
  const value = structuredClone(doc.value) as Record<string, unknown>;
  if (!Array.isArray(value.modules)) {
    errors.push({ file, field: "value.modules", message: "value.modules must be a list of steps" });
  }
  for (const list of roots(value)) {
    walk(list, (m) => {
      const raw = m.value!;
      const id = typeof m.id === "string" ? m.id : "?";
      if (typeof raw.content === "string" && raw.content.startsWith("!inline")) {
        const ref = raw.content.split(" ")[1] ?? "";
        // wmill's fallback: `<id>.<extension of the reference>`.
        const fallback = id + "." + ref.split(".").slice(1).join(".");
        const code = files.get(`${folder}/${ref}`) ?? files.get(`${folder}/${fallback}`);
        if (code === undefined) {
          errors.push({
            file,
            field: `step ${id}`,
            message: `step ${id}: content refers to ${folder}/${ref}, which does not exist`,
          });
        } else raw.content = code;
      }
      if (typeof raw.lock === "string" && raw.lock.trimStart().startsWith(INLINE_PREFIX)) {
        const ref = raw.lock.trim().split(" ")[1] ?? "";
        raw.lock = files.get(`${folder}/${ref}`) ?? "";
      }
    });
  }
  if (errors.length > before) return null;
  return {
    path,
    summary,
    description,
    value: value as JsonObject,
    schema,
    ...(typeof doc.ws_error_handler_muted === "boolean"
      ? { ws_error_handler_muted: doc.ws_error_handler_muted }
      : {}),
  };
}
