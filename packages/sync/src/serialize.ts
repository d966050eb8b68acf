// Workspace → files. Deterministic: the same snapshot gives the same bytes (keys in wmill's order,
// files sorted by path, no timestamps).
import {
  DOTTED_FLOW_SUFFIX,
  FLOW_METADATA_FILE,
  flowDocument,
  flowTarballDocument,
  NON_DOTTED_FLOW_SUFFIX,
  nonDottedPathsOf,
} from "./flows.ts";
import { codeExtension, defaultTsOf, GROUPS_DIR, INLINE_PREFIX, SUFFIX, toYaml } from "./layout.ts";
import {
  normalizeSnapshot,
  type JsonObject,
  type SyncFolder,
  type SyncGroup,
  type SyncResource,
  type SyncResourceType,
  type SyncSchedule,
  type SyncScript,
  type SyncVariable,
  type WorkspaceSnapshot,
} from "./model.ts";
import { SETTINGS_FILE, settingsDocument, settingsToYaml, TARBALL_SETTINGS_FILE } from "./settings.ts";

/** Drops null fields, as Windmill omits unset optional fields from its files. */
function withoutNulls(record: Record<string, unknown>): JsonObject {
  return Object.fromEntries(
    Object.entries(record).filter(([, v]) => v !== null && v !== undefined),
  ) as JsonObject;
}

/** The `.script.yaml` document of a script (the lock as an `!inline` reference to its file). */
export function scriptDocument(script: SyncScript): JsonObject {
  const lock =
    script.lock === null ? null : script.lock === "" ? "" : INLINE_PREFIX + script.path + SUFFIX.scriptLock;
  return withoutNulls({
    summary: script.summary,
    description: script.description,
    lock,
    kind: "script",
    schema: script.schema,
    tag: script.tag,
    timeout: script.timeout,
    priority: script.priority,
    concurrent_limit: script.concurrent_limit,
    concurrency_time_window_s: script.concurrency_time_window_s,
    concurrency_key: script.concurrency_key,
    retry: script.retry,
    memory_limit_mb: script.memory_limit_mb,
  });
}

export function folderDocument(folder: SyncFolder): JsonObject {
  return withoutNulls({
    summary: folder.summary,
    display_name: folder.display_name,
    owners: folder.owners,
    extra_perms: folder.extra_perms,
  });
}

/** wmill's group file: `admins` and the other `members`, each as `u/<username>` (`pushGroup`). */
export function groupDocument(group: SyncGroup): JsonObject {
  const admins = new Set(group.admins);
  return withoutNulls({
    summary: group.summary,
    admins: [...admins].map((name) => "u/" + name),
    members: group.members.filter((name) => !admins.has(name)).map((name) => "u/" + name),
  });
}

export function resourceDocument(resource: SyncResource): JsonObject {
  return { value: resource.value, description: resource.description, resource_type: resource.resource_type };
}

export function resourceTypeDocument(type: SyncResourceType): JsonObject {
  return { schema: type.schema, description: type.description };
}

export function variableDocument(variable: SyncVariable): JsonObject {
  return {
    value: variable.value,
    is_secret: variable.is_secret,
    description: variable.description,
    ...(variable.file_fields ?? {}),
  };
}

export function scheduleDocument(schedule: SyncSchedule): JsonObject {
  return withoutNulls({
    schedule: schedule.schedule,
    timezone: schedule.timezone,
    script_path: schedule.script_path,
    is_flow: schedule.is_flow,
    args: schedule.args,
    enabled: schedule.enabled,
    summary: schedule.summary,
  });
}

/**
 * The repository of a workspace: file path → content, in the layout wmill 1.819 reads and writes.
 * Scripts are `<path><ext>` + `<path>.script.yaml` (+ `<path>.script.lock`), folders
 * `f/<name>/folder.meta.yaml`, groups `groups/<name>.group.yaml`, resource types
 * `<name>.resource-type.yaml` at the root, the other kinds `<path>.<kind>.yaml`, flows
 * `<path>__flow/` (or `<path>.flow/` unless wmill.yaml says `nonDottedPaths: true`) with
 * `flow.yaml` and one file per inline step, plus `wmill.yaml` and, when the snapshot has settings,
 * `settings.yaml` (settings.ts).
 * The map iterates in sorted path order.
 */
