import type { SyncFlow } from "./flows.ts";
import { normalizeSettings, type SyncSettings } from "./settings.ts";
import type { Json, JsonObject, SyncLanguage } from "./types.ts";

// The plain-data model of a workspace as it lives in git. No database types: callers (core, the
// tarball endpoint, restore, the CLI) convert their rows to and from these shapes.

export { SYNC_LANGUAGES, type Json, type JsonObject, type SyncError, type SyncLanguage } from "./types.ts";

/** The latest version of one script. Field names follow Windmill's `.script.yaml`. */
export interface SyncScript {
  /** `u/<user>/<name>` or `f/<folder>/<name>`. */
  path: string;
  language: SyncLanguage;
  content: string;
  summary: string;
  description: string;
  /** The arguments' JSON schema. */
  schema: JsonObject;
  /** The dependency lock; null = none (no `lock` key), "" = an empty lock (`lock: ''`). */
  lock: string | null;
  tag: string | null;
  /** Seconds. */
  timeout: number | null;
  priority: number | null;
  concurrent_limit: number | null;
  concurrency_time_window_s: number | null;
  concurrency_key: string | null;
  /** Windmill's retry shape (`{constant: …}` or `{exponential: …}`); a Millrace extension key. */
  retry: JsonObject | null;
  /** A Millrace extension key. */
  memory_limit_mb: number | null;
}

export interface SyncFolder {
  name: string;
  /** Windmill's `display_name`; Millrace shows the name when it has none. */
  display_name: string;
  summary: string | null;
  /** `u/<user>` or `g/<group>`, in the order the folder was given them (Windmill's list). */
  owners: string[];
  /**
   * `u/<user>` or `g/<group>` → true (write) / false (read). Owners may be listed too (Windmill
   * repositories hold both forms); an owner is an owner whatever its entry here says.
   */
  extra_perms: Record<string, boolean>;
}

export interface SyncGroup {
  name: string;
  summary: string | null;
  /** Every member's username (without `u/`), sorted; admins are members too. */
  members: string[];
  /**
   * Members that administer the group (Windmill's `admins`, from its extra_perms), sorted. The file
   * lists them under `admins` and the others under `members`, as `u/<name>`, like wmill does.
   */
  admins: string[];
}

export interface SyncResource {
  path: string;
  resource_type: string;
  value: Json;
  /** null: none given (Windmill's files say `description: null`), kept apart from "". */
  description: string | null;
}

export interface SyncResourceType {
  name: string;
  /** JSON schema, kept verbatim (including a `$schema` key when it has one). */
  schema: JsonObject;
  description: string;
}

export interface SyncVariable {
  path: string;
  /** Plain text, or when `is_secret` the `enc:v2:…` (or older `enc:v1:…`) ciphertext as Millrace stores it. */
  value: string;
  is_secret: boolean;
  description: string;
  /**
   * What the file held of Windmill's variable keys Millrace has no use for
   * (VARIABLE_FILE_FIELDS), written back as they were; absent/null: none.
   */
  file_fields?: JsonObject | null;
}

/** Keys of Windmill's variable files that Millrace keeps only to write them back (no OAuth accounts here). */
export const VARIABLE_FILE_FIELDS = ["account", "is_oauth", "is_expired"] as const;

export interface SyncSchedule {
  path: string;
  /** Cron with seconds (6 fields). */
  schedule: string;
  timezone: string;
  script_path: string;
  /** True: `script_path` is a flow's path. */
  is_flow: boolean;
  args: JsonObject;
  enabled: boolean;
  summary: string | null;
}

export interface WorkspaceSnapshot {
  /** The raw `wmill.yaml` (kept byte for byte; its `defaultTs` picks the `.ts` language). */
  wmillYaml: string;
  scripts: SyncScript[];
  folders: SyncFolder[];
  groups: SyncGroup[];
  resources: SyncResource[];
  resourceTypes: SyncResourceType[];
  variables: SyncVariable[];
  schedules: SyncSchedule[];
  /** `<path>__flow/flow.yaml` (or `<path>.flow/`) with the inline step files beside it. */
  flows: SyncFlow[];
  /** `settings.yaml` (settings.ts); absent: the repository has none (nothing to write or apply). */
  settings?: SyncSettings;
}

/** The `wmill.yaml` Millrace writes when the snapshot has none: everything it exports is synced. */
export const DEFAULT_WMILL_YAML = `# wmill.yaml written by Millrace: \`wmill sync pull/push\` read this repository as is.
defaultTs: bun
includes:
  - f/**
  - u/**
excludes: []
skipVariables: false
skipResources: false
skipResourceTypes: false
skipSecrets: false
skipScripts: false
skipFolders: false
includeSchedules: true
includeGroups: true
nonDottedPaths: true
syncBehavior: v1
`;

export function emptySnapshot(): WorkspaceSnapshot {
  return {
    wmillYaml: DEFAULT_WMILL_YAML,
    scripts: [],
    folders: [],
    groups: [],
    resources: [],
    resourceTypes: [],
    variables: [],
    schedules: [],
    flows: [],
  };
}

function byKey<T>(key: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
}

function sortedRecord<V>(record: Record<string, V>): Record<string, V> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The canonical form of a snapshot: items sorted by path (or name), members/admins sorted and
 * deduplicated, owners deduplicated (in their order). `filesToSnapshot` returns snapshots in this form, so
 * `filesToSnapshot(snapshotToFiles(s)).snapshot` deep-equals `normalizeSnapshot(s)`.
 */
export function normalizeSnapshot(snapshot: WorkspaceSnapshot): WorkspaceSnapshot {
  const uniqueSorted = (list: string[]) => [...new Set(list)].sort();
  return {
    wmillYaml: snapshot.wmillYaml,
    scripts: snapshot.scripts.map((s) => ({ ...s })).sort(byKey((s) => s.path)),
    folders: snapshot.folders
      // Owners keep their order: wmill compares folder.meta.yaml's owners as an ordered list.
      .map((f) => ({ ...f, owners: [...new Set(f.owners)], extra_perms: sortedRecord(f.extra_perms) }))
      .sort(byKey((f) => f.name)),
    groups: snapshot.groups
      .map((g) => ({
        ...g,
        members: uniqueSorted([...g.members, ...g.admins]),
        admins: uniqueSorted(g.admins),
      }))
      .sort(byKey((g) => g.name)),
    resources: snapshot.resources.map((r) => ({ ...r })).sort(byKey((r) => r.path)),
    resourceTypes: snapshot.resourceTypes.map((t) => ({ ...t })).sort(byKey((t) => t.name)),
    variables: snapshot.variables.map((v) => ({ ...v })).sort(byKey((v) => v.path)),
    schedules: snapshot.schedules.map((s) => ({ ...s })).sort(byKey((s) => s.path)),
    flows: (snapshot.flows ?? []).map((f) => ({ ...f })).sort(byKey((f) => f.path)),
    ...(snapshot.settings ? { settings: normalizeSettings(snapshot.settings) } : {}),
  };
}
