// Files → workspace. Checks the whole repository first and reports every bad file and field in one
// list; callers apply nothing when the list is not empty.
import {
  defaultTsOf,
  fromYaml,
  GROUPS_DIR,
  INLINE_PREFIX,
  pathProblem,
  SEGMENT,
  SUFFIX,
  WMILL_SCRIPT_EXTENSIONS,
} from "./layout.ts";
import { readFlowFolder, splitFlowFile } from "./flows.ts";
import { readSettingsDocument, SETTINGS_FILE } from "./settings.ts";
import {
  DEFAULT_WMILL_YAML,
  normalizeSnapshot,
  SYNC_LANGUAGES,
  VARIABLE_FILE_FIELDS,
  type Json,
  type JsonObject,
  type SyncError,
  type SyncLanguage,
  type SyncScript,
  type WorkspaceSnapshot,
} from "./model.ts";
import type { SkippedFile } from "./types.ts";

export type { SkippedFile } from "./types.ts";

export interface ParseResult {
  /** Normalised (see `normalizeSnapshot`); only meaningful when `errors` is empty. */
  snapshot: WorkspaceSnapshot;
  /** Every problem, sorted by file then field. Empty when the repository can be applied. */
  errors: SyncError[];
  skipped: SkippedFile[];
}

/** Top-level folders wmill syncs but Millrace does not read yet (`isWhitelisted` in sync.ts). */
const UNSUPPORTED_DIRS: Record<string, string> = {
  g: "group-owned g/ paths are not supported",
  users: "users are not synced by Millrace yet",
  dependencies: "workspace dependencies are not supported yet",
  locks: "shared lockfiles (dedupeLockfiles) are not supported yet",
  migrations: "data table migrations are not supported",
  ui: "ui/ is ignored",
};

