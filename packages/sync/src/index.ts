// @millrace/sync: one serializer, both directions, between a workspace and files in the layout the
// Windmill CLI 1.819 reads and writes in `wmill sync pull/push` (checked against
// node_modules/windmill-cli/esm/main.js; see layout.ts for where each rule comes from):
//
//   wmill.yaml                         settings (kept verbatim; `defaultTs` picks the `.ts` language)
//   f/<folder>/folder.meta.yaml        folder: summary, display_name, owners, extra_perms
//   <path>.<ext>                       script code (.sh bash, .py python3, .ts bun, .deno.ts deno,
//                                      .pg.sql postgresql; with defaultTs: deno, .bun.ts / .ts)
//   <path>.script.yaml                 script metadata; `lock: '!inline <path>.script.lock'`
//   <path>.script.lock                 the script's lock, when it has a non-empty one
//   <path>.resource.yaml               value, description, resource_type
//   <name>.resource-type.yaml          at the root: schema (verbatim, `$schema` included), description
//   <path>.variable.yaml               value (secrets: the `enc:v2:…` ciphertext), is_secret, description
//   <path>.schedule.yaml               schedule, timezone, script_path, is_flow, args, enabled, summary
//   groups/<name>.group.yaml           summary, admins, members (as u/<username>)
//   settings.yaml                      the workspace's settings in wmill's grouped format: name,
//                                      color, large_file_storage, operator_settings (settings.ts)
//
// YAML is written with wmill's own options (its key order, single quotes), so a repository written
// by `wmill sync pull` and one written here are byte-identical for the same items (tested by running
// the real CLI: `sync pull` of `snapshotToTarballFiles(s)` writes exactly `snapshotToFiles(s)`).
//
// `filesToSnapshot` checks the whole repository and returns every problem at once. It ignores what
// wmill ignores (dot files and folders, node_modules, root files such as README.md and
// wmill-lock.yaml, top-level folders wmill never reads, files with extensions wmill never reads),
// reports in `skipped` the kinds wmill syncs that Millrace does not read yet (flows, apps,
// triggers, users, JSON-format metadata), and reports anything else it cannot place as
// an error. Script metadata keys Millrace has no use for (e.g. `dedicated_worker`, `envs`) are
// dropped. Flows: `<path>__flow/` (or `.flow/`) with `flow.yaml` and the inline step files (flows.ts).
export {
  DEFAULT_WMILL_YAML,
  emptySnapshot,
  normalizeSnapshot,
  SYNC_LANGUAGES,
  type Json,
  type JsonObject,
  type SyncError,
  type SyncFolder,
  type SyncGroup,
  type SyncLanguage,
  type SyncResource,
  type SyncResourceType,
  type SyncSchedule,
  type SyncScript,
  type SyncVariable,
  VARIABLE_FILE_FIELDS,
  type WorkspaceSnapshot,
} from "./model.ts";
export { snapshotToFiles, snapshotToTarballFiles } from "./serialize.ts";
export {
  flowDocument,
  nonDottedPathsOf,
  readFlowFolder,
  splitFlowFile,
  FLOW_METADATA_FILE,
  type SyncFlow,
} from "./flows.ts";
export { filesToSnapshot, formatSyncErrors, type ParseResult, type SkippedFile } from "./parse.ts";
export { codeExtension, fromYaml, pathProblem, toYaml, YAML_OPTIONS } from "./layout.ts";

/** File suffixes of the Windmill CLI's sync layout; code files: see `codeExtension`. */
export { SUFFIX as SYNC_SUFFIXES } from "./layout.ts";
export { tarArchive } from "./tar.ts";
export {
  SETTINGS_FILE,
  settingsDocument,
  settingsToYaml,
  TARBALL_SETTINGS_FILE,
  type SyncSettings,
} from "./settings.ts";
export {
  INSTANCE_META_FILE,
  instanceMetaToYaml,
  isSyncManagedFile,
  parseInstanceMeta,
  parseWorkspaceMeta,
  WORKSPACE_META_FILE,
  workspaceMetaToYaml,
  type InstanceMeta,
  type SyncMember,
  type SyncWebhookToken,
  type WorkspaceMeta,
} from "./millrace-meta.ts";
