// Restore: a repository (wmill's layout + `.millrace/`) becomes a workspace again. Used by
// `millrace restore --from-git` into a fresh instance, by the superadmin Restore page, and by
// `millrace sync push`. The whole repository is checked first and every problem reported at once;
// then everything is written in ONE transaction, so a refused or failed restore leaves what was
// stored exactly as it was.
import type { Pool, PoolClient } from "@millrace/db";
import { withTransaction } from "@millrace/db";
import { inferSchema, isLanguage } from "@millrace/runtime";
import {
  filesToSnapshot,
  INSTANCE_META_FILE,
  parseInstanceMeta,
  parseWorkspaceMeta,
  SETTINGS_FILE,
  WORKSPACE_META_FILE,
  type InstanceMeta,
  type SkippedFile,
  type SyncError,
  type WorkspaceMeta,
  type WorkspaceSnapshot,
} from "@millrace/sync";
import { recordAudit } from "../audit/index.ts";
import type { Principal } from "../auth/principal.ts";
import { checkRequirements, enqueueDependencyJob } from "../dependencies/index.ts";
import { AppError } from "../errors.ts";
import type { JobsContext } from "../jobs/run.ts";
import { builtinResourceType } from "../resources/builtin-types.ts";
import { checkResourceValue, checkTypeSchema } from "../resources/value-schema.ts";
import { RESOURCE_TYPE_NAME } from "../resources/resource-types.ts";
import { checkTimezone, parseCron, tickAfter } from "../schedules/cron.ts";
import { SCHEDULE_CHANGED_CHANNEL } from "../schedules/schedules.ts";
import type { SecretsContext } from "../secrets/context.ts";
import { isEncrypted, openSecret, sealSecret, type WorkspaceDataKey } from "../secrets/keyring.ts";
import { checkScriptContent, versionHash } from "../scripts.ts";
import { checkScriptLimits } from "../jobs/limits.ts";
import { validateTag } from "../jobs/tags.ts";
import {
  assertTagAllowed,
  CUSTOM_TAGS_SETTING,
  invalidateCustomTagsCache,
  parseCustomTags,
} from "../workers/custom-tags.ts";
import {
  parseWorkerGroupConfig,
  validateWorkerGroupName,
  WORKER_CONFIG_CHANNEL,
} from "../workers/group-config.ts";
import { ALL_GROUP } from "../people/groups.ts";
import { requirePermission } from "../permissions.ts";
import { RESERVED_WORKSPACE_IDS, type Membership } from "../workspaces.ts";
import type { OpenFlow } from "../flows/format.ts";
import { validateFlow } from "../flows/validate.ts";
import { checkFlowSize } from "../flows/store.ts";
import { checkVariableValue } from "../variables/variables.ts";
import { checkLargeFileStorage, type LargeFileStorage } from "../object-storage/settings.ts";
import { checkOperatorSettings, workspaceColor } from "../windmill-settings.ts";
import { readRepositoryFiles } from "./repository.ts";
import { restoreChanges, type RestoreChanges, type RestoreDiff } from "./restore-diff.ts";

export type RestoreContext = JobsContext & SecretsContext;

export interface RestoreOptions {
  /** The workspace to restore into; defaults to the id in `.millrace/workspace.yaml`. */
  workspaceId?: string;
  /** Apply although the workspace exists and differs from the repository (see `diff`). */
  yes?: boolean;
  /** Check and compute the diff, never apply (the Restore page's "Check"). */
  dryRun?: boolean;
  /**
   * "instance" (superadmins: the workspace is created if missing, users, memberships, webhook
   * tokens and the instance config come back) or "workspace" (a workspace admin's push: only the
   * kinds of wmill's layout; `.millrace/` is ignored).
   */
  scope: "instance" | "workspace";
  /** Secret values that are not `enc:v1:`/`enc:v2:` ciphertext are plain text, to encrypt on arrival. */
  plainSecrets?: boolean;
  /** The caller's membership in `workspaceId` (scope "workspace"). */
  membership?: Membership;
  onProgress?: (phase: string, done: number, total: number) => void;
}

export interface RestoreReport {
  workspaceId: string;
  applied: boolean;
  /** Non-empty: nothing was applied. */
  errors: SyncError[];
  skipped: SkippedFile[];
  /** Files of the repository against the workspace as it was before the restore. */
  diff: RestoreDiff;
  /** The changed lines of `diff`'s files (capped; secret values only as ciphertext). */
  changes: RestoreChanges;
  /** True when the workspace held something that differs: applying needed `yes`. */
  needsConfirmation: boolean;
  counts: Record<string, number>;
  /** Secret variables whose value could not be decrypted: restored empty, to set again. */
  undecryptableSecrets: string[];
  /** Users created without a password (their hash was not in the repository). */
  usersNeedingPasswordReset: string[];
  durationMs: number;
}

interface Plan {
  workspaceId: string;
  snapshot: WorkspaceSnapshot;
  meta: WorkspaceMeta | null;
  instance: InstanceMeta | null;
  /** path → value to store (ciphertext under the key that `key` describes, or "" when lost). */
  secrets: Map<string, string>;
  undecryptable: string[];
  /** The data key row to write for a new workspace (null: keep the existing one). */
  wrappedKey: string | null;
  forgetKey: boolean;
  /** The repository's flows as a deploy stores them (validated). */
  flows: OpenFlowWithPath[];
  /** settings.yaml, checked; null when the repository has none (the settings stay as they are). */
  settings: { name: string; color: string | null; storage: LargeFileStorage | null } | null;
}

