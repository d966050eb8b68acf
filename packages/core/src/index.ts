export { AppError, HTTP_STATUS, invalidInput, notFound, type AppErrorCode } from "./errors.ts";
export { checkJsonInput, checkQueryInput, checkTextInput, MAX_JSON_DEPTH } from "./input.ts";
export type { CoreContext } from "./context.ts";
export type { Principal } from "./auth/principal.ts";
export {
  createApiToken,
  revokeApiToken,
  principalFromBearer,
  hashToken,
  SUPERADMIN_SECRET_PRINCIPAL,
  type CreateTokenInput,
} from "./auth/tokens.ts";
export {
  authenticate,
  createUser,
  ensureFirstSuperadmin,
  getUserPrincipal,
  principalOf,
  MIN_PASSWORD_LENGTH,
  type CreateUserInput,
} from "./users.ts";
export {
  createWorkspace,
  listWorkspaces,
  membershipFromBearer,
  requireMembership,
  WORKSPACE_ID,
  ADMINS_WORKSPACE,
  ensureAdminsWorkspace,
  RESERVED_WORKSPACE_IDS,
  type Membership,
  type WorkspaceSummary,
} from "./workspaces.ts";
export { PERMISSIONS, can, requirePermission, type Action } from "./permissions.ts";
export { parsePath } from "./paths.ts";
export * from "./drafts.ts";
export * from "./arg-customizations.ts";
export {
  archiveScriptByPath,
  deleteScriptByPath,
  deployScript,
  getNewestScriptVersion,
  listScriptVersions,
  pathRights,
  unarchiveScriptByPath,
  writablePaths,
  type PathRights,
  type ScriptVersion,
  getScriptByPath,
  lookUpScriptAhead,
  getScriptByHash,
  listScripts,
  latestScript,
  type NewScriptInput,
  type ScriptLookup,
} from "./scripts.ts";
export { getInstanceSecret, sessionSigningSecret, SESSION_SALT_SETTING } from "./instance.ts";
export * from "./jobs/index.ts";
export {
  handleZombieJobs,
  parseZombieSettings,
  publishZombieSettings,
  repairOrphanedJobs,
  requeueAbandonedJobs,
  MAX_ZOMBIE_RESTARTS,
  type ZombieOptions,
  type ZombieSettings,
  ZOMBIE_SETTINGS_KEY,
} from "./maintenance/zombies.ts";
export { startLeaderLoop, type LeaderTask } from "./maintenance/leader.ts";
export {
  checkReadiness,
  READY_RETRY_AFTER_SECS,
  READY_TIMEOUT_MS,
  type Readiness,
} from "./maintenance/readiness.ts";
export * from "./workers/index.ts";
export {
  requireSuperadmin,
  getGlobalSetting,
  setGlobalSetting,
  validateGlobalSetting,
} from "./instance-admin.ts";
export * from "./audit/index.ts";
export * from "./secrets/index.ts";
export * from "./variables/index.ts";
export * from "./resources/index.ts";
export * from "./schedules/index.ts";
export * from "./webhooks/index.ts";
export * from "./people/index.ts";
export * from "./governance/index.ts";
export { authorizePath, folderLevel, type PathAccess } from "./access.ts";
export * from "./dependencies/index.ts";
export * from "./flows/index.ts";
export { deleteFlowIfPresent, flowVersion } from "./flows/versions.ts";
export { exportWorkspaceSnapshot, revealSnapshotSecrets } from "./sync/export.ts";
export { readRepositoryFiles, SYNC_KINDS, type RepositoryOptions, type SyncKind } from "./sync/repository.ts";
export {
  restoreWorkspaceFiles,
  type RestoreContext,
  type RestoreOptions,
  type RestoreReport,
} from "./sync/restore.ts";
export type { RestoreChanges, RestoreDiff, RestoreFileChange } from "./sync/restore-diff.ts";
export {
  defaultGitSyncCacheDir,
  deleteGitSyncSettings,
  deleteOldGitSyncRuns,
  getGitSyncStatus,
  requestGitSync,
  runGitSync,
  setGitSyncSettings,
  startGitSyncLoop,
  SYNCED_OPERATIONS,
  type GitSyncLoop,
  type GitSyncRunView,
  type GitSyncSettings,
  type GitSyncSettingsInput,
  type GitSyncStatus,
} from "./sync/git-sync.ts";
export { workspaceExists } from "./workspaces.ts";
export { diffScriptsWithDeployed, isOwnerOfPath, scriptExists } from "./scripts.ts";
export {
  lockRawDependencies,
  runRawDependencies,
  type RawDependenciesInput,
  type RawScript,
} from "./raw-dependencies.ts";
export * from "./windmill-settings.ts";
export { listGlobalSettings } from "./instance-admin.ts";
export { getGranularAcls } from "./people/granular-acls.ts";
export { getFlowUserState, setFlowUserState } from "./flows/user-states.ts";
export * from "./workspace-dependencies.ts";
export * from "./workspace-forks.ts";
export * from "./oidc.ts";
export { applyWindmillGitSyncSettings } from "./sync/git-sync-windmill.ts";
export * from "./object-storage/index.ts";
export * from "./metrics/index.ts";
export * from "./fleet/index.ts";
export * from "./agents/index.ts";
export * from "./autoscaling/index.ts";
