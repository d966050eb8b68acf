// The files of a workspace's git repository: wmill's layout (packages/sync) plus Millrace's
// `.millrace/` files, which make the repository enough to rebuild the workspace after a total
// database loss. Server-side git sync commits exactly these files; restore reads them back.
import type { Pool, PoolClient } from "@millrace/db";
import { withTransaction } from "@millrace/db";
import {
  INSTANCE_META_FILE,
  instanceMetaToYaml,
  snapshotToFiles,
  WORKSPACE_META_FILE,
  workspaceMetaToYaml,
  type JsonObject,
  type WorkspaceMeta,
  type WorkspaceSnapshot,
} from "@millrace/sync";
import { CUSTOM_TAGS_SETTING } from "../workers/custom-tags.ts";
import { readWorkspaceSnapshot } from "./export.ts";

/** The kinds a git sync link may include (all of them when it names none). */
export const SYNC_KINDS = [
  "scripts",
  "folders",
  "groups",
  "resources",
  "resource_types",
  "variables",
  "secrets",
  "schedules",
  "flows",
  "members",
  "settings",
] as const;
export type SyncKind = (typeof SYNC_KINDS)[number];

export interface RepositoryOptions {
  /** Empty or undefined: every kind. */
  includeKinds?: readonly string[];
  /** `.millrace/instance.yaml`: worker group configs and custom tags (superadmin opt-in). */
  instanceConfig?: boolean;
  /** Members' password hashes in `.millrace/workspace.yaml` (superadmin opt-in). */
  passwordHashes?: boolean;
}

function withKinds(snapshot: WorkspaceSnapshot, kinds: readonly string[] | undefined): WorkspaceSnapshot {
  if (!kinds || kinds.length === 0) return snapshot;
  const has = (kind: SyncKind) => kinds.includes(kind);
  return {
    ...snapshot,
    scripts: has("scripts") ? snapshot.scripts : [],
    folders: has("folders") ? snapshot.folders : [],
    groups: has("groups") ? snapshot.groups : [],
    resources: has("resources") ? snapshot.resources : [],
    resourceTypes: has("resource_types") ? snapshot.resourceTypes : [],
    variables: snapshot.variables.filter((v) => (v.is_secret ? has("secrets") : has("variables"))),
    schedules: has("schedules") ? snapshot.schedules : [],
    flows: has("flows") ? snapshot.flows : [],
    settings: has("settings") ? snapshot.settings : undefined,
  };
}

