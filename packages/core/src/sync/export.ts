// A workspace as the sync layout sees it (packages/sync's WorkspaceSnapshot), read from the
// database in one snapshot: the tarball endpoint, git sync and backups all start here.
import type { PoolClient } from "@millrace/db";
import { withTransaction } from "@millrace/db";
import {
  emptySnapshot,
  SYNC_LANGUAGES,
  type Json,
  type JsonObject,
  type SyncLanguage,
  type WorkspaceSnapshot,
} from "@millrace/sync";
import { recordAudit } from "../audit/index.ts";
import type { CoreContext } from "../context.ts";
import type { StoredLargeFileStorage } from "../object-storage/settings.ts";
import { requirePermission } from "../permissions.ts";
import type { SecretsContext } from "../secrets/context.ts";
import type { CallMeta } from "../variables/variables.ts";
import { OPERATOR_SETTINGS } from "../windmill-settings.ts";
import type { Membership } from "../membership.ts";

const isLanguage = (language: string): language is SyncLanguage =>
  (SYNC_LANGUAGES as readonly string[]).includes(language);

async function rows<T>(client: PoolClient, sql: string, workspaceId: string): Promise<T[]> {
  return (await client.query<T & object>(sql, [workspaceId])).rows;
}

/**
 * Everything a workspace's admins configured, secrets as their `enc:v2:` ciphertext (never
 * decrypted here). Admins only: the export holds every path of the workspace, whatever its
 * folder grants. Read in one REPEATABLE READ transaction, so the parts agree with each other.
 */
export async function exportWorkspaceSnapshot(
  ctx: CoreContext,
  membership: Membership,
): Promise<WorkspaceSnapshot> {
  requirePermission(membership, "workspace.manage");
  return withTransaction(ctx.pool, async (client) => {
    await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    return readWorkspaceSnapshot(client, membership.workspace.id);
  });
}

/**
 * Decrypts the secrets of an exported snapshot in place: Windmill's `plain_secret=true`, which
 * `wmill sync pull/push --plain-secrets` asks for (a repository holding plain secrets compares
 * them with these). Admins only, as the export itself: they can read every secret of the
 * workspace anyway. Each secret decrypted is audited as `variables.decrypt_secret`, as a read of
 * its value is.
 */
export async function revealSnapshotSecrets(
  ctx: SecretsContext,
  membership: Membership,
  snapshot: WorkspaceSnapshot,
  meta: CallMeta = {},
): Promise<void> {
  requirePermission(membership, "workspace.manage");
  const workspaceId = membership.workspace.id;
  for (const variable of snapshot.variables) {
    if (!variable.is_secret) continue;
    variable.value = await ctx.secrets.decrypt(ctx.pool, workspaceId, variable.value);
    await recordAudit(ctx.pool, membership.principal, {
      workspaceId,
      operation: "variables.decrypt_secret",
      resource: variable.path,
      ip: meta.ip ?? null,
    });
  }
}