/** Folder suffixes of multi-file items (`getFolderSuffix` / `getModuleFolderSuffix`). */
const UNSUPPORTED_FOLDERS: [RegExp, string][] = [
  [/(__raw_app|\.raw_app)\//, "raw apps are not supported"],
  [/(__app|\.app)\//, "apps are not supported"],
  [/(__mod|__dbt)\//, "multi-file scripts are not supported yet"],
  [/\.fileset\//, "fileset resources are not supported yet"],
];

/** Other per-kind suffixes wmill knows (`getTypeStrFromPath`), which Millrace does not read yet. */
const UNSUPPORTED_KINDS =
  /\.(http_trigger|websocket_trigger|kafka_trigger|nats_trigger|postgres_trigger|mqtt_trigger|amqp_trigger|sqs_trigger|gcp_trigger|azure_trigger|email_trigger|\w+_native_trigger|user|app)\.(yaml|json)$/;
const JSON_KINDS = /\.(script|resource|resource-type|variable|schedule|group)\.json$|folder\.meta\.json$/;

/** The extensions `elementsToMap` considers at all; any other file (README.md, …) is ignored. */
const WMILL_FILE_EXTS = new Set([
  "json",
  "yaml",
  "go",
  "sh",
  "ts",
  "py",
  "sql",
  "gql",
  "ps1",
  "php",
  "js",
  "lock",
  "rs",
  "cs",
  "yml",
  "nu",
  "java",
  "rb",
  "r",
]);

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  return `a ${typeof value}`;
}

/** Reads the fields of one YAML document, recording each bad field. */
class Fields {
  readonly doc: Record<string, unknown>;
  private readonly file: string;
  private readonly errors: SyncError[];
  constructor(file: string, doc: Record<string, unknown>, errors: SyncError[]) {
    this.file = file;
    this.doc = doc;
    this.errors = errors;
  }

  private bad(field: string, expected: string): void {
    this.errors.push({
      file: this.file,
      field,
      message: `${field} must be ${expected}, got ${typeName(this.doc[field])}`,
    });
  }

  private present(field: string): boolean {
    return this.doc[field] !== undefined;
  }

  required(field: string): boolean {
    if (this.present(field)) return true;
    this.errors.push({ file: this.file, field, message: `${field} is required` });
    return false;
  }

  string(field: string, fallback: string): string {
    const value = this.doc[field];
    if (value === undefined || value === null) return fallback;
    if (typeof value === "string") return value;
    this.bad(field, "a string");
    return fallback;
  }

  nullableString(field: string): string | null {
    const value = this.doc[field];
    if (value === undefined || value === null) return null;
    if (typeof value === "string") return value;
    this.bad(field, "a string");
    return null;
  }

  boolean(field: string, fallback: boolean): boolean {
    const value = this.doc[field];
    if (value === undefined) return fallback;
    if (typeof value === "boolean") return value;
    this.bad(field, "true or false");
    return fallback;
  }

  integer(field: string): number | null {
    const value = this.doc[field];
    if (value === undefined || value === null) return null;
    if (typeof value === "number" && Number.isSafeInteger(value)) return value;
    this.bad(field, "an integer");
    return null;
  }

  object(field: string): JsonObject | null {
    const value = this.doc[field];
    if (value === undefined || value === null) return null;
    if (typeof value === "object" && !Array.isArray(value)) return value as JsonObject;
    this.bad(field, "a map");
    return null;
  }

  stringList(field: string, check?: (item: string) => string | null): string[] {
    const value = this.doc[field];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
      this.bad(field, "a list of strings");
      return [];
    }
    for (const item of value as string[]) {
      const problem = check?.(item);
      if (problem) this.errors.push({ file: this.file, field, message: `${field}: ${problem}` });
    }
    return value as string[];
  }

  booleanRecord(field: string, check?: (key: string) => string | null): Record<string, boolean> {
    const value = this.doc[field];
    if (value === undefined || value === null) return {};
    if (
      typeof value !== "object" ||
      Array.isArray(value) ||
      Object.values(value).some((v) => typeof v !== "boolean")
    ) {
      this.bad(field, "a map of true/false");
      return {};
    }
    for (const key of Object.keys(value)) {
      const problem = check?.(key);
      if (problem) this.errors.push({ file: this.file, field, message: `${field}: ${problem}` });
    }
    return value as Record<string, boolean>;
  }
}

const principalProblem = (p: string) =>
  /^[ug]\/[A-Za-z0-9_.@+-]+$/.test(p) ? null : `"${p}" must be u/<user> or g/<group>`;
const userProblem = (p: string) => (/^u\/[A-Za-z0-9_.@+-]+$/.test(p) ? null : `"${p}" must be u/<username>`);
const nameProblem = (what: string, name: string) =>
  SEGMENT.test(name) ? null : `${what} "${name}" may only contain letters, digits, _ and -`;

/**
 * Reads a repository (path → text, `/`-separated, relative to its root) written by `wmill sync pull`
 * or by `snapshotToFiles`.
 *
 * Ignored, as wmill ignores them: anything under a folder or file whose name starts with `.` or under
 * `node_modules`; files at the root other than `*.resource-type.yaml`, `settings.yaml` (the
 * workspace's settings, settings.ts) and `wmill.yaml` (README.md,
 * wmill-lock.yaml, AGENTS.md, …); top-level folders other than f/, u/, groups/ and the ones listed
 * in UNSUPPORTED_DIRS; and files under f/ u/ groups/ whose extension wmill never reads (.md, .txt,
 * images, …). Reported in `skipped`: kinds wmill syncs that Millrace does not read yet (apps,
 * triggers, users, JSON-format metadata, …). Everything else that is not understood is an error.
 */
export function filesToSnapshot(files: Map<string, string>): ParseResult {
  const errors: SyncError[] = [];
  const skipped: SkippedFile[] = [];
  const snapshot: WorkspaceSnapshot = {
    wmillYaml: files.get(SUFFIX.settings) ?? DEFAULT_WMILL_YAML,
    scripts: [],
    folders: [],
    groups: [],
    resources: [],
    resourceTypes: [],
    variables: [],
    schedules: [],
    flows: [],
  };

  const parseDoc = (file: string): Fields | null => {
    let doc: unknown;
    try {
      doc = fromYaml(files.get(file) ?? "");
    } catch (error) {
      const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
      errors.push({ file, message: `malformed YAML: ${message}` });
      return null;
    }
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
      errors.push({ file, message: `must be a YAML map, got ${typeName(doc)}` });
      return null;
    }
    return new Fields(file, doc as Record<string, unknown>, errors);
  };

  if (files.has(SUFFIX.settings)) {
    const settings = parseDoc(SUFFIX.settings);
    const defaultTs = settings?.doc.defaultTs;
    if (settings && defaultTs !== undefined && defaultTs !== "bun" && defaultTs !== "deno") {
      errors.push({ file: SUFFIX.settings, field: "defaultTs", message: "defaultTs must be bun or deno" });
    }
  }
  const defaultTs = defaultTsOf(snapshot.wmillYaml);

  const scriptMetas = new Map<string, string>(); // base path → metadata file
  const scriptCodes = new Map<string, { file: string; language: string }[]>();
  const lockFiles = new Set<string>();
  const usedLockFiles = new Set<string>();
  const flowFolders = new Map<string, string>(); // folder → flow path

  for (const file of [...files.keys()].sort()) {
    // A Windows path pushed as it is: read as one root file it would be ignored, while the push
    // reported it as added. Refused, naming it.
    if (file.includes("\\")) {
      errors.push({
        file,
        message: `backslashes are not folder separators in a repository: name it ${file.replaceAll("\\", "/")}`,
      });
      continue;
    }
    const segments = file.split("/");
    const name = segments[segments.length - 1] ?? "";
    if (segments.some((s) => s.startsWith(".") || s === "node_modules" || s === "")) continue;
    if (file === SUFFIX.settings) continue;
    const top = segments[0] ?? "";

    if (segments.length === 1) {
      if (name.endsWith(SUFFIX.resourceType)) {
        readResourceType(file, name.slice(0, -SUFFIX.resourceType.length));
      } else if (name === SETTINGS_FILE) {
        const fields = parseDoc(file);
        if (fields) snapshot.settings = readSettingsDocument(fields.doc, errors, skipped);
      } else if (/\.resource-type\.json$|^settings(\.[^.]+)?\.(yaml|json)$|^encryption_key/.test(name)) {
        skipped.push({ file, reason: skipReason(file) });
      }
      continue; // any other root file is not a wmill file
    }
    if (UNSUPPORTED_DIRS[top] !== undefined) {
      skipped.push({ file, reason: UNSUPPORTED_DIRS[top] });
      continue;
    }
    if (top !== "f" && top !== "u" && top !== GROUPS_DIR) continue; // wmill never reads them
    const ext = name.includes(".") ? (name.split(".").pop() ?? "") : "";
    if (!WMILL_FILE_EXTS.has(ext)) continue;
    const flowFile = splitFlowFile(file);
    if (flowFile && !/(__raw_app|\.raw_app|__app|\.app)\//.test(flowFile.path + "/")) {
      if (flowFile.rest === "flow.json") skipped.push({ file, reason: skipReason(file) });
      else flowFolders.set(flowFile.folder, flowFile.path);
      continue;
    }
    const unsupported = UNSUPPORTED_FOLDERS.find(([pattern]) => pattern.test(file));
    if (unsupported) {
      skipped.push({ file, reason: unsupported[1] });
      continue;
    }
    if (UNSUPPORTED_KINDS.test(file) || JSON_KINDS.test(file) || /\.resource\.file\./.test(file)) {
      skipped.push({ file, reason: skipReason(file) });
      continue;
    }

    if (top === GROUPS_DIR) {
      if (segments.length === 2 && name.endsWith(SUFFIX.group)) {
        readGroup(file, name.slice(0, -SUFFIX.group.length));
      } else {
        errors.push({ file, message: "unknown kind of file: groups/ holds only <name>.group.yaml" });
      }
      continue;
    }

    if (name === SUFFIX.folderMeta) {
      if (top === "f" && segments.length === 3) readFolder(file, segments[1] ?? "");
      else errors.push({ file, message: "folder.meta.yaml belongs at f/<folder>/folder.meta.yaml" });
      continue;
    }
    if (file.endsWith(SUFFIX.scriptMeta)) {
      scriptMetas.set(file.slice(0, -SUFFIX.scriptMeta.length), file);
      continue;
    }
    if (file.endsWith(SUFFIX.scriptLock)) {
      lockFiles.add(file);
      continue;
    }
    const itemKinds: [string, (file: string, path: string) => void][] = [
      [SUFFIX.resource, readResource],
      [SUFFIX.variable, readVariable],
      [SUFFIX.schedule, readSchedule],
    ];
    const kind = itemKinds.find(([suffix]) => file.endsWith(suffix));
    if (kind) {
      const path = file.slice(0, -kind[0].length);
      const problem = pathProblem(path);
      if (problem) errors.push({ file, field: "path", message: `invalid path: ${problem}` });
      kind[1](file, path);
      continue;
    }
    const code = WMILL_SCRIPT_EXTENSIONS.find(([suffix]) => file.endsWith(suffix));
    if (code) {
      const base = file.slice(0, -code[0].length);
      const language =
        code[1] !== "<defaultTs>" ? code[1] : defaultTs === "deno" && code[0] === ".ts" ? "deno" : "bun";
      scriptCodes.set(base, [...(scriptCodes.get(base) ?? []), { file, language }]);
      continue;
    }
    errors.push({
      file,
      message:
        "unknown kind of file: expected a script (code file + .script.yaml), .resource.yaml, " +
        ".variable.yaml, .schedule.yaml or folder.meta.yaml",
    });
  }

  for (const base of [...new Set([...scriptMetas.keys(), ...scriptCodes.keys()])].sort()) {
    readScript(base, scriptMetas.get(base), scriptCodes.get(base) ?? []);
  }
  const flowPaths = new Map<string, string>(); // flow path → its folder
  for (const [folder, path] of [...flowFolders].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const problem = pathProblem(path);
    if (problem) {
      errors.push({ file: folder, field: "path", message: `invalid path: ${problem}` });
      continue;
    }
    const other = flowPaths.get(path);
    if (other !== undefined) {
      errors.push({
        file: folder,
        message: `two folders for the flow ${path}: ${other} and ${folder}; keep one`,
      });
      continue;
    }
    flowPaths.set(path, folder);
    const flow = readFlowFolder(path, folder, files, errors);
    if (flow) snapshot.flows.push(flow);
  }
  for (const lock of [...lockFiles].sort()) {
    if (!usedLockFiles.has(lock)) {
      errors.push({
        file: lock,
        message: `lock file that no script uses (its ${lock.slice(0, -".lock".length)}.yaml has no lock: '!inline ${lock}')`,
      });
    }
  }

  errors.sort((a, b) =>
    a.file !== b.file ? (a.file < b.file ? -1 : 1) : (a.field ?? "") < (b.field ?? "") ? -1 : 1,
  );
  return { snapshot: normalizeSnapshot(snapshot), errors, skipped };

  function readScript(
    base: string,
    metaFile: string | undefined,
    codes: { file: string; language: string }[],
  ) {
    if (codes.length === 0) {
      errors.push({
        file: metaFile ?? base,
        message: `script metadata without a code file (e.g. ${base}.ts, ${base}.py, ${base}.sh)`,
      });
    }
    if (codes.length > 1) {
      for (const code of codes) {
        errors.push({
          file: code.file,
          message: `several code files for one script: ${codes.map((c) => c.file).join(", ")}; keep exactly one`,
        });
      }
    }
    if (metaFile === undefined) {
      for (const code of codes) {
        errors.push({
          file: code.file,
          message: `code file without metadata: ${base}${SUFFIX.scriptMeta} is missing`,
        });
      }
    }
    const problem = pathProblem(base);
    const errorFile = metaFile ?? codes[0]?.file ?? base;
    if (problem) errors.push({ file: errorFile, field: "path", message: `invalid path: ${problem}` });
    const code = codes[0];
    if (code && codes.length === 1 && !(SYNC_LANGUAGES as readonly string[]).includes(code.language)) {
      errors.push({
        file: code.file,
        field: "language",
        message: `language ${code.language} is not supported by Millrace (supported: ${SYNC_LANGUAGES.join(", ")})`,
      });
    }
    if (metaFile === undefined) return;
    const fields = parseDoc(metaFile);
    if (!fields) return;
    const kind = fields.doc.kind;
    if (kind !== undefined && kind !== "script") {
      errors.push({
        file: metaFile,
        field: "kind",
        message: `kind must be script, got ${JSON.stringify(kind)}`,
      });
    }
    let lock: string | null = fields.nullableString("lock");
    if (lock !== null && lock.startsWith(INLINE_PREFIX)) {
      const lockFile = lock.slice(INLINE_PREFIX.length).trim();
      const text = files.get(lockFile);
      if (text === undefined) {
        errors.push({
          file: metaFile,
          field: "lock",
          message: `lock refers to ${lockFile}, which does not exist`,
        });
        lock = null;
      } else {
        usedLockFiles.add(lockFile);
        lock = text;
      }
    }
    const script: SyncScript = {
      path: base,
      language: (code?.language ?? "bun") as SyncLanguage,
      content: code ? (files.get(code.file) ?? "") : "",
      summary: fields.string("summary", ""),
      description: fields.string("description", ""),
      schema: fields.object("schema") ?? {},
      lock,
      tag: fields.nullableString("tag"),
      timeout: fields.integer("timeout"),
      priority: fields.integer("priority"),
      concurrent_limit: fields.integer("concurrent_limit"),
      concurrency_time_window_s: fields.integer("concurrency_time_window_s"),
      concurrency_key: fields.nullableString("concurrency_key"),
      retry: fields.object("retry"),
      memory_limit_mb: fields.integer("memory_limit_mb"),
    };
    snapshot.scripts.push(script);
  }

  function readFolder(file: string, name: string) {
    const problem = nameProblem("folder", name);
    if (problem) errors.push({ file, field: "name", message: problem });
    const fields = parseDoc(file);
    if (!fields) return;
    snapshot.folders.push({
      name,
      display_name: fields.string("display_name", name),
      summary: fields.nullableString("summary"),
      owners: fields.stringList("owners", principalProblem),
      extra_perms: fields.booleanRecord("extra_perms", principalProblem),
    });
  }

  function readGroup(file: string, name: string) {
    const problem = nameProblem("group", name);
    if (problem) errors.push({ file, field: "name", message: problem });
    const fields = parseDoc(file);
    if (!fields) return;
    const strip = (list: string[]) => list.map((p) => (p.startsWith("u/") ? p.slice(2) : p));
    const admins = strip(fields.stringList("admins", userProblem));
    const members = strip(fields.stringList("members", userProblem));
    snapshot.groups.push({
      name,
      summary: fields.nullableString("summary"),
      members: [...members, ...admins],
      admins,
    });
  }

  function readResource(file: string, path: string) {
    const fields = parseDoc(file);
    if (!fields) return;
    const resourceType = fields.required("resource_type") ? fields.string("resource_type", "") : "";
    if (fields.doc.resource_type === "") {
      errors.push({ file, field: "resource_type", message: "resource_type must not be empty" });
    }
    fields.required("value");
    snapshot.resources.push({
      path,
      resource_type: resourceType,
      value: (fields.doc.value ?? null) as Json,
      description: fields.nullableString("description"),
    });
  }

  function readResourceType(file: string, name: string) {
    const problem = SEGMENT.test(name)
      ? null
      : `resource type name "${name}" may only contain letters, digits, _ and -`;
    if (problem) errors.push({ file, field: "name", message: problem });
    const fields = parseDoc(file);
    if (!fields) return;
    fields.required("schema");
    snapshot.resourceTypes.push({
      name,
      schema: fields.object("schema") ?? {},
      description: fields.string("description", ""),
    });
  }

  function readVariable(file: string, path: string) {
    const fields = parseDoc(file);
    if (!fields) return;
    fields.required("value");
    snapshot.variables.push({
      path,
      value: fields.string("value", ""),
      is_secret: fields.boolean("is_secret", false),
      description: fields.string("description", ""),
    });
    const fileFields = variableFileFields(file, fields.doc);
    if (fileFields) snapshot.variables[snapshot.variables.length - 1]!.file_fields = fileFields;
  }

  /** Windmill's account/is_oauth/is_expired, kept as the file has them (scalars only). */
  function variableFileFields(file: string, doc: Record<string, unknown>): JsonObject | null {
    const kept: JsonObject = {};
    for (const key of VARIABLE_FILE_FIELDS) {
      if (!(key in doc)) continue;
      const value = doc[key];
      if (value === null || ["string", "number", "boolean"].includes(typeof value)) kept[key] = value as Json;
      else
        errors.push({ file, field: key, message: `${key} must be null, a string, a number or true/false` });
    }
    return Object.keys(kept).length > 0 ? kept : null;
  }

  function readSchedule(file: string, path: string) {
    const fields = parseDoc(file);
    if (!fields) return;
    fields.required("schedule");
    fields.required("script_path");
    const scriptPath = fields.string("script_path", "");
    if (typeof fields.doc.script_path === "string") {
      const problem = pathProblem(scriptPath);
      if (problem) errors.push({ file, field: "script_path", message: `invalid script_path: ${problem}` });
    }
    const isFlow = fields.boolean("is_flow", false);
    const schedule = fields.string("schedule", "");
    if (typeof fields.doc.schedule === "string" && schedule.trim().split(/\s+/).length < 5) {
      errors.push({
        file,
        field: "schedule",
        message: `schedule must be a cron expression, got "${schedule}"`,
      });
    }
    snapshot.schedules.push({
      path,
      schedule,
      timezone: fields.string("timezone", "UTC"),
      script_path: scriptPath,
      is_flow: isFlow,
      args: fields.object("args") ?? {},
      enabled: fields.boolean("enabled", true),
      summary: fields.nullableString("summary"),
    });
  }
}

function skipReason(file: string): string {
  if (/\.json$/.test(file)) return "JSON-format metadata (wmill --json) is not supported; use YAML";
  if (/_trigger\.yaml$/.test(file)) return "triggers are not supported yet";
  if (/\.user\.yaml$/.test(file)) return "users are not synced by Millrace yet";
  if (/\.app\.yaml$/.test(file)) return "apps are not supported";
  if (/\.resource\.file\./.test(file)) return "file resources are not supported yet";
  if (/^settings/.test(file))
    return "workspace settings are read from settings.yaml only (not JSON nor per-workspace files)";
  if (/^encryption_key/.test(file)) return "the workspace key travels separately";
  return "not supported by Millrace yet";
}

/** One line per problem, `file (field): message`, for logs and CLI output. */
export function formatSyncErrors(errors: SyncError[]): string {
  return errors.map((e) => `${e.file}${e.field ? ` (${e.field})` : ""}: ${e.message}`).join("\n");
}