type OpenFlowWithPath = OpenFlow & { path: string; ws_error_handler_muted?: boolean | null };

const EMPTY_DIFF: RestoreDiff = { added: [], changed: [], deleted: [] };

/** JSON with object keys sorted: jsonb answers keys in its own order, YAML in the file's. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

function fileOf(kind: string, path: string): string {
  return `${path}.${kind}.yaml`;
}

async function existingWorkspace(pool: Pool, id: string): Promise<{ id: string; deleted: boolean } | null> {
  const { rows } = await pool.query<{ id: string; deleted: boolean }>(
    "SELECT id, deleted FROM workspace WHERE id = $1",
    [id],
  );
  return rows[0] ?? null;
}

function diffFiles(before: Map<string, string>, after: Map<string, string>): RestoreDiff {
  const diff: RestoreDiff = { added: [], changed: [], deleted: [] };
  for (const [file, text] of after) {
    const old = before.get(file);
    if (old === undefined) diff.added.push(file);
    else if (old !== text) diff.changed.push(file);
  }
  for (const file of before.keys()) if (!after.has(file)) diff.deleted.push(file);
  for (const list of Object.values(diff)) list.sort();
  return diff;
}

/** Every check that needs no write: resources against their types, crons, secrets, users. */
async function planRestore(
  ctx: RestoreContext,
  files: Map<string, string>,
  options: RestoreOptions,
  errors: SyncError[],
): Promise<Plan | null> {
  const parsed = filesToSnapshot(files);
  errors.push(...parsed.errors);
  const snapshot = parsed.snapshot;
  let meta: WorkspaceMeta | null = null;
  let instance: InstanceMeta | null = null;
  if (options.scope === "instance") {
    const metaText = files.get(WORKSPACE_META_FILE);
    if (metaText !== undefined) meta = parseWorkspaceMeta(metaText, errors);
    const instanceText = files.get(INSTANCE_META_FILE);
    if (instanceText !== undefined) instance = parseInstanceMeta(instanceText, errors);
  }
  const workspaceId = options.workspaceId ?? meta?.id;
  if (!workspaceId) {
    errors.push({
      file: WORKSPACE_META_FILE,
      message: "the repository names no workspace (no .millrace/workspace.yaml): pass the workspace id",
    });
    return null;
  }
  if (
    options.scope === "instance" &&
    RESERVED_WORKSPACE_IDS.includes(workspaceId) &&
    workspaceId !== "admins"
  )
    errors.push({
      file: WORKSPACE_META_FILE,
      field: "id",
      message: `"${workspaceId}" is a reserved workspace id`,
    });

  // Resource types: the repository's own and the built-in ones.
  const types = new Map<string, object | null>();
  for (const type of snapshot.resourceTypes) {
    const file = `${type.name}.resource-type.yaml`;
    if (!RESOURCE_TYPE_NAME.test(type.name))
      errors.push({
        file,
        field: "name",
        message: "must be a-z, 0-9 and _, starting with a letter (at most 50)",
      });
    try {
      types.set(type.name, checkTypeSchema(type.schema));
    } catch (error) {
      errors.push({ file, field: "schema", message: (error as Error).message });
    }
  }
  for (const resource of snapshot.resources) {
    const file = fileOf("resource", resource.path);
    // The repository's own type shadows a built-in one of the same name (see listResourceTypes).
    const builtin = types.has(resource.resource_type)
      ? undefined
      : builtinResourceType(resource.resource_type);
    const schema = builtin ? builtin.schema : types.get(resource.resource_type);
    if (!builtin && !types.has(resource.resource_type)) {
      errors.push({
        file,
        field: "resource_type",
        message: `unknown resource type ${resource.resource_type}`,
      });
      continue;
    }
    try {
      checkResourceValue(
        resource.value,
        (schema as object | null | undefined) ?? null,
        resource.resource_type,
      );
    } catch (error) {
      const field = error instanceof AppError && error.field ? error.field : "value";
      errors.push({ file, field, message: (error as Error).message });
    }
  }
  const settings = await planSettings(snapshot, errors);
  const scriptPaths = new Set(snapshot.scripts.map((s) => s.path));
  const flowPaths = new Set(snapshot.flows.map((f) => f.path));
  const flows: OpenFlowWithPath[] = [];
  for (const flow of snapshot.flows) {
    const file = files.has(`${flow.path}.flow/flow.yaml`)
      ? `${flow.path}.flow/flow.yaml`
      : `${flow.path}__flow/flow.yaml`;
    try {
      // Steps may name the repository's scripts and flows (a hash pins a version that a restore
      // re-creates under a new hash, so it is checked by path only).
      const document = {
        summary: flow.summary,
        description: flow.description,
        value: flow.value,
        ...(flow.schema ? { schema: flow.schema } : {}),
      };
      checkFlowSize(document);
      const checked = await validateFlow(document, {
        scriptExists: (path) => scriptPaths.has(path),
        flowExists: (path) => flowPaths.has(path),
      });
      // Kept as the repository says (normalize.ts): what was pushed reads back the same.
      flows.push({
        ...checked,
        value: flow.value as unknown as typeof checked.value,
        path: flow.path,
        ws_error_handler_muted: flow.ws_error_handler_muted ?? null,
      });
    } catch (error) {
      errors.push({
        file,
        field: error instanceof AppError ? error.field : undefined,
        message: (error as Error).message,
      });
    }
  }
  for (const schedule of snapshot.schedules) {
    const file = fileOf("schedule", schedule.path);
    try {
      parseCron(schedule.schedule, checkTimezone(schedule.timezone));
    } catch (error) {
      errors.push({ file, field: "schedule", message: (error as Error).message });
    }
    if (!schedule.is_flow && !scriptPaths.has(schedule.script_path))
      errors.push({
        file,
        field: "script_path",
        message: `no script ${schedule.script_path} in the repository`,
      });
    if (schedule.is_flow && !flowPaths.has(schedule.script_path))
      errors.push({
        file,
        field: "script_path",
        message: `no flow ${schedule.script_path} in the repository`,
      });
  }
  for (const script of snapshot.scripts) {
    const file = `${script.path}.script.yaml`;
    try {
      checkScriptContent(script.content);
      checkRequirements(script.language, script.content);
    } catch (error) {
      errors.push({ file, field: "content", message: (error as Error).message });
    }
    try {
      checkScriptLimits(ctx.limits, script);
    } catch (error) {
      errors.push({
        file,
        field: error instanceof AppError ? error.field : undefined,
        message: (error as Error).message,
      });
    }
    // A workspace admin's push may use only the tags the workspace may use (as a deploy); a
    // superadmin's restore brings the instance's custom tags along with the scripts.
    if (script.tag && options.scope === "workspace" && !script.tag.includes("$")) {
      try {
        validateTag(script.tag, "tag");
        await assertTagAllowed(ctx.pool, workspaceId, script.tag, "tag");
      } catch (error) {
        errors.push({ file, field: "tag", message: (error as Error).message });
      }
    }
  }
  if (instance) {
    try {
      parseCustomTags(instance.custom_tags, "custom_tags");
    } catch (error) {
      errors.push({ file: INSTANCE_META_FILE, field: "custom_tags", message: (error as Error).message });
    }
    for (const [name, config] of Object.entries(instance.worker_groups)) {
      try {
        validateWorkerGroupName(name, "worker_groups");
        parseWorkerGroupConfig(config);
      } catch (error) {
        errors.push({
          file: INSTANCE_META_FILE,
          field: `worker_groups.${name}`,
          message: (error as Error).message,
        });
      }
    }
  }
  if (meta) {
    const emails = new Map(meta.members.map((m) => [m.email.toLowerCase(), m.username]));
    const { rows } = await ctx.pool.query<{ username: string; email: string }>(
      `SELECT username, email FROM "user" WHERE lower(email) = ANY($1::text[])`,
      [[...emails.keys()]],
    );
    for (const row of rows) {
      const wanted = emails.get(row.email.toLowerCase());
      if (wanted && wanted !== row.username)
        errors.push({
          file: WORKSPACE_META_FILE,
          field: "members",
          message: `${row.email} belongs to user ${row.username} here, not ${wanted}`,
        });
    }
  }
  // Groups and grants may name the repository's members and, for a superadmin's restore, any user
  // of the instance; a workspace admin's push only the workspace's own members.
  const knownUsers = new Set(meta?.members.map((m) => m.username) ?? []);
  const { rows: users } = await ctx.pool.query<{ username: string }>(
    options.scope === "instance"
      ? 'SELECT username FROM "user"'
      : `SELECT u.username FROM "user" u JOIN workspace_member m ON m.user_id = u.id WHERE m.workspace_id = $1`,
    options.scope === "instance" ? [] : [workspaceId],
  );
  for (const user of users) knownUsers.add(user.username);
  for (const group of snapshot.groups)
    for (const member of group.members)
      if (!knownUsers.has(member))
        errors.push({
          file: `groups/${group.name}.group.yaml`,
          field: "members",
          message: `no user ${member}`,
        });

  const groupNames = new Set(snapshot.groups.map((g) => g.name));
  for (const folder of snapshot.folders)
    for (const grantee of [...folder.owners, ...Object.keys(folder.extra_perms)]) {
      const [kind, name = ""] = grantee.split("/", 2);
      const known =
        kind === "g" ? name === ALL_GROUP || groupNames.has(name) : kind === "u" && knownUsers.has(name);
      if (!known)
        errors.push({
          file: `f/${folder.name}/folder.meta.yaml`,
          field: folder.owners.includes(grantee) ? "owners" : "extra_perms",
          message: `${grantee} is neither a group of the repository nor a user (u/<user> or g/<group>)`,
        });
    }

  // Secrets. The key that opens them: the repository's wrapped key when it opens with this
  // instance's MILLRACE_SECRET_KEY, else the workspace's current key. A value that opens with
  // neither is an error when the key was there to open it (it came from another workspace or
  // instance); when the repository's key itself does not open (another MILLRACE_SECRET_KEY), the
  // restore goes on and the secrets come back empty, listed for someone to set again.
  const existing = await existingWorkspace(ctx.pool, workspaceId);
  const secrets = new Map<string, string>();
  const undecryptable: string[] = [];
  let wrappedKey: string | null = null;
  let dataKey: WorkspaceDataKey | null = null;
  let keyLost = false;
  for (const variable of snapshot.variables.filter((v) => !v.is_secret)) {
    try {
      checkVariableValue(variable.value);
    } catch (error) {
      errors.push({
        file: fileOf("variable", variable.path),
        field: "value",
        message: (error as Error).message,
      });
    }
  }
  const secretVariables = snapshot.variables.filter((v) => v.is_secret);
  if (secretVariables.length > 0 && !ctx.secrets.configured) {
    errors.push({
      file: secretVariables[0] ? fileOf("variable", secretVariables[0].path) : WORKSPACE_META_FILE,
      field: "value",
      message: "MILLRACE_SECRET_KEY is not set on this server: secrets cannot be stored",
    });
    return null;
  }
  if (!existing && ctx.secrets.configured) {
    if (meta?.wrapped_key) {
      dataKey = ctx.secrets.unwrapKey(workspaceId, meta.wrapped_key);
      if (dataKey) wrappedKey = meta.wrapped_key;
      else keyLost = true;
    }
    if (!dataKey) {
      const fresh = ctx.secrets.newWrappedKey(workspaceId);
      dataKey = fresh.key;
      wrappedKey = fresh.wrapped;
    }
  }
  for (const variable of secretVariables) {
    const file = fileOf("variable", variable.path);
    if (!isEncrypted(variable.value)) {
      // Not Millrace's ciphertext: as wmill does, a repository's secrets count as encrypted unless
      // the caller says they are plain text (a `wmill sync pull --plain-secrets` of a Windmill
      // instance). Storing another instance's ciphertext as a value would silently break the
      // secret, so it is refused.
      if (!options.plainSecrets) {
        errors.push({
          file,
          field: "value",
          message:
            "this secret is not encrypted with a Millrace key (another instance's ciphertext, e.g. " +
            "Windmill's): export it in plain text (`wmill sync pull --plain-secrets`) and push with " +
            "--plain-secrets, which encrypts it with this workspace's key on arrival",
        });
        continue;
      }
      // A plain-text secret: encrypted now, never stored or logged in clear.
      secrets.set(
        variable.path,
        dataKey
          ? sealSecret(dataKey, workspaceId, variable.value)
          : await ctx.secrets.encrypt(ctx.pool, workspaceId, variable.value),
      );
      continue;
    }
    const opened = dataKey
      ? openSecret(dataKey, workspaceId, variable.value)
      : await ctx.secrets.openCurrent(ctx.pool, workspaceId, variable.value);
    if (opened !== null) secrets.set(variable.path, variable.value);
    else if (keyLost) {
      undecryptable.push(variable.path);
      secrets.set(variable.path, "");
    } else
      errors.push({
        file,
        field: "value",
        message:
          "this secret is encrypted with another key (another workspace or instance): export it " +
          "in plain text where it came from (`wmill sync pull --plain-secrets`) and push that",
      });
  }
  return {
    workspaceId,
    snapshot,
    meta,
    instance,
    secrets,
    undecryptable,
    wrappedKey,
    forgetKey: !existing,
    flows,
    settings,
  };
}

