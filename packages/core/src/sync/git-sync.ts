// Server-side git sync: every change of a linked workspace becomes one commit on its remote,
// authored by whoever made the change, pushed by an asynchronous run (a deploy never waits for
// git, and never fails because of it).
//
// The changes come from the audit log, written in the same transaction as each change: a run
// takes the synced operations after the link's watermark (`synced_audit_id`) in id order, commits
// each one's files (their state now) as its actor, then commits whatever else differs from the
// workspace (e.g. a lock computed later, a row whose audit id was allocated before the watermark
// but committed after it) as Millrace, and pushes. Only a successful push moves the watermark,
// so a failed run loses nothing: the next one starts again from the remote head.
//
// One run at a time per workspace, across every server: a transaction-level advisory lock in a
// transaction held open, on a connection of its own, for the run's whole duration (released if
// the server dies). Not a session lock: behind PgBouncer in transaction mode a session lock would
// stay on whichever server connection took it, and its unlock could run on another.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Pool } from "@millrace/db";
import { withTransaction } from "@millrace/db";
import {
  changedPaths,
  commitFiles,
  ensureClone,
  GitConflictError,
  GitRemoteUnavailableError,
  pushWithRebase,
  type GitAuth,
} from "@millrace/sync/git";
import { recordAudit } from "../audit/index.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { SecretsContext } from "../secrets/context.ts";
import type { Membership } from "../workspaces.ts";
import { isSyncManagedFile } from "@millrace/sync";
import { readRepositoryFiles, SYNC_KINDS } from "./repository.ts";

/** Audit operations that change what the repository holds. */
export const SYNCED_OPERATIONS = [
  "scripts.create",
  "scripts.update",
  "scripts.archive",
  "scripts.unarchive",
  "scripts.delete",
  "scripts.lock",
  "flows.create",
  "flows.update",
  "flows.archive",
  "flows.unarchive",
  "flows.delete",
  "folder.create",
  "folder.update",
  "folder.delete",
  "group.create",
  "group.edit",
  "group.delete",
  "group.adduser",
  "group.removeuser",
  "resource_types.create",
  "resource_types.update",
  "resource_types.delete",
  "resources.create",
  "resources.update",
  "resources.delete",
  "variables.create",
  "variables.update",
  "variables.delete",
  "schedule.create",
  "schedule.update",
  "schedule.delete",
  "schedule.enable",
  "schedule.disable",
  "users.add_to_workspace",
  "users.update",
  "users.delete",
  "webhooks.token.create",
  "webhooks.token.delete",
  "workspaces.sync_push",
  "workspaces.restore",
  "workspaces.change_color",
  "workspaces.edit_large_file_storage",
] as const;

const MILLRACE_AUTHOR = { name: "Millrace", email: "git-sync@millrace.invalid" };
const MAX_BACKOFF_SECS = 300;
const EVENTS_PER_RUN = 500;
const ADVISORY_LOCK_CLASS = 20_261_126;

export interface GitSyncSettings {
  remote_url: string;
  branch: string;
  username: string | null;
  /** True when a password/token is stored (it is never answered). */
  has_secret: boolean;
  include_kinds: string[];
  include_instance_config: boolean;
  include_password_hashes: boolean;
  enabled: boolean;
}

export interface GitSyncStatus {
  settings: GitSyncSettings | null;
  last_commit: string | null;
  last_commit_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
  conflict_paths: string[];
  failures: number;
  next_attempt_at: Date | null;
  /** Changes recorded but not in git yet. */
  pending_changes: number;
  runs: GitSyncRunView[];
}

export interface GitSyncRunView {
  id: string;
  trigger: string;
  status: string;
  started_at: Date;
  finished_at: Date | null;
  commits: number;
  head: string | null;
  error: string | null;
  conflict_paths: string[];
}

export interface GitSyncSettingsInput {
  remote_url: string;
  branch?: string | null;
  username?: string | null;
  /** Undefined: keep the stored one; null or "": remove it (the same for `username`). */
  password?: string | null;
  include_kinds?: string[] | null;
  include_instance_config?: boolean | null;
  include_password_hashes?: boolean | null;
  enabled?: boolean | null;
}