export async function readWorkspaceMeta(
  client: PoolClient,
  ws: string,
  options: { members: boolean; passwordHashes: boolean },
): Promise<WorkspaceMeta> {
  const workspace = (
    await client.query<{ id: string; name: string; wrapped_key: string | null }>(
      `SELECT w.id, w.name, k.wrapped_key FROM workspace w
         LEFT JOIN workspace_key k ON k.workspace_id = w.id WHERE w.id = $1`,
      [ws],
    )
  ).rows[0];
  if (!workspace) throw new Error(`workspace ${ws} does not exist`);
  const meta: WorkspaceMeta = {
    format: 1,
    id: workspace.id,
    name: workspace.name,
    wrapped_key: workspace.wrapped_key,
    members: [],
    webhook_tokens: [],
    owners: { scripts: {}, schedules: {}, flows: {} },
  };
  const scripts = await client.query<{ path: string; created_by: string; archived: boolean }>(
    `SELECT DISTINCT ON (path) path, created_by, archived FROM script WHERE workspace_id = $1
      ORDER BY path, created_at DESC`,
    [ws],
  );
  for (const s of scripts.rows) if (!s.archived) meta.owners.scripts[s.path] = s.created_by;
  const schedules = await client.query<{ path: string; permissioned_as: string }>(
    "SELECT path, permissioned_as FROM schedule WHERE workspace_id = $1 ORDER BY path",
    [ws],
  );
  for (const s of schedules.rows) meta.owners.schedules[s.path] = s.permissioned_as.replace(/^u\//, "");
  const flows = await client.query<{ path: string; edited_by: string }>(
    "SELECT path, edited_by FROM flow WHERE workspace_id = $1 AND NOT archived ORDER BY path",
    [ws],
  );
  for (const f of flows.rows) meta.owners.flows[f.path] = f.edited_by;
  if (!options.members) return meta;
  const members = await client.query<{
    username: string;
    email: string;
    name: string | null;
    role: "admin" | "developer" | "operator";
    disabled: boolean;
    is_super_admin: boolean;
    password_hash: string | null;
  }>(
    `SELECT u.username, u.email, u.name, m.role, m.disabled, u.is_super_admin, u.password_hash
       FROM workspace_member m JOIN "user" u ON u.id = m.user_id
      WHERE m.workspace_id = $1 ORDER BY u.username`,
    [ws],
  );
  meta.members = members.rows.map((m) => ({
    username: m.username,
    email: m.email,
    name: m.name,
    role: m.role,
    disabled: m.disabled,
    is_superadmin: m.is_super_admin,
    ...(options.passwordHashes && m.password_hash ? { password_hash: m.password_hash } : {}),
  }));
  const tokens = await client.query<{
    token_hash: string;
    token_prefix: string;
    label: string | null;
    username: string;
    scope_path: string | null;
    expires_at: Date | null;
  }>(
    `SELECT t.token_hash, t.token_prefix, t.label, u.username, t.scope_path, t.expires_at
       FROM api_token t JOIN "user" u ON u.id = t.user_id
      WHERE t.workspace_id = $1 AND t.kind = 'webhook' ORDER BY t.token_hash`,
    [ws],
  );
  meta.webhook_tokens = tokens.rows.map((t) => ({ ...t, expires_at: t.expires_at?.toISOString() ?? null }));
  return meta;
}

export async function readInstanceMetaFile(client: PoolClient): Promise<string> {
  const tags = await client.query<{ value: unknown }>("SELECT value FROM instance_setting WHERE key = $1", [
    CUSTOM_TAGS_SETTING,
  ]);
  const groups = await client.query<{ name: string; config: JsonObject }>(
    "SELECT name, config FROM worker_group_config ORDER BY name",
  );
  const customTags = tags.rows[0]?.value;
  return instanceMetaToYaml({
    format: 1,
    custom_tags: Array.isArray(customTags) ? customTags.map(String) : [],
    worker_groups: Object.fromEntries(groups.rows.map((g) => [g.name, g.config])),
  });
}

/** The repository files of workspace `ws`, read in one consistent snapshot of the database. */
export async function readRepositoryFiles(
  pool: Pool,
  ws: string,
  options: RepositoryOptions = {},
): Promise<Map<string, string>> {
  return withTransaction(pool, async (client) => {
    await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const snapshot = withKinds(await readWorkspaceSnapshot(client, ws), options.includeKinds);
    const files = snapshotToFiles(snapshot);
    const kinds = options.includeKinds ?? [];
    const meta = await readWorkspaceMeta(client, ws, {
      members: kinds.length === 0 || kinds.includes("members"),
      passwordHashes: options.passwordHashes === true,
    });
    // Owners of what the repository holds only (the kinds left out stay out entirely).
    const keep = (owners: Record<string, string>, paths: string[]) =>
      Object.fromEntries(paths.filter((p) => owners[p] !== undefined).map((p) => [p, owners[p]!]));
    meta.owners = {
      scripts: keep(
        meta.owners.scripts,
        snapshot.scripts.map((x) => x.path),
      ),
      schedules: keep(
        meta.owners.schedules,
        snapshot.schedules.map((x) => x.path),
      ),
      flows: keep(
        meta.owners.flows,
        snapshot.flows.map((x) => x.path),
      ),
    };
    files.set(WORKSPACE_META_FILE, workspaceMetaToYaml(meta));
    if (options.instanceConfig) files.set(INSTANCE_META_FILE, await readInstanceMetaFile(client));
    return files;
  });
}