/**
 * settings.yaml checked as the REST calls check it: the color as changeWorkspaceColor, the object
 * storage as editLargeFileStorage (each resource it names must be an s3 resource, here of the
 * repository, whose resources replace the workspace's), the operator settings as
 * updateOperatorSettings. A key the file leaves out is unset (no color, no storage).
 */
async function planSettings(snapshot: WorkspaceSnapshot, errors: SyncError[]): Promise<Plan["settings"]> {
  const settings = snapshot.settings;
  if (!settings) return null;
  const check = async <T>(field: string, run: () => T | Promise<T>): Promise<T | null> => {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const inner = error.field && error.field !== field ? error.field : null;
      const named = inner && !inner.startsWith(field) ? `${field}.${inner}` : (inner ?? field);
      errors.push({ file: SETTINGS_FILE, field: named, message: error.message });
      return null;
    }
  };
  const color = await check("color", () => workspaceColor(settings.color));
  const types = new Map(snapshot.resources.map((r) => [r.path, r.resource_type]));
  const storage = await check("large_file_storage", () =>
    checkLargeFileStorage(settings.large_file_storage, (path) => types.get(path) ?? null),
  );
  const operators = settings.operator_settings;
  if (operators) await check("operator_settings", () => checkOperatorSettings(operators));
  return { name: settings.name, color, storage };
}