interface ConfigRow {
  workspace_id: string;
  remote_url: string;
  branch: string;
  username: string | null;
  secret: string | null;
  include_kinds: string[];
  include_instance_config: boolean;
  include_password_hashes: boolean;
  enabled: boolean;
  synced_audit_id: string;
  last_commit: string | null;
  last_commit_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
  conflict_paths: string[];
  failures: number;
  next_attempt_at: Date;
  sync_requested_at: Date | null;
}

const BRANCH = /^(?!\/|.*\/\/|.*\.\.|.*\.lock$|.*\/$)[A-Za-z0-9._/-]{1,200}$/;

function checkSettings(input: GitSyncSettingsInput) {
  let url: URL;
  try {
    url = new URL(input.remote_url);
  } catch {
    throw invalidInput("remote_url", "must be an http(s) URL of a git repository");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw invalidInput("remote_url", "must be an http(s) URL (git sync pushes over HTTP)");
  if (url.username || url.password)
    throw invalidInput("remote_url", "put credentials in username and password, not in the URL");
  const branch = input.branch || "main";
  if (!BRANCH.test(branch)) throw invalidInput("branch", "is not a valid git branch name");
  const kinds = input.include_kinds ?? [];
  for (const kind of kinds)
    if (!(SYNC_KINDS as readonly string[]).includes(kind))
      throw invalidInput("include_kinds", `unknown kind ${kind} (${SYNC_KINDS.join(", ")})`);
  if ((input.username ?? "").length > 200) throw invalidInput("username", "at most 200 characters");
  return { url: url.toString().replace(/\/$/, ""), branch, kinds };
}

/**
 * Links the workspace to a remote (or changes the link). The first run commits the workspace as
 * it is in one commit: the changes made before the link are not replayed one by one.
 */
export async function setGitSyncSettings(
  ctx: SecretsContext,
  membership: Membership,
  input: GitSyncSettingsInput,
): Promise<GitSyncStatus> {
  requirePermission(membership, "workspace.manage");
  const ws = membership.workspace.id;
  const { url, branch, kinds } = checkSettings(input);
  // The two superadmin options: left out, they keep their value (a workspace admin's save never
  // drops what a superadmin set); only a superadmin may turn one on.
  const { rows: existingRows } = await ctx.pool.query<{ i: boolean; p: boolean; u: string | null }>(
    `SELECT include_instance_config AS i, include_password_hashes AS p, username AS u
       FROM git_sync_config WHERE workspace_id = $1`,
    [ws],
  );
  // Like the password: left out, the stored username stays; null or "" removes it.
  const username = input.username === undefined ? (existingRows[0]?.u ?? null) : input.username || null;
  const includeInstanceConfig = input.include_instance_config ?? existingRows[0]?.i ?? false;
  const includePasswordHashes = input.include_password_hashes ?? existingRows[0]?.p ?? false;
  for (const [field, wanted, had] of [
    ["include_instance_config", includeInstanceConfig, existingRows[0]?.i ?? false],
    ["include_password_hashes", includePasswordHashes, existingRows[0]?.p ?? false],
  ] as const) {
    if (wanted && !had && !membership.principal.isSuperAdmin)
      throw new AppError(
        "FORBIDDEN",
        "only superadmins may commit the instance config or password hashes",
        field,
      );
  }
  await withTransaction(ctx.pool, async (client) => {
    // Encrypted in the transaction that stores it, under the key current when it commits.
    const secret =
      input.password === undefined
        ? undefined
        : input.password
          ? await ctx.secrets.encrypt(ctx.pool, ws, input.password, client)
          : null;
    await client.query(
      `INSERT INTO git_sync_config (workspace_id, remote_url, branch, username, secret, include_kinds,
          include_instance_config, include_password_hashes, enabled, created_by, created_at, updated_at,
          sync_requested_at, next_attempt_at, synced_audit_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now(), now(), now(), now(),
               (SELECT COALESCE(max(id), 0) FROM audit_log WHERE workspace_id = $1))
       ON CONFLICT (workspace_id) DO UPDATE SET remote_url = EXCLUDED.remote_url, branch = EXCLUDED.branch,
          username = EXCLUDED.username, secret = CASE WHEN $11 THEN git_sync_config.secret ELSE EXCLUDED.secret END,
          include_kinds = EXCLUDED.include_kinds, include_instance_config = EXCLUDED.include_instance_config,
          include_password_hashes = EXCLUDED.include_password_hashes, enabled = EXCLUDED.enabled,
          updated_at = now(), sync_requested_at = now(), next_attempt_at = now(), failures = 0`,
      [
        ws,
        url,
        branch,
        username,
        secret ?? null,
        kinds,
        includeInstanceConfig,
        includePasswordHashes,
        input.enabled !== false,
        membership.principal.username,
        secret === undefined,
      ],
    );
    await recordAudit(client, membership.principal, {
      workspaceId: ws,
      operation: "git_sync.configure",
      resource: url,
      parameters: { branch, include_kinds: kinds, enabled: input.enabled !== false },
    });
  });
  return getGitSyncStatus(ctx, membership);
}

export async function deleteGitSyncSettings(ctx: SecretsContext, membership: Membership): Promise<void> {
  requirePermission(membership, "workspace.manage");
  const ws = membership.workspace.id;
  const { rowCount } = await ctx.pool.query("DELETE FROM git_sync_config WHERE workspace_id = $1", [ws]);
  if (!rowCount) throw notFound("git sync settings");
  await recordAudit(ctx.pool, membership.principal, { workspaceId: ws, operation: "git_sync.unlink" });
}

/** "Sync now": the next run starts at once and commits whatever differs. */
export async function requestGitSync(ctx: SecretsContext, membership: Membership): Promise<void> {
  requirePermission(membership, "workspace.manage");
  const { rowCount } = await ctx.pool.query(
    `UPDATE git_sync_config SET sync_requested_at = now(), next_attempt_at = now() WHERE workspace_id = $1`,
    [membership.workspace.id],
  );
  if (!rowCount) throw notFound("git sync settings (link the workspace to a remote first)");
}

export async function getGitSyncStatus(ctx: SecretsContext, membership: Membership): Promise<GitSyncStatus> {
  requirePermission(membership, "workspace.manage");
  const ws = membership.workspace.id;
  const config = (
    await ctx.pool.query<ConfigRow>("SELECT * FROM git_sync_config WHERE workspace_id = $1", [ws])
  ).rows[0];
  const runs = await ctx.pool.query<GitSyncRunView & { id: string }>(
    `SELECT id::text, trigger, status, started_at, finished_at, commits, head, error, conflict_paths
       FROM git_sync_run WHERE workspace_id = $1 ORDER BY started_at DESC, id DESC LIMIT 20`,
    [ws],
  );
  const pending = config
    ? (
        await ctx.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM audit_log WHERE workspace_id = $1 AND id > $2 AND operation = ANY($3)`,
          [ws, config.synced_audit_id, SYNCED_OPERATIONS],
        )
      ).rows[0]!.n
    : 0;
  return {
    settings: config
      ? {
          remote_url: config.remote_url,
          branch: config.branch,
          username: config.username,
          has_secret: config.secret !== null,
          include_kinds: config.include_kinds,
          include_instance_config: config.include_instance_config,
          include_password_hashes: config.include_password_hashes,
          enabled: config.enabled,
        }
      : null,
    last_commit: config?.last_commit ?? null,
    last_commit_at: config?.last_commit_at ?? null,
    last_error: config?.last_error ?? null,
    last_error_at: config?.last_error_at ?? null,
    conflict_paths: config?.conflict_paths ?? [],
    failures: config?.failures ?? 0,
    next_attempt_at: config?.next_attempt_at ?? null,
    pending_changes: pending,
    runs: runs.rows,
  };
}

// ------------------------------------------------------------------------------------ the runs

interface ChangeEvent {
  id: string;
  actor: string;
  operation: string;
  resource: string | null;
  /**
   * `path` is set when an update renamed the item (variables, resources); a flow's rename is
   * recorded under its new path with `renamed_from`.
   */
  parameters: { path?: unknown; renamed_from?: unknown } | null;
}

const CODE_SUFFIX = /\.(script\.yaml|script\.lock|sh|py|ts|deno\.ts|bun\.ts|pg\.sql)$/;

/** The new path of a rename, or null. */
function renamedTo(event: ChangeEvent): string | null {
  const next = event.parameters?.path;
  return typeof next === "string" && next !== event.resource ? next : null;
}

/** The old path of a rename recorded under the new one (flows), or null. */
function renamedFrom(event: ChangeEvent): string | null {
  const previous = event.parameters?.renamed_from;
  return typeof previous === "string" && previous !== event.resource ? previous : null;
}

/** The repository files a change may have touched (a rename: the old and the new path's). */
function touches(event: ChangeEvent, file: string): boolean {
  const other = renamedTo(event) ?? renamedFrom(event);
  return (
    touchesPath(event, event.resource ?? "", file) || (other !== null && touchesPath(event, other, file))
  );
}

function touchesPath(event: ChangeEvent, r: string, file: string): boolean {
  const kind = event.operation.split(".")[0];
  switch (kind) {
    case "scripts":
      return file.startsWith(`${r}.`) && CODE_SUFFIX.test(file) && !file.slice(r.length + 1).includes("/");
    case "flows":
      return file.startsWith(`${r}__flow/`) || file.startsWith(`${r}.flow/`);
    case "variables":
      return file === `${r}.variable.yaml`;
    case "resources":
      return file === `${r}.resource.yaml`;
    case "resource_types":
      return file === `${r}.resource-type.yaml`;
    case "schedule":
      return file === `${r}.schedule.yaml`;
    case "folder":
      return file === `f/${r}/folder.meta.yaml`;
    case "group":
      return file === `groups/${r}.group.yaml`;
    case "users":
    case "webhooks":
      return file === ".millrace/workspace.yaml";
    case "workspaces":
      if (
        event.operation === "workspaces.change_color" ||
        event.operation === "workspaces.edit_large_file_storage"
      )
        return file === "settings.yaml";
      return true; // restore / push: everything
    default:
      return true; // restore / push: everything
  }
}

const NOUNS: Record<string, string> = {
  scripts: "script",
  flows: "flow",
  variables: "variable",
  resources: "resource",
  resource_types: "resource type",
  schedule: "schedule",
  folder: "folder",
  group: "group",
  users: "member",
  webhooks: "webhook token",
  workspaces: "workspace",
};

function commitMessage(event: ChangeEvent): string {
  const [kind = "", ...rest] = event.operation.split(".");
  const action = rest.join(" ").replace("token ", "");
  const verb =
    {
      create: "Create",
      update: "Update",
      edit: "Update",
      delete: "Delete",
      archive: "Delete",
      unarchive: "Restore",
      lock: "Lock dependencies of",
      enable: "Enable",
      disable: "Disable",
      adduser: "Add a member to",
      removeuser: "Remove a member from",
      add_to_workspace: "Add",
      restore: "Restore",
      sync_push: "Push to",
    }[action] ?? action;
  if (event.operation === "workspaces.change_color")
    return `Change the color of workspace ${event.resource ?? ""}`;
  if (event.operation === "workspaces.edit_large_file_storage")
    return `Update the object storage of workspace ${event.resource ?? ""}`;
  const next = renamedTo(event);
  if (next) return `Rename ${NOUNS[kind] ?? kind} ${event.resource ?? ""} to ${next}`;
  const previous = renamedFrom(event);
  if (previous) return `Rename ${NOUNS[kind] ?? kind} ${previous} to ${event.resource ?? ""}`;
  return `${verb} ${NOUNS[kind] ?? kind} ${event.resource ?? ""}`.trim();
}

async function workingFiles(dir: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.promises.readdir(path.join(dir, rel), { withFileTypes: true })) {
    if (rel === "" && entry.name === ".git") continue;
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await workingFiles(dir, child)));
    else out.push(child);
  }
  return out;
}

async function readWorking(dir: string, file: string): Promise<string | null> {
  return fs.promises.readFile(path.join(dir, file), "utf8").catch(() => null);
}

export interface GitSyncRunOptions {
  /** Where the working copies live (one folder per workspace). */
  cacheDir: string;
  trigger?: string;
}

export interface GitSyncRunResult {
  status: "success" | "failure" | "busy";
  commits: number;
  head: string | null;
  error?: string;
}

function backoffSecs(failures: number): number {
  return Math.min(MAX_BACKOFF_SECS, 2 ** Math.min(failures, 10));
}

/**
 * One sync of workspace `ws`: commits the pending changes and pushes. Returns "busy" when another
 * server runs this workspace's sync right now.
 */
export async function runGitSync(
  ctx: SecretsContext,
  ws: string,
  options: GitSyncRunOptions,
): Promise<GitSyncRunResult> {
  const lockClient = await ctx.pool.connect();
  try {
    await lockClient.query("BEGIN");
    const { rows: locked } = await lockClient.query<{ ok: boolean }>(
      "SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS ok",
      [ADVISORY_LOCK_CLASS, ws],
    );
    if (!locked[0]?.ok) return { status: "busy", commits: 0, head: null };
    return await runLocked(ctx, ws, options);
  } finally {
    // Ends the transaction (it wrote nothing), and with it the lock. A connection that cannot
    // even roll back is dropped, not handed back to the pool.
    await lockClient.query("ROLLBACK").then(
      () => lockClient.release(),
      (error: Error) => lockClient.release(error),
    );
  }
}

async function runLocked(
  ctx: SecretsContext,
  ws: string,
  options: GitSyncRunOptions,
): Promise<GitSyncRunResult> {
  const config = (
    await ctx.pool.query<ConfigRow>("SELECT * FROM git_sync_config WHERE workspace_id = $1", [ws])
  ).rows[0];
  if (!config) return { status: "busy", commits: 0, head: null };
  const { rows: events } = await ctx.pool.query<ChangeEvent>(
    `SELECT id::text, actor, operation, resource, parameters FROM audit_log
      WHERE workspace_id = $1 AND id > $2 AND operation = ANY($3) ORDER BY id LIMIT ${EVENTS_PER_RUN}`,
    [ws, config.synced_audit_id, SYNCED_OPERATIONS],
  );
  const trigger =
    options.trigger ?? (config.sync_requested_at ? "manual" : events.length > 0 ? "change" : "reconcile");
  const startedAt = new Date();
  const run = await ctx.pool.query<{ id: string }>(
    `INSERT INTO git_sync_run (workspace_id, trigger, status, started_at) VALUES ($1, $2, 'running', $3)
     RETURNING id::text`,
    [ws, trigger, startedAt],
  );
  const runId = run.rows[0]!.id;
  let commits = 0;
  try {
    const auth: GitAuth | undefined =
      config.username || config.secret
        ? {
            username: config.username ?? "git",
            password: config.secret ? await ctx.secrets.decrypt(ctx.pool, ws, config.secret) : undefined,
          }
        : undefined;
    const dir = path.join(options.cacheDir, ws);
    const remote = { dir, url: config.remote_url, branch: config.branch, auth };
    const { remoteHead } = await ensureClone({ ...remote, discardLocal: true });
    const files = await readRepositoryFiles(ctx.pool, ws, {
      includeKinds: config.include_kinds,
      instanceConfig: config.include_instance_config,
      passwordHashes: config.include_password_hashes,
    });
    // Someone else pushed since our last push: the files they changed that this run would change
    // too are a conflict (theirs is never overwritten); their other files are simply kept (the
    // commits below are made on top of their head: a rebase).
    if (config.last_commit && remoteHead && remoteHead !== config.last_commit) {
      const theirs = await changedPaths(dir, config.last_commit, remoteHead);
      const conflicts: string[] = [];
      for (const file of theirs ?? []) {
        if (!isSyncManagedFile(file)) continue;
        const wanted = files.get(file);
        const current = await readWorking(dir, file);
        if ((wanted ?? null) !== current) conflicts.push(file);
      }
      if (conflicts.length > 0) throw new GitConflictError(config.remote_url, config.branch, conflicts);
    }
    const authors = new Map<string, { name: string; email: string }>();
    const authorOf = async (actor: string) => {
      let author = authors.get(actor);
      if (!author) {
        const { rows } = await ctx.pool.query<{ email: string; name: string | null }>(
          `SELECT email, name FROM "user" WHERE username = $1`,
          [actor],
        );
        author = { name: rows[0]?.name || actor, email: rows[0]?.email ?? `${actor}@millrace.invalid` };
        authors.set(actor, author);
      }
      return author;
    };

    const present = new Set(await workingFiles(dir));
    for (const event of events) {
      const candidates = new Set(
        [...files.keys(), ...present].filter((f) => isSyncManagedFile(f) && touches(event, f)),
      );
      const write = new Map<string, string>();
      const deleted: string[] = [];
      for (const file of candidates) {
        const wanted = files.get(file);
        if (wanted === undefined) {
          if (present.has(file)) deleted.push(file);
        } else if ((await readWorking(dir, file)) !== wanted) write.set(file, wanted);
      }
      if (write.size === 0 && deleted.length === 0) continue;
      const oid = await commitFiles({
        dir,
        files: write,
        deleted,
        author: await authorOf(event.actor),
        message: commitMessage(event),
      });
      for (const file of write.keys()) present.add(file);
      for (const file of deleted) present.delete(file);
      if (oid) commits++;
    }
    // Whatever else differs (see the header), in one commit by Millrace: on "sync now" and on the
    // periodic comparison, not on every change (it reads the whole tree).
    const reconcile = trigger !== "change";
    if (reconcile) {
      const rest = [...present].filter((f) => isSyncManagedFile(f) && !files.has(f));
      const oid = await commitFiles({
        dir,
        files,
        deleted: rest,
        author: MILLRACE_AUTHOR,
        message: `Sync workspace ${ws}`,
      });
      if (oid) commits++;
    }
    const pushed = await pushWithRebase(remote);
    const head = pushed.head;
    const watermark = events.at(-1)?.id ?? config.synced_audit_id;
    await withTransaction(ctx.pool, async (client) => {
      await client.query(
        `UPDATE git_sync_config SET synced_audit_id = GREATEST(synced_audit_id, $2::bigint),
            last_commit = COALESCE($3, last_commit), last_commit_at = CASE WHEN $3::text IS NULL THEN last_commit_at ELSE now() END,
            last_error = NULL, conflict_paths = '{}', failures = 0, next_attempt_at = now(),
            last_reconcile_at = CASE WHEN $5 THEN now() ELSE last_reconcile_at END,
            sync_requested_at = CASE WHEN sync_requested_at <= $4 THEN NULL ELSE sync_requested_at END
          WHERE workspace_id = $1`,
        [ws, watermark, head, startedAt, reconcile],
      );
      // A periodic comparison that found nothing to commit is not worth a row on the page.
      if (trigger === "reconcile" && commits === 0)
        await client.query("DELETE FROM git_sync_run WHERE id = $1::bigint", [runId]);
      else
        await client.query(
          `UPDATE git_sync_run SET status = 'success', finished_at = now(), commits = $2, head = $3 WHERE id = $1::bigint`,
          [runId, commits, head],
        );
      if (config.failures > 0)
        await recordAudit(client, "millrace", {
          workspaceId: ws,
          operation: "git_sync.recovered",
          resource: config.remote_url,
          parameters: { after_failures: config.failures, head },
        });
    });
    return { status: "success", commits, head };
  } catch (error) {
    const message = describeError(error);
    const conflicts = error instanceof GitConflictError ? error.paths : [];
    const failures = config.failures + 1;
    await withTransaction(ctx.pool, async (client) => {
      await client.query(
        `UPDATE git_sync_config SET last_error = $2, last_error_at = now(), conflict_paths = $3, failures = $4,
            next_attempt_at = now() + make_interval(secs => $5)
          WHERE workspace_id = $1`,
        [ws, message, conflicts, failures, backoffSecs(failures)],
      );
      await client.query(
        `UPDATE git_sync_run SET status = 'failure', finished_at = now(), commits = 0, error = $2, conflict_paths = $3
          WHERE id = $1::bigint`,
        [runId, message, conflicts],
      );
      // The first failure of a streak goes to the audit log (not every retry).
      if (config.failures === 0)
        await recordAudit(client, "millrace", {
          workspaceId: ws,
          operation: "git_sync.failure",
          resource: config.remote_url,
          parameters: { error: message, conflict_paths: conflicts },
        });
    });
    return { status: "failure", commits: 0, head: null, error: message };
  }
}

function describeError(error: unknown): string {
  if (error instanceof GitConflictError) return error.message;
  if (error instanceof GitRemoteUnavailableError) return `${error.message} (retrying with backoff)`;
  return error instanceof Error ? error.message : String(error);
}

/** Retention of the runs shown on the Git sync page. */
export async function deleteOldGitSyncRuns(pool: Pool, retentionDays = 30): Promise<number> {
  const { rowCount } = await pool.query(
    "DELETE FROM git_sync_run WHERE started_at < now() - make_interval(days => $1)",
    [retentionDays],
  );
  return rowCount ?? 0;
}

// ------------------------------------------------------------------------------------ the loop

export interface GitSyncLoopOptions {
  cacheDir?: string;
  /** How often servers look for work (ms). */
  pollMs?: number;
  /** A linked workspace is compared with its remote at least this often (ms), even without changes. */
  reconcileMs?: number;
  log?: (message: string) => void;
}

export interface GitSyncLoop {
  stop(): Promise<void>;
}

/** The default folder of working copies: per database, so two instances on a host never share. */
export function defaultGitSyncCacheDir(databaseName: string): string {
  return path.join(os.tmpdir(), "millrace-git-sync", databaseName.replace(/[^A-Za-z0-9_-]/g, "_"));
}

/** Workspaces whose sync is due: a change not in git yet, a "sync now", or a reconcile. */
export async function dueGitSyncs(pool: Pool, reconcileMs: number): Promise<string[]> {
  const { rows } = await pool.query<{ workspace_id: string }>(
    `SELECT c.workspace_id FROM git_sync_config c JOIN workspace w ON w.id = c.workspace_id AND NOT w.deleted
      WHERE c.enabled AND c.next_attempt_at <= now()
        AND (c.sync_requested_at IS NOT NULL
             OR c.last_reconcile_at IS NULL OR c.last_reconcile_at < now() - make_interval(secs => $2)
             OR EXISTS (SELECT 1 FROM audit_log a WHERE a.workspace_id = c.workspace_id
                          AND a.id > c.synced_audit_id AND a.operation = ANY($1)))
      ORDER BY c.next_attempt_at`,
    [SYNCED_OPERATIONS, reconcileMs / 1000],
  );
  return rows.map((r) => r.workspace_id);
}

/** Every server runs this loop; the advisory lock lets one run per workspace at a time. */
export function startGitSyncLoop(ctx: SecretsContext, options: GitSyncLoopOptions = {}): GitSyncLoop {
  const pollMs = options.pollMs ?? 1000;
  const reconcileMs = options.reconcileMs ?? 5 * 60_000;
  const log = options.log ?? (() => {});
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void> = Promise.resolve();
  const cacheDirPromise = options.cacheDir
    ? Promise.resolve(options.cacheDir)
    : ctx.pool
        .query<{ db: string }>("SELECT current_database() AS db")
        .then(({ rows }) => defaultGitSyncCacheDir(rows[0]!.db));

  const tick = async () => {
    const cacheDir = await cacheDirPromise;
    for (const ws of await dueGitSyncs(ctx.pool, reconcileMs)) {
      if (stopped) return;
      const result = await runGitSync(ctx, ws, { cacheDir });
      if (result.status === "failure") log(`${ws}: ${result.error}`);
      else if (result.status === "success" && result.commits > 0)
        log(`${ws}: pushed ${result.commits} commit(s), head ${result.head?.slice(0, 10)}`);
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      current = tick()
        .catch((error: unknown) =>
          log(`git sync loop: ${error instanceof Error ? error.message : String(error)}`),
        )
        .finally(schedule);
    }, pollMs);
    timer.unref?.();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
