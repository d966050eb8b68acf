// `settings.yaml` at the repository's root: the workspace's settings in the "grouped format" that
// wmill 1.819 writes with `sync pull --include-settings` and reads with `sync push
// --include-settings` (`migrateToGroupedFormat` / `pushWorkspaceSettings` in src/core/settings.ts
// of node_modules/windmill-cli/esm/main.js). Millrace writes the settings it has: `name`, `color`
// (when set), `large_file_storage` (when set, as getSettings answers it) and `operator_settings`.
//
// Reading it back: those keys are checked for their shape here (their values are checked by
// packages/core's restore, which knows what a color or a storage must be). Windmill's other
// settings (Slack, webhook, error handler, git_sync, …) may be in a file pulled from Windmill:
// left unset (Windmill writes `mute_critical_alerts: false`, `webhook: ''`, …) they are ignored,
// set they are listed in `skipped` (not applied: Millrace has no such setting). Any other key is
// an error naming it, like any other file or field the parser cannot place.
import { toYaml } from "./layout.ts";
import type { Json, JsonObject, SkippedFile, SyncError } from "./types.ts";

export const SETTINGS_FILE = "settings.yaml";
/** As Windmill's tarball names it (`wmill sync pull` writes it as settings.yaml). */
export const TARBALL_SETTINGS_FILE = "settings.json";

/** The workspace settings a repository carries (see the header). */
export interface SyncSettings {
  name: string;
  /** `#rrggbb`, or null: none. */
  color: string | null;
  /** Windmill's `large_file_storage` (S3Storage, secondary_storage …), or null: none. */
  large_file_storage: JsonObject | null;
  /** Windmill's OperatorSettings (Millrace's are fixed), or null when the file has none. */
  operator_settings: Record<string, boolean> | null;
}

/**
 * Windmill's settings that Millrace does not have (its WorkspaceSettings and the older flat keys
 * migrateToGroupedFormat still reads), with what to call them in a report.
 */
const WINDMILL_ONLY: Record<string, string> = {
  workspace_id: "",
  webhook: "workspace webhook",
  ai_config: "AI assistant",
  git_sync: "git sync from settings.yaml (set it on the Git sync page)",
  default_app: "default app",
  default_scripts: "default scripts",
  mute_critical_alerts: "muting of critical alerts",
  datatable: "data tables",
  ducklake: "DuckLake",
  dbt_warehouses: "dbt warehouses",
  deploy_ui: "deployment UI settings",
  deploy_to: "deployment target",
  auto_invite: "auto-invite",
  auto_invite_enabled: "auto-invite",
  auto_invite_as: "auto-invite",
  auto_invite_mode: "auto-invite",
  error_handler: "workspace error handler",
  error_handler_extra_args: "workspace error handler",
  error_handler_muted_on_cancel: "workspace error handler",
  error_handler_fallback_to_instance_alerts: "workspace error handler",
  success_handler: "workspace success handler",
  success_handler_extra_args: "workspace success handler",
  slack_team_id: "Slack integration",
  slack_name: "Slack integration",
  slack_command_script: "Slack integration",
  slack_oauth_client_id: "Slack integration",
  slack_oauth_client_secret: "Slack integration",
  teams_team_id: "Teams integration",
  teams_team_name: "Teams integration",
  teams_team_guid: "Teams integration",
  teams_command_script: "Teams integration",
  public_app_execution_limit_per_minute: "apps",
  guest_access_enabled: "guest access",
  guest_jwt_public_key: "guest access",
  guest_jwt_jwks_url: "guest access",
  add_admins_and_developers_to_forks: "fork settings",
  plan: "",
  customer_id: "",
};

/** Unset, in Windmill's terms: absent, null, "", false, an empty list, or an object of such. */
function isUnset(value: unknown): boolean {
  if (value === undefined || value === null || value === "" || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.values(value).every(isUnset);
  return false;
}

/** The document of settings.yaml (null fields left out; wmill's key order when written). */
export function settingsDocument(settings: SyncSettings): JsonObject {
  const doc: JsonObject = { name: settings.name };
  if (settings.color !== null) doc.color = settings.color;
  if (settings.large_file_storage !== null) doc.large_file_storage = settings.large_file_storage;
  if (settings.operator_settings !== null) doc.operator_settings = settings.operator_settings;
  return doc;
}

export function settingsToYaml(settings: SyncSettings): string {
  return toYaml(settingsDocument(settings));
}

/**
 * The settings of a parsed settings.yaml document; each bad field is pushed to `errors` and each
 * Windmill setting Millrace does not have, when set, to `skipped`.
 */
export function readSettingsDocument(
  doc: Record<string, unknown>,
  errors: SyncError[],
  skipped: SkippedFile[],
): SyncSettings {
  const file = SETTINGS_FILE;
  const settings: SyncSettings = { name: "", color: null, large_file_storage: null, operator_settings: null };
  for (const [key, value] of Object.entries(doc)) {
    switch (key) {
      case "name":
        if (typeof value === "string") settings.name = value;
        else if (value !== null) errors.push({ file, field: key, message: "name must be a string" });
        break;
      case "color":
        if (typeof value === "string") settings.color = value || null;
        else if (value !== null)
          errors.push({ file, field: key, message: "color must be a string (#rrggbb)" });
        break;
      case "large_file_storage":
        if (value && typeof value === "object" && !Array.isArray(value))
          settings.large_file_storage = value as JsonObject;
        else if (value !== null && value !== "")
          errors.push({ file, field: key, message: "large_file_storage must be a map (S3Storage)" });
        break;
      case "operator_settings":
        if (
          value &&
          typeof value === "object" &&
          !Array.isArray(value) &&
          Object.values(value).every((v) => typeof v === "boolean")
        )
          settings.operator_settings = value as Record<string, boolean>;
        else if (value !== null)
          errors.push({ file, field: key, message: "operator_settings must be a map of true/false" });
        break;
      default: {
        const what = WINDMILL_ONLY[key];
        if (what === undefined)
          errors.push({
            file,
            field: key,
            message: `unknown setting ${key} (Millrace reads name, color, large_file_storage and operator_settings)`,
          });
        else if (what !== "" && !isUnset(value))
          skipped.push({ file, reason: `${key}: Millrace has no ${what}; not applied` });
      }
    }
  }
  return settings;
}

/** Canonical form: the same settings compare equal whatever the order of their keys. */
export function normalizeSettings(settings: SyncSettings): SyncSettings {
  const sorted = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(sorted);
    if (value && typeof value === "object")
      return Object.fromEntries(
        Object.entries(value)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([k, v]) => [k, sorted(v)]),
      );
    return value;
  };
  return {
    name: settings.name,
    color: settings.color,
    large_file_storage:
      settings.large_file_storage === null ? null : (sorted(settings.large_file_storage) as JsonObject),
    operator_settings:
      settings.operator_settings === null
        ? null
        : (sorted(settings.operator_settings) as Record<string, boolean>),
  };
}