export function snapshotToFiles(input: WorkspaceSnapshot): Map<string, string> {
  const snapshot = normalizeSnapshot(input);
  const defaultTs = defaultTsOf(snapshot.wmillYaml);
  const files = new Map<string, string>();
  files.set(SUFFIX.settings, snapshot.wmillYaml);
  if (snapshot.settings) files.set(SETTINGS_FILE, settingsToYaml(snapshot.settings));
  for (const script of snapshot.scripts) {
    files.set(script.path + codeExtension(script.language, defaultTs), script.content);
    files.set(script.path + SUFFIX.scriptMeta, toYaml(scriptDocument(script)));
    if (script.lock !== null && script.lock !== "") files.set(script.path + SUFFIX.scriptLock, script.lock);
  }
  for (const folder of snapshot.folders) {
    files.set(`f/${folder.name}/${SUFFIX.folderMeta}`, toYaml(folderDocument(folder)));
  }
  for (const group of snapshot.groups) {
    files.set(`${GROUPS_DIR}/${group.name}${SUFFIX.group}`, toYaml(groupDocument(group)));
  }
  for (const resource of snapshot.resources) {
    files.set(resource.path + SUFFIX.resource, toYaml(resourceDocument(resource)));
  }
  for (const type of snapshot.resourceTypes) {
    files.set(type.name + SUFFIX.resourceType, toYaml(resourceTypeDocument(type)));
  }
  for (const variable of snapshot.variables) {
    files.set(variable.path + SUFFIX.variable, toYaml(variableDocument(variable)));
  }
  for (const schedule of snapshot.schedules) {
    files.set(schedule.path + SUFFIX.schedule, toYaml(scheduleDocument(schedule)));
  }
  const nonDotted = nonDottedPathsOf(snapshot.wmillYaml);
  for (const flow of snapshot.flows) {
    const folder = flow.path + (nonDotted ? NON_DOTTED_FLOW_SUFFIX : DOTTED_FLOW_SUFFIX);
    const { document, files: inline } = flowDocument(flow, defaultTs, nonDotted);
    for (const [name, text] of inline) files.set(`${folder}/${name}`, text);
    files.set(`${folder}/${FLOW_METADATA_FILE}`, toYaml(document));
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The workspace as the JSON files of Windmill's `GET /workspaces/tarball`, which `wmill sync pull`
 * turns into the files of `snapshotToFiles` (ZipFSElement in src/commands/sync/sync.ts: each
 * `.json` becomes `.yaml` written with wmill's options, and a script's `lock` moves to
 * `<path>.script.lock`). Same paths with `.json`; no `.script.lock` files and no wmill.yaml.
 */
export function snapshotToTarballFiles(
  input: WorkspaceSnapshot,
  options: { defaultTs?: "bun" | "deno" } = {},
): Map<string, string> {
  const snapshot = normalizeSnapshot(input);
  // wmill asks with `default_ts=<its wmill.yaml's defaultTs>` and compares the code files by name:
  // with `deno`, a deno script must come as `<path>.ts` (and a bun one as `<path>.bun.ts`), or every
  // push would see each deno script deleted and added again.
  const defaultTs = options.defaultTs ?? defaultTsOf(snapshot.wmillYaml);
  const files = new Map<string, string>();
  const json = (doc: JsonObject) => JSON.stringify(doc, null, 2);
  // wmill writes it as settings.yaml only with --include-settings (`elementsToMap`).
  if (snapshot.settings) files.set(TARBALL_SETTINGS_FILE, json(settingsDocument(snapshot.settings)));
  for (const script of snapshot.scripts) {
    files.set(script.path + codeExtension(script.language, defaultTs), script.content);
    files.set(
      script.path + ".script.json",
      json({ ...scriptDocument(script), ...withoutNulls({ lock: script.lock }) }),
    );
  }
  for (const folder of snapshot.folders)
    files.set(`f/${folder.name}/folder.meta.json`, json(folderDocument(folder)));
  for (const group of snapshot.groups)
    files.set(`${GROUPS_DIR}/${group.name}.group.json`, json(groupDocument(group)));
  for (const resource of snapshot.resources)
    files.set(resource.path + ".resource.json", json(resourceDocument(resource)));
  for (const type of snapshot.resourceTypes)
    files.set(type.name + ".resource-type.json", json(resourceTypeDocument(type)));
  for (const variable of snapshot.variables)
    files.set(variable.path + ".variable.json", json(variableDocument(variable)));
  for (const schedule of snapshot.schedules)
    files.set(schedule.path + ".schedule.json", json(scheduleDocument(schedule)));
  // wmill turns `<path>.flow.json` into the flow's folder (`transformJsonPathToDir`).
  for (const flow of snapshot.flows) files.set(flow.path + ".flow.json", json(flowTarballDocument(flow)));
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