/**
 * Checks `files` as one repository and, when nothing is wrong (and the workspace is new, empty,
 * already equal, or `yes`), makes the workspace equal to it. Superadmins only with scope
 * "instance"; workspace admins of the target workspace with scope "workspace".
 */
export async function restoreWorkspaceFiles(
  ctx: RestoreContext,
  principal: Principal,
  files: Map<string, string>,
  options: RestoreOptions,
): Promise<RestoreReport> {
  if (options.scope === "instance" && !principal.isSuperAdmin)
    throw new AppError("FORBIDDEN", "only superadmins restore workspaces");
  if (options.scope === "workspace") {
    // A workspace admin's push: into their own workspace only.
    if (!options.membership || options.membership.workspace.id !== options.workspaceId)
      throw new AppError("FORBIDDEN", "a push goes into the caller's workspace");
    requirePermission(options.membership, "workspace.manage");
  }
  const started = performance.now();
  const errors: SyncError[] = [];
  const skipped = filesToSnapshot(new Map([...files].filter(([f]) => !f.startsWith(".millrace/")))).skipped;
  // `.millrace/` is the instance side (members, wrapped keys): only a restore applies it.
  if (options.scope === "workspace") {
    const instanceFiles = [...files.keys()].filter((f) => f.startsWith(".millrace/")).sort();
    for (const file of instanceFiles)
      skipped.push({ file, reason: "instance files are applied by a restore, not by a push" });
    if (instanceFiles.length > 0) files = new Map([...files].filter(([f]) => !f.startsWith(".millrace/")));
  }
  const plan = await planRestore(ctx, files, options, errors);
  const report: RestoreReport = {
    workspaceId: plan?.workspaceId ?? options.workspaceId ?? "",
    applied: false,
    errors,
    skipped,
    diff: EMPTY_DIFF,
    changes: { files: [], truncated: false },
    needsConfirmation: false,
    counts: {},
    undecryptableSecrets: plan?.undecryptable ?? [],
    usersNeedingPasswordReset: [],
    durationMs: 0,
  };
  const finish = () => ({ ...report, durationMs: Math.round(performance.now() - started) });
  if (!plan || errors.length > 0) return finish();

  const existing = await existingWorkspace(ctx.pool, plan.workspaceId);
  if (existing && !existing.deleted) {
    const current = await readRepositoryFiles(ctx.pool, plan.workspaceId, {
      instanceConfig: plan.instance !== null,
      passwordHashes: plan.meta?.members.some((m) => m.password_hash) ?? false,
    });
    const compared = new Map(files);
    if (!plan.meta) current.delete(WORKSPACE_META_FILE);
    if (!compared.has("wmill.yaml")) current.delete("wmill.yaml");
    // No settings.yaml: the workspace's settings are left as they are.
    if (!compared.has(SETTINGS_FILE)) current.delete(SETTINGS_FILE);
    report.diff = diffFiles(current, compared);
    report.changes = restoreChanges(report.diff, current, compared);
    // Only what is already stored needs a confirmation: files that only add need none.
    const overwrites = report.diff.changed.length + report.diff.deleted.length;
    report.needsConfirmation = overwrites > 0 && !options.yes;
    if (report.needsConfirmation || options.dryRun) return finish();
  } else if (options.scope !== "instance") {
    throw new AppError("NOT_FOUND", `workspace ${plan.workspaceId} not found`);
  } else if (options.dryRun) {
    report.diff = { added: [...files.keys()].sort(), changed: [], deleted: [] };
    report.changes = restoreChanges(report.diff, new Map(), files);
    return finish();
  }

  const result = await withTransaction(ctx.pool, (client) =>
    applyPlan(client, ctx, principal, plan, options),
  );
  if (plan.forgetKey) ctx.secrets.forget(ctx.pool, plan.workspaceId);
  if (plan.instance) invalidateCustomTagsCache(ctx.pool);
  // Scripts without a lock in the repository but with requirements get one computed, as at deploy.
  for (const version of result.needLocks) await enqueueDependencyJob(ctx, version);
  report.applied = true;
  report.counts = result.counts;
  report.usersNeedingPasswordReset = result.usersNeedingPasswordReset;
  return finish();
}