/** The snapshot of workspace `ws`, read with `client` (callers check rights and isolation). */
export async function readWorkspaceSnapshot(client: PoolClient, ws: string): Promise<WorkspaceSnapshot> {
  const snapshot = emptySnapshot();
  const scripts = await rows<{
    path: string;
    language: string;
    content: string;
    summary: string;
    description: string;
    schema: JsonObject | null;
    lock: string | null;
    tag: string | null;
    timeout_secs: number | null;
    priority: number | null;
    concurrent_limit: number | null;
    concurrency_time_window_s: number | null;
    concurrency_key: string | null;
    retry: JsonObject | null;
    memory_limit_mb: number | null;
  }>(
    client,
    `SELECT DISTINCT ON (path) path, language, content, summary, description,
                COALESCE(declared_schema, schema) AS schema, lock, tag,
                timeout_secs, priority, concurrent_limit, concurrency_time_window_s, concurrency_key,
                retry, memory_limit_mb, archived
           FROM script WHERE workspace_id = $1
          ORDER BY path, created_at DESC`,
    ws,
  );
  for (const s of scripts as ((typeof scripts)[number] & { archived: boolean })[]) {
    // The latest version decides: an archived script is not part of the workspace any more.
    if (s.archived || !isLanguage(s.language)) continue;
    snapshot.scripts.push({
      path: s.path,
      language: s.language,
      content: s.content,
      summary: s.summary,
      description: s.description,
      schema: s.schema ?? {},
      lock: s.lock,
      tag: s.tag,
      timeout: s.timeout_secs,
      priority: s.priority,
      concurrent_limit: s.concurrent_limit,
      concurrency_time_window_s: s.concurrency_time_window_s,
      concurrency_key: s.concurrency_key,
      retry: s.retry,
      memory_limit_mb: s.memory_limit_mb,
    });
  }
  const folders = await rows<{
    name: string;
    summary: string | null;
    grants: { p: string; l: string; x: boolean | null }[];
  }>(
    client,
    `SELECT f.name, f.summary,
                COALESCE(json_agg(json_build_object('p', p.principal, 'l', p.level, 'x', p.owner_extra)
                                  ORDER BY p.level <> 'owner', p.position, p.principal)
                         FILTER (WHERE p.principal IS NOT NULL), '[]') AS grants
           FROM folder f LEFT JOIN folder_permission p ON p.workspace_id = f.workspace_id AND p.folder_name = f.name
          WHERE f.workspace_id = $1 GROUP BY f.name, f.summary ORDER BY f.name`,
    ws,
  );
  for (const f of folders) {
    snapshot.folders.push({
      name: f.name,
      display_name: f.name,
      summary: f.summary,
      // In the order given (wmill compares the list as is).
      owners: f.grants.filter((g) => g.l === "owner").map((g) => g.p),
      // Every grant but the owners, plus the owners the folder's extra_perms listed (Windmill's
      // repositories hold both forms: FolderPermission.ownerExtra).
      extra_perms: Object.fromEntries(
        [...f.grants]
          .sort((a, b) => (a.p < b.p ? -1 : 1))
          .flatMap((g) => (g.l !== "owner" ? [[g.p, g.l === "writer"]] : g.x === null ? [] : [[g.p, g.x]])),
      ),
    });
  }
  const groups = await rows<{ name: string; summary: string | null; members: string[] }>(
    client,
    `SELECT g.name, g.summary,
                COALESCE(array_agg(u.username ORDER BY u.username) FILTER (WHERE u.username IS NOT NULL), '{}') AS members
           FROM "group" g
           LEFT JOIN group_member m ON m.workspace_id = g.workspace_id AND m.group_name = g.name
           LEFT JOIN "user" u ON u.id = m.user_id
          WHERE g.workspace_id = $1 GROUP BY g.name, g.summary ORDER BY g.name`,
    ws,
  );
  for (const g of groups)
    snapshot.groups.push({ name: g.name, summary: g.summary, members: g.members, admins: [] });
  for (const r of await rows<{
    path: string;
    resource_type: string;
    value: Json;
    description: string | null;
  }>(
    client,
    "SELECT path, resource_type, value, description FROM resource WHERE workspace_id = $1 ORDER BY path",
    ws,
  )) {
    snapshot.resources.push(r);
  }
  for (const t of await rows<{ name: string; schema: JsonObject; description: string }>(
    client,
    "SELECT name, schema, description FROM resource_type WHERE workspace_id = $1 ORDER BY name",
    ws,
  )) {
    snapshot.resourceTypes.push(t);
  }
  for (const v of await rows<{
    path: string;
    value: string;
    is_secret: boolean;
    description: string;
    file_fields: JsonObject | null;
  }>(
    client,
    "SELECT path, value, is_secret, description, file_fields FROM variable WHERE workspace_id = $1 ORDER BY path",
    ws,
  )) {
    snapshot.variables.push(v);
  }
  for (const s of await rows<{
    path: string;
    schedule: string;
    timezone: string;
    script_path: string;
    is_flow: boolean;
    args: JsonObject;
    enabled: boolean;
    summary: string;
  }>(
    client,
    `SELECT path, schedule, timezone, script_path, is_flow, args, enabled, summary
           FROM schedule WHERE workspace_id = $1 ORDER BY path`,
    ws,
  )) {
    snapshot.schedules.push({ ...s, summary: s.summary || null });
  }
  for (const f of await rows<{
    path: string;
    summary: string;
    description: string;
    value: JsonObject;
    schema: JsonObject | null;
    ws_error_handler_muted: boolean | null;
  }>(
    client,
    `SELECT path, summary, description, value, schema, ws_error_handler_muted
       FROM flow WHERE workspace_id = $1 AND NOT archived ORDER BY path`,
    ws,
  )) {
    snapshot.flows.push({ ...f, schema: f.schema ?? null });
  }
  // settings.yaml: what getSettings answers of these (the storage without who configured it).
  const workspace = (
    await rows<{ name: string; color: string | null; large_file_storage: StoredLargeFileStorage | null }>(
      client,
      "SELECT name, color, large_file_storage FROM workspace WHERE id = $1",
      ws,
    )
  )[0];
  if (workspace) {
    snapshot.settings = {
      name: workspace.name,
      color: workspace.color,
      large_file_storage: (workspace.large_file_storage?.setting ?? null) as JsonObject | null,
      operator_settings: { ...OPERATOR_SETTINGS },
    };
  }
  return snapshot;
}