interface ApplyResult {
  counts: Record<string, number>;
  usersNeedingPasswordReset: string[];
  needLocks: {
    workspaceId: string;
    hash: string;
    path: string;
    language: string;
    content: string;
    createdBy: string;
  }[];
}

async function applyPlan(
  client: PoolClient,
  ctx: RestoreContext,
  principal: Principal,
  plan: Plan,
  options: RestoreOptions,
): Promise<ApplyResult> {
  const ws = plan.workspaceId;
  const { snapshot, meta } = plan;
  const progress = options.onProgress ?? (() => {});
  const counts: Record<string, number> = {};
  const usersNeedingPasswordReset: string[] = [];
  const needLocks: ApplyResult["needLocks"] = [];
  const q = (sql: string, params: unknown[] = []) => client.query(sql, params);

  if (!plan.wrappedKey && plan.secrets.size > 0) {
    // The secrets were checked or encrypted under the workspace's key when planned: holding that
    // key's row from here on, they must still be under it (its key may have changed since).
    await ctx.secrets.lockKey(client, ws);
    for (const value of plan.secrets.values()) {
      if (isEncrypted(value) && (await ctx.secrets.openCurrent(ctx.pool, ws, value, client)) === null)
        throw new AppError(
          "CONFLICT",
          "the workspace's encryption key changed during the restore: run it again",
        );
    }
  }

  if (plan.instance) {
    progress("instance", 0, 1);
    await q(
      `INSERT INTO instance_setting (key, value, updated_at) VALUES ($1, $2::jsonb, now())
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [CUSTOM_TAGS_SETTING, JSON.stringify(plan.instance.custom_tags)],
    );
    for (const [name, config] of Object.entries(plan.instance.worker_groups)) {
      await q(
        `INSERT INTO worker_group_config (name, config, updated_at) VALUES ($1, $2::jsonb, now())
         ON CONFLICT (name) DO UPDATE SET config = EXCLUDED.config, updated_at = now()`,
        [name, JSON.stringify(config)],
      );
    }
    await q("SELECT pg_notify($1, '')", [WORKER_CONFIG_CHANNEL]);
    counts.worker_groups = Object.keys(plan.instance.worker_groups).length;
    counts.custom_tags = plan.instance.custom_tags.length;
  }

  if (options.scope === "instance") {
    await q(
      `INSERT INTO workspace (id, name, created_by, created_at, deleted) VALUES ($1, $2, $3::uuid, now(), false)
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, deleted = false`,
      [ws, meta?.name ?? (plan.settings?.name || ws), principal.userId],
    );
  }
  if (plan.wrappedKey) {
    await q(
      `INSERT INTO workspace_key (workspace_id, wrapped_key, created_at) VALUES ($1, $2, now())
       ON CONFLICT (workspace_id) DO UPDATE SET wrapped_key = EXCLUDED.wrapped_key`,
      [ws, plan.wrappedKey],
    );
  }

  const userIds = new Map<string, string>();
  if (meta) {
    progress("members", 0, meta.members.length);
    for (const member of meta.members) {
      const found = await q(`SELECT id, password_hash FROM "user" WHERE username = $1`, [member.username]);
      let id = (found.rows[0] as { id: string } | undefined)?.id;
      if (!id) {
        const inserted = await q(
          `INSERT INTO "user" (id, email, username, name, password_hash, is_super_admin, disabled, created_at)
           VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, false, now()) RETURNING id`,
          [member.email, member.username, member.name, member.password_hash ?? null, member.is_superadmin],
        );
        id = (inserted.rows[0] as { id: string }).id;
        if (!member.password_hash) usersNeedingPasswordReset.push(member.username);
      }
      userIds.set(member.username, id);
      await q(
        `INSERT INTO workspace_member (workspace_id, user_id, role, disabled, created_at)
         VALUES ($1, $2::uuid, $3::workspace_role, $4, now())
         ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role, disabled = EXCLUDED.disabled`,
        [ws, id, member.role, member.disabled],
      );
    }
    if (meta.members.length > 0) {
      // The repository's member list is the workspace's; the restorer keeps their own access.
      await q(
        `DELETE FROM workspace_member WHERE workspace_id = $1 AND user_id <> ALL($2::uuid[]) AND user_id <> $3::uuid`,
        [ws, [...userIds.values()], principal.userId],
      );
    }
    for (const token of meta.webhook_tokens) {
      const userId =
        userIds.get(token.username) ??
        (
          (await q(`SELECT id FROM "user" WHERE username = $1`, [token.username])).rows[0] as
            { id: string } | undefined
        )?.id;
      if (!userId) continue;
      await q(
        `INSERT INTO api_token (id, token_hash, token_prefix, label, kind, user_id, workspace_id, scope_path, expires_at, created_at)
         VALUES (gen_random_uuid(), $1, $2, $3, 'webhook', $4::uuid, $5, $6, $7::timestamptz, now())
         ON CONFLICT (token_hash) DO NOTHING`,
        [token.token_hash, token.token_prefix, token.label, userId, ws, token.scope_path, token.expires_at],
      );
    }
    counts.members = meta.members.length;
    counts.webhook_tokens = meta.webhook_tokens.length;
  }
  // Scripts and schedules keep their owners when those users exist here (see WorkspaceMeta.owners).
  const { rows: existingUsers } = await q(`SELECT username FROM "user" WHERE NOT disabled`);
  const usernames = new Set(existingUsers.map((row) => (row as { username: string }).username));
  const ownerOf = (username: string | undefined) =>
    username && usernames.has(username) ? username : principal.username;
  const userId = async (username: string): Promise<string> => {
    const known = userIds.get(username);
    if (known) return known;
    const { rows } = await q(`SELECT id FROM "user" WHERE username = $1`, [username]);
    const id = (rows[0] as { id: string }).id;
    userIds.set(username, id);
    return id;
  };

  // Groups, folders, resource types, resources, variables and schedules are replaced as a whole:
  // the repository is the truth. Scripts keep their history: a changed script gets a new version,
  // a script missing from the repository is archived.
  progress("groups", 0, snapshot.groups.length);
  await q(`DELETE FROM "group" WHERE workspace_id = $1`, [ws]);
  for (const group of snapshot.groups) {
    await q(`INSERT INTO "group" (workspace_id, name, summary, created_at) VALUES ($1, $2, $3, now())`, [
      ws,
      group.name,
      group.summary,
    ]);
    for (const member of group.members) {
      await q(`INSERT INTO group_member (workspace_id, group_name, user_id) VALUES ($1, $2, $3::uuid)`, [
        ws,
        group.name,
        await userId(member),
      ]);
    }
  }
  counts.groups = snapshot.groups.length;

  progress("folders", 0, snapshot.folders.length);
  await q("DELETE FROM folder WHERE workspace_id = $1", [ws]);
  for (const folder of snapshot.folders) {
    await q(
      `INSERT INTO folder (workspace_id, name, summary, created_by, created_at) VALUES ($1, $2, $3, $4::uuid, now())`,
      [ws, folder.name, folder.summary, principal.userId],
    );
    const grants: [string, string][] = [
      ...folder.owners.map((p): [string, string] => [p, "owner"]),
      ...Object.entries(folder.extra_perms)
        .filter(([p]) => !folder.owners.includes(p))
        .map(([p, write]): [string, string] => [p, write ? "writer" : "viewer"]),
    ];
    // `position`: the owners' order of folder.meta.yaml, kept (see FolderPermission).
    for (const [position, [principalName, level]] of grants.entries()) {
      const ownerExtra = level === "owner" ? (folder.extra_perms[principalName] ?? null) : null;
      await q(
        `INSERT INTO folder_permission (workspace_id, folder_name, principal, level, position, owner_extra)
         VALUES ($1, $2, $3, $4::permission_level, $5, $6)`,
        [ws, folder.name, principalName, level, position, ownerExtra],
      );
    }
  }
  counts.folders = snapshot.folders.length;

  await q("DELETE FROM resource_type WHERE workspace_id = $1", [ws]);
  for (const type of snapshot.resourceTypes) {
    await q(
      `INSERT INTO resource_type (workspace_id, name, schema, description, created_at) VALUES ($1, $2, $3::jsonb, $4, now())`,
      [ws, type.name, JSON.stringify(type.schema), type.description],
    );
  }
  counts.resource_types = snapshot.resourceTypes.length;

  progress("resources", 0, snapshot.resources.length);
  await q("DELETE FROM resource WHERE workspace_id = $1", [ws]);
  for (const resource of snapshot.resources) {
    await q(
      `INSERT INTO resource (workspace_id, path, resource_type, value, description, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, now(), now())`,
      [
        ws,
        resource.path,
        resource.resource_type,
        JSON.stringify(resource.value),
        resource.description,
        principal.username,
      ],
    );
  }
  counts.resources = snapshot.resources.length;

  if (plan.settings) {
    // After the resources its storage names; configured by whoever restores (as a save by them).
    const { color, storage } = plan.settings;
    await q("UPDATE workspace SET color = $2, large_file_storage = $3::jsonb WHERE id = $1", [
      ws,
      color,
      storage === null ? null : JSON.stringify({ setting: storage, configuredBy: principal.username }),
    ]);
    counts.settings = 1;
  }

  progress("variables", 0, snapshot.variables.length);
  await q("DELETE FROM variable WHERE workspace_id = $1", [ws]);
  for (const variable of snapshot.variables) {
    await q(
      `INSERT INTO variable (workspace_id, path, value, is_secret, description, file_fields, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, now(), now())`,
      [
        ws,
        variable.path,
        variable.is_secret ? (plan.secrets.get(variable.path) ?? "") : variable.value,
        variable.is_secret,
        variable.description,
        variable.file_fields ? JSON.stringify(variable.file_fields) : null,
        principal.username,
      ],
    );
  }
  counts.variables = snapshot.variables.filter((v) => !v.is_secret).length;
  counts.secrets = snapshot.variables.length - counts.variables;

  progress("scripts", 0, snapshot.scripts.length);
  const { rows: latestRows } = await q(
    `SELECT DISTINCT ON (path) path, hash, archived, language, content, summary, description,
            COALESCE(declared_schema, schema) AS schema, lock, tag, timeout_secs, priority, concurrent_limit,
            concurrency_time_window_s, concurrency_key, retry, memory_limit_mb
       FROM script WHERE workspace_id = $1 ORDER BY path, created_at DESC`,
    [ws],
  );
  const latest = new Map(
    latestRows.map((row) => [(row as { path: string }).path, row as Record<string, unknown>]),
  );
  let done = 0;
  let versions = 0;
  for (const script of snapshot.scripts) {
    const current = latest.get(script.path);
    const same =
      current &&
      !current.archived &&
      canonicalJson([
        current.language,
        current.content,
        current.summary,
        current.description,
        current.schema,
        current.lock,
        current.tag,
        current.timeout_secs,
        current.priority,
        current.concurrent_limit,
        current.concurrency_time_window_s,
        current.concurrency_key,
        current.retry,
        current.memory_limit_mb,
      ]) ===
        canonicalJson([
          script.language,
          script.content,
          script.summary,
          script.description,
          script.schema,
          script.lock,
          script.tag,
          script.timeout,
          script.priority,
          script.concurrent_limit,
          script.concurrency_time_window_s,
          script.concurrency_key,
          script.retry,
          script.memory_limit_mb,
        ]);
    if (!same) {
      const createdAt = new Date();
      const parentHash = current && !current.archived ? (current.hash as string) : null;
      const hash = versionHash(ws, { ...script, parentHash }, createdAt);
      let inferred: unknown = script.schema;
      try {
        if (isLanguage(script.language)) inferred = inferSchema(script.language, script.content);
      } catch {
        // The declared schema runs the script when its signature cannot be read (as at deploy).
      }
      await q(
        `INSERT INTO script (workspace_id, hash, path, parent_hash, summary, description, content, language, schema,
            declared_schema, tag, lock, timeout_secs, priority, concurrent_limit, concurrency_time_window_s,
            concurrency_key, retry, memory_limit_mb, created_by, created_at, archived)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13, $14, $15, $16, $17, $18::jsonb,
            $19, $20, $21::timestamptz, false)`,
        [
          ws,
          hash,
          script.path,
          parentHash,
          script.summary,
          script.description,
          script.content,
          script.language,
          JSON.stringify(inferred),
          JSON.stringify(script.schema),
          script.tag,
          script.lock,
          script.timeout,
          script.priority,
          script.concurrent_limit,
          script.concurrency_time_window_s,
          script.concurrency_key,
          script.retry === null ? null : JSON.stringify(script.retry),
          script.memory_limit_mb,
          ownerOf(meta?.owners.scripts[script.path]),
          createdAt,
        ],
      );
      versions++;
      if (script.lock === null && checkRequirements(script.language, script.content))
        needLocks.push({
          workspaceId: ws,
          hash,
          path: script.path,
          language: script.language,
          content: script.content,
          createdBy: ownerOf(meta?.owners.scripts[script.path]),
        });
    }
    if (++done % 50 === 0) progress("scripts", done, snapshot.scripts.length);
  }
  const archived = await q(
    `UPDATE script SET archived = true WHERE workspace_id = $1 AND NOT archived AND path <> ALL($2::text[])`,
    [ws, snapshot.scripts.map((s) => s.path)],
  );
  counts.scripts = snapshot.scripts.length;
  counts.script_versions_created = versions;
  counts.scripts_archived = archived.rowCount ?? 0;

  // Flows keep their history as scripts do: a changed flow gets a new version (flow_version), a
  // flow missing from the repository is archived.
  progress("flows", 0, plan.flows.length);
  const { rows: flowRows } = await q(
    "SELECT path, summary, description, value, schema, archived FROM flow WHERE workspace_id = $1",
    [ws],
  );
  const currentFlows = new Map(
    flowRows.map((row) => [(row as { path: string }).path, row as Record<string, unknown>]),
  );
  let flowVersions = 0;
  for (const flow of plan.flows) {
    const current = currentFlows.get(flow.path);
    const schema = flow.schema ?? null;
    const same =
      current &&
      !current.archived &&
      canonicalJson([current.summary, current.description, current.value, current.schema]) ===
        canonicalJson([flow.summary ?? "", flow.description ?? "", flow.value, schema]);
    if (same) continue;
    const owner = ownerOf(meta?.owners.flows[flow.path]);
    const { rows } = await q(
      `INSERT INTO flow_version (workspace_id, path, summary, description, value, schema, deployment_msg, created_by)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8) RETURNING id`,
      [
        ws,
        flow.path,
        flow.summary ?? "",
        flow.description ?? "",
        JSON.stringify(flow.value),
        schema === null ? null : JSON.stringify(schema),
        options.scope === "instance" ? "restored from git" : "wmill sync push",
        owner,
      ],
    );
    const versionId = (rows[0] as { id: string }).id;
    await q(
      `INSERT INTO flow (workspace_id, path, summary, description, value, schema, version_id, edited_by, edited_at,
                         archived, ws_error_handler_muted)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, now(), false, $9)
       ON CONFLICT (workspace_id, path) DO UPDATE SET summary = EXCLUDED.summary,
         description = EXCLUDED.description, value = EXCLUDED.value, schema = EXCLUDED.schema,
         version_id = EXCLUDED.version_id, edited_by = EXCLUDED.edited_by, edited_at = now(), archived = false,
         ws_error_handler_muted = EXCLUDED.ws_error_handler_muted`,
      [
        ws,
        flow.path,
        flow.summary ?? "",
        flow.description ?? "",
        JSON.stringify(flow.value),
        schema === null ? null : JSON.stringify(schema),
        versionId,
        owner,
        flow.ws_error_handler_muted ?? null,
      ],
    );
    flowVersions++;
  }
  const archivedFlows = await q(
    `UPDATE flow SET archived = true, edited_at = now() WHERE workspace_id = $1 AND NOT archived AND path <> ALL($2::text[])`,
    [ws, plan.flows.map((f) => f.path)],
  );
  counts.flows = plan.flows.length;
  counts.flow_versions_created = flowVersions;
  counts.flows_archived = archivedFlows.rowCount ?? 0;

  progress("schedules", 0, snapshot.schedules.length);
  await q("DELETE FROM schedule WHERE workspace_id = $1", [ws]);
  const now = new Date();
  for (const schedule of snapshot.schedules) {
    const next = schedule.enabled ? tickAfter(parseCron(schedule.schedule, schedule.timezone), now) : null;
    await q(
      `INSERT INTO schedule (workspace_id, path, schedule, timezone, script_path, is_flow, args, enabled, summary,
         next_run_at, created_by, permissioned_as, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10::timestamptz, $11, 'u/' || $11, now(), now())`,
      [
        ws,
        schedule.path,
        schedule.schedule,
        schedule.timezone,
        schedule.script_path,
        schedule.is_flow,
        JSON.stringify(schedule.args),
        schedule.enabled,
        schedule.summary ?? "",
        next,
        ownerOf(meta?.owners.schedules[schedule.path]),
      ],
    );
  }
  await q("SELECT pg_notify($1, '')", [SCHEDULE_CHANGED_CHANNEL]);
  counts.schedules = snapshot.schedules.length;

  await recordAudit(client, principal, {
    workspaceId: ws,
    operation: options.scope === "instance" ? "workspaces.restore" : "workspaces.sync_push",
    resource: ws,
    parameters: counts,
  });
  progress("done", 1, 1);
  return { counts, usersNeedingPasswordReset, needLocks };
}
