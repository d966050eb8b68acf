// Windmill's workspace forks (`wmill workspace fork` / `delete-fork` / `merge`) and the hard delete
// of a workspace.
//
// A fork is a new workspace whose content is the parent's, copied with the sync machinery: the
// parent is exported as a snapshot (sync/export.ts) and restored into the fork (sync/restore.ts),
// as a `wmill sync push` of the parent's repository would. Schedules arrive disabled (as in
// Windmill: a fork must not run the parent's schedules twice). Secrets are re-encrypted for the
// fork: a secret's ciphertext is bound to its workspace (AES-GCM with the workspace id as associated
// data, under the workspace's own data key), so the parent's ciphertext would not open in the fork;
// values are decrypted and encrypted again in memory only, never logged nor answered.
//
// The fork is private to its creator, its only member (admin): group members and folder grants that
// name other users are left out (they are not members of the fork), grants to groups are kept.
//
// Ahead/behind (compare, reset_diff_tally): at the fork and at every reset, a hash of every item on
// each side is recorded in the parent's audit log (operation `workspaces.fork` or
// `workspaces.reset_diff_tally`, resource the fork's id). An item differs when the two sides' contents
// differ; it is "ahead" when the fork's side changed since that baseline and "behind" when the
// parent's did (both: a conflict). Counts are 0 or 1 (Windmill counts versions). When the baseline is
// gone (audit retention), the comparison answers `skipped_comparison`, as Windmill does for forks it
// did not track.
import { createHash } from "node:crypto";
import { withTransaction, type PoolClient } from "@millrace/db";
import { snapshotToFiles, type WorkspaceSnapshot } from "@millrace/sync";
import { recordAudit } from "./audit/index.ts";
import { refuseJobCredential, type Principal } from "./auth/principal.ts";
import type { CoreContext } from "./context.ts";
import { AppError, invalidInput, notFound } from "./errors.ts";
import { checkOpenFlow } from "./flows/validate.ts";
import { requirePermission } from "./permissions.ts";
import type { SecretsContext } from "./secrets/context.ts";
import { readWorkspaceSnapshot } from "./sync/export.ts";
import { restoreWorkspaceFiles, type RestoreContext } from "./sync/restore.ts";
import { ADMINS_WORKSPACE, createWorkspace, requireMembership, type Membership } from "./workspaces.ts";

export interface CreateForkInput {
  id: string;
  name: string;
}

/** Windmill's WorkspaceItemDiff kinds that Millrace has. */
export type ForkItemKind =
  "script" | "flow" | "resource" | "variable" | "resource_type" | "folder" | "schedule";

export interface ForkItemDiff {
  kind: ForkItemKind;
  path: string;
  ahead: number;
  behind: number;
  has_changes: boolean;
  exists_in_source: boolean;
  exists_in_fork: boolean;
}

export interface ForkComparison {
  skipped: boolean;
  diffs: ForkItemDiff[];
}

interface Baseline {
  source: Record<string, string>;
  fork: Record<string, string>;
}

/**
 * Forking needs the parent's `workspace.manage` (admins): the fork receives every item of the
 * parent whatever its folder grants, secrets included (the export is admins-only for that reason).
 * A developer sees only the folders granted to them, so copying everything for them would leak.
 */
function requireForkRights(membership: Membership): void {
  refuseJobCredential(membership.principal, "fork workspaces");
  requirePermission(membership, "workspace.manage");
}

async function readSnapshots(ctx: CoreContext, ids: string[]): Promise<WorkspaceSnapshot[]> {
  return withTransaction(ctx.pool, async (client) => {
    await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const out: WorkspaceSnapshot[] = [];
    for (const id of ids) out.push(await readWorkspaceSnapshot(client, id));
    return out;
  });
}

/** JSON with sorted keys (jsonb answers keys in its own order). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32);

/**
 * The items of a snapshot as `kind:path` → comparable content. `enabled` of schedules is left
 * out (a fork's schedules are disabled on purpose), and of folders only the summary counts (grants
 * name the workspace's people, not its content). Secret values stay as stored (ciphertext).
 */
function items(
  snapshot: WorkspaceSnapshot,
): Map<string, { kind: ForkItemKind; path: string; content: unknown }> {
  const out = new Map<string, { kind: ForkItemKind; path: string; content: unknown }>();
  const add = (kind: ForkItemKind, path: string, content: unknown) =>
    out.set(`${kind}:${path}`, { kind, path, content });
  for (const s of snapshot.scripts) add("script", s.path, s);
  for (const f of snapshot.flows) add("flow", f.path, f);
  for (const r of snapshot.resources) add("resource", r.path, r);
  for (const v of snapshot.variables) add("variable", v.path, v);
  for (const t of snapshot.resourceTypes) add("resource_type", t.name, t);
  for (const f of snapshot.folders) add("folder", f.name, { name: f.name, summary: f.summary });
  for (const s of snapshot.schedules) {
    const { enabled: _enabled, ...rest } = s;
    add("schedule", s.path, rest);
  }
  return out;
}

function hashes(snapshot: WorkspaceSnapshot): Record<string, string> {
  return Object.fromEntries(
    [...items(snapshot)].map(([key, item]) => [key, digest(canonical(item.content))]),
  );
}

/** The flows that validate against the scripts and flows copied with them (to a fixed point). */
async function runnableFlows(
  snapshot: WorkspaceSnapshot,
  scriptPaths: Set<string>,
): Promise<WorkspaceSnapshot["flows"]> {
  let kept = snapshot.flows;
  for (;;) {
    const flowPaths = new Set(kept.map((f) => f.path));
    const next: WorkspaceSnapshot["flows"] = [];
    for (const flow of kept) {
      try {
        // A flow calling a script the fork does not get still deploys (with warnings): forks keep
        // only the flows whose every step can run.
        const { warnings } = await checkOpenFlow(
          {
            summary: flow.summary,
            description: flow.description,
            value: flow.value,
            ...(flow.schema ? { schema: flow.schema } : {}),
          },
          { scriptExists: (path) => scriptPaths.has(path), flowExists: (path) => flowPaths.has(path) },
        );
        if (warnings.length === 0) next.push(flow);
      } catch {
        // Left out (see createWorkspaceFork).
      }
    }
    if (next.length === kept.length) return next;
    kept = next;
  }
}

async function forkMembers(ctx: CoreContext, forkId: string): Promise<Set<string>> {
  const { rows } = await ctx.pool.query<{ username: string }>(
    `SELECT u.username FROM workspace_member m JOIN "user" u ON u.id = m.user_id WHERE m.workspace_id = $1`,
    [forkId],
  );
  return new Set(rows.map((r) => r.username));
}

/**
 * Creates the fork `input.id` of the caller's workspace with the parent's content; the caller is
 * its admin. Answers the fork's id. All or nothing: a fork whose copy fails is deleted again.
 */
export async function createWorkspaceFork(
  ctx: RestoreContext,
  parent: Membership,
  input: CreateForkInput,
): Promise<string> {
  requireForkRights(parent);
  const parentId = parent.workspace.id;
  if (parentId === ADMINS_WORKSPACE) throw invalidInput("workspace", "the admins workspace cannot be forked");
  const [snapshot] = await readSnapshots(ctx, [parentId]);
  if (!snapshot) throw notFound(`workspace ${parentId}`);
  const secrets = snapshot.variables.filter((v) => v.is_secret);
  if (secrets.length > 0 && !ctx.secrets.configured)
    throw new AppError(
      "INVALID_INPUT",
      "MILLRACE_SECRET_KEY is not set on this server: secrets cannot be copied",
    );
  // Plain values in memory only, to encrypt again under the fork's key.
  const plain = new Map<string, string>();
  for (const v of secrets) plain.set(v.path, await ctx.secrets.decrypt(ctx.pool, parentId, v.value));

  const principal = parent.principal;
  const fork = await createWorkspace(ctx, principal, { id: input.id, name: input.name });
  try {
    await ctx.pool.query("UPDATE workspace SET parent_workspace_id = $2 WHERE id = $1", [fork.id, parentId]);
    const members = await forkMembers(ctx, fork.id);
    // What could never run in the parent either is left out (a repository with it would be
    // refused), and named in the audit entry: a flow that no longer validates (a step names a
    // script or flow archived since), then a schedule whose script or flow is not copied.
    const scriptPaths = new Set(snapshot.scripts.map((x) => x.path));
    const flows = await runnableFlows(snapshot, scriptPaths);
    const flowPaths = new Set(flows.map((x) => x.path));
    const runnable = (s: WorkspaceSnapshot["schedules"][number]) =>
      (s.is_flow ? flowPaths : scriptPaths).has(s.script_path);
    const leftOut = [
      ...snapshot.flows.filter((f) => !flowPaths.has(f.path)).map((f) => `flow:${f.path}`),
      ...snapshot.schedules.filter((s) => !runnable(s)).map((s) => `schedule:${s.path}`),
    ];
    const copy: WorkspaceSnapshot = {
      ...snapshot,
      flows,
      schedules: snapshot.schedules.filter(runnable).map((s) => ({ ...s, enabled: false })),
      groups: snapshot.groups.map((g) => ({
        ...g,
        members: g.members.filter((m) => members.has(m)),
        admins: g.admins.filter((m) => members.has(m)),
      })),
      folders: snapshot.folders.map((f) => {
        const keep = (p: string) => !p.startsWith("u/") || members.has(p.slice(2));
        return {
          ...f,
          owners: f.owners.filter(keep),
          extra_perms: Object.fromEntries(Object.entries(f.extra_perms).filter(([p]) => keep(p))),
        };
      }),
      variables: [],
      // The fork keeps its own name and color (settings.yaml is the parent's).
      settings: undefined,
    };
    for (const v of snapshot.variables) {
      const value = v.is_secret
        ? await ctx.secrets.encrypt(ctx.pool, fork.id, plain.get(v.path) ?? "")
        : v.value;
      copy.variables.push({ ...v, value });
    }
    const forkMembership = await requireMembership(ctx, principal, fork.id);
    const report = await restoreWorkspaceFiles(ctx, principal, snapshotToFiles(copy), {
      scope: "workspace",
      workspaceId: fork.id,
      membership: forkMembership,
      yes: true,
    });
    if (!report.applied) {
      const reasons = report.errors.map((e) => `${e.file}${e.field ? ` (${e.field})` : ""}: ${e.message}`);
      throw new AppError("INVALID_INPUT", `the parent's content could not be copied: ${reasons.join("; ")}`);
    }
    const [forkSnapshot] = await readSnapshots(ctx, [fork.id]);
    const baseline: Baseline = { source: hashes(snapshot), fork: hashes(forkSnapshot!) };
    await recordAudit(ctx.pool, principal, {
      workspaceId: parentId,
      operation: "workspaces.fork",
      resource: fork.id,
      parameters: { name: input.name, counts: report.counts, left_out: leftOut, baseline },
    });
    return fork.id;
  } catch (error) {
    await hardDeleteWorkspace(ctx, principal, fork.id, null).catch(() => {});
    throw error;
  }
}

/**
 * Windmill's `create_workspace_fork_branch` asks the parent's git sync to create the fork's branch
 * (`wm-fork/<branch>/<id>`) in the synced repositories and answers the ids of the jobs doing it.
 * Millrace's git sync commits one branch per workspace from the server and has no such jobs: this
 * checks the same rights and id as the fork itself and answers no job (the branch is the one
 * `wmill workspace fork` tells its user to create and push).
 */
export async function createWorkspaceForkBranch(
  parent: Membership,
  input: CreateForkInput,
): Promise<string[]> {
  requireForkRights(parent);
  if (!input.id.trim()) throw invalidInput("id", "must not be empty");
  return [];
}

interface ForkPair {
  source: Membership;
  fork: Membership;
}

async function forkPair(
  ctx: CoreContext,
  source: Membership,
  forkId: string,
  field: string,
): Promise<ForkPair> {
  requireForkRights(source);
  const fork = await requireMembership(ctx, source.principal, forkId);
  requirePermission(fork, "workspace.manage");
  if (fork.workspace.parentWorkspaceId !== source.workspace.id)
    throw invalidInput(field, `workspace ${forkId} is not a fork of ${source.workspace.id}`);
  return { source, fork };
}

async function latestBaseline(ctx: CoreContext, sourceId: string, forkId: string): Promise<Baseline | null> {
  const { rows } = await ctx.pool.query<{ parameters: { baseline?: Baseline } | null }>(
    `SELECT parameters FROM audit_log
      WHERE workspace_id = $1 AND resource = $2 AND operation IN ('workspaces.fork', 'workspaces.reset_diff_tally')
      ORDER BY at DESC, id DESC LIMIT 1`,
    [sourceId, forkId],
  );
  return rows[0]?.parameters?.baseline ?? null;
}

/** Secret values opened for comparison (plain text in memory only). */
async function comparable(
  ctx: SecretsContext,
  workspaceId: string,
  item: { kind: ForkItemKind; content: unknown } | undefined,
): Promise<string | null> {
  if (!item) return null;
  if (item.kind === "variable") {
    const v = item.content as { is_secret: boolean; value: string };
    if (v.is_secret) {
      const value = await ctx.secrets.tryDecrypt(ctx.pool, workspaceId, v.value);
      return digest(canonical({ ...v, value }));
    }
  }
  return digest(canonical(item.content));
}

/**
 * The items that differ between the caller's workspace (the parent) and its fork `forkId`, each
 * with whether the fork changed it since the fork or the last reset (ahead) and whether the parent
 * did (behind). Admins of both only: the comparison covers every item of both.
 */
export async function compareWorkspaceFork(
  ctx: SecretsContext,
  source: Membership,
  forkId: string,
): Promise<ForkComparison> {
  const pair = await forkPair(ctx, source, forkId, "target_workspace_id");
  const sourceId = pair.source.workspace.id;
  const baseline = await latestBaseline(ctx, sourceId, forkId);
  if (!baseline) return { skipped: true, diffs: [] };
  const [sourceSnapshot, forkSnapshot] = await readSnapshots(ctx, [sourceId, forkId]);
  const sourceItems = items(sourceSnapshot!);
  const forkItems = items(forkSnapshot!);
  const sourceHashes = hashes(sourceSnapshot!);
  const forkHashes = hashes(forkSnapshot!);
  const diffs: ForkItemDiff[] = [];
  for (const key of [...new Set([...sourceItems.keys(), ...forkItems.keys()])].sort()) {
    const inSource = sourceItems.get(key);
    const inFork = forkItems.get(key);
    const [a, b] = [await comparable(ctx, sourceId, inSource), await comparable(ctx, forkId, inFork)];
    if (a === b) continue;
    const item = (inSource ?? inFork)!;
    diffs.push({
      kind: item.kind,
      path: item.path,
      ahead: forkHashes[key] !== baseline.fork[key] ? 1 : 0,
      behind: sourceHashes[key] !== baseline.source[key] ? 1 : 0,
      has_changes: true,
      exists_in_source: inSource !== undefined,
      exists_in_fork: inFork !== undefined,
    });
  }
  return { skipped: false, diffs };
}

/** After a merge: both sides as they are now become the baseline of ahead/behind. */
export async function resetForkDiffTally(
  ctx: CoreContext,
  source: Membership,
  forkId: string,
): Promise<void> {
  const pair = await forkPair(ctx, source, forkId, "fork_workspace_id");
  const [sourceSnapshot, forkSnapshot] = await readSnapshots(ctx, [pair.source.workspace.id, forkId]);
  const baseline: Baseline = { source: hashes(sourceSnapshot!), fork: hashes(forkSnapshot!) };
  await recordAudit(ctx.pool, source.principal, {
    workspaceId: pair.source.workspace.id,
    operation: "workspaces.reset_diff_tally",
    resource: forkId,
    parameters: { baseline },
  });
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The tables with a `workspace_id` column, children before the tables they reference (so that
 * deleting in this order never trips a foreign key), read from the catalog: a table added later
 * is covered without touching this file.
 */
async function workspaceTables(client: PoolClient): Promise<string[]> {
  const { rows: tables } = await client.query<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND c.column_name = 'workspace_id' AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name`,
  );
  const names = tables.map((t) => t.table_name);
  const { rows: edges } = await client.query<{ child: string; parent: string }>(
    `SELECT ch.relname AS child, pa.relname AS parent FROM pg_constraint k
       JOIN pg_class ch ON ch.oid = k.conrelid JOIN pg_class pa ON pa.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = ch.relnamespace
      WHERE k.contype = 'f' AND n.nspname = current_schema() AND ch.relname <> pa.relname`,
  );
  const ordered: string[] = [];
  const visiting = new Set<string>();
  const visit = (table: string) => {
    if (ordered.includes(table) || visiting.has(table)) return;
    visiting.add(table);
    // Whatever references this table goes first.
    for (const e of edges) if (e.parent === table && names.includes(e.child)) visit(e.child);
    visiting.delete(table);
    ordered.push(table);
  };
  for (const name of names) visit(name);
  return ordered;
}

/** The hard delete itself, in one transaction (callers check the rights). */
async function hardDeleteWorkspace(
  ctx: CoreContext & Partial<Pick<SecretsContext, "secrets">>,
  principal: Principal,
  id: string,
  parentId: string | null,
): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  await withTransaction(ctx.pool, async (client) => {
    const locked = await client.query("SELECT id FROM workspace WHERE id = $1 FOR UPDATE", [id]);
    if (locked.rowCount === 0) throw notFound(`workspace ${id}`);
    for (const table of await workspaceTables(client)) {
      const { rowCount } = await client.query(`DELETE FROM ${quoteIdent(table)} WHERE workspace_id = $1`, [
        id,
      ]);
      if (rowCount) deleted[table] = rowCount;
    }
    // Forks of the deleted workspace stay, as workspaces of their own.
    await client.query("UPDATE workspace SET parent_workspace_id = NULL WHERE parent_workspace_id = $1", [
      id,
    ]);
    await client.query("DELETE FROM workspace WHERE id = $1", [id]);
    await recordAudit(client, principal, {
      workspaceId: parentId,
      operation: "workspaces.delete",
      resource: id,
      parameters: { deleted },
    });
  });
  // A cached data key of the deleted workspace must not serve a later workspace of the same id.
  ctx.secrets?.forget(ctx.pool, id);
  return deleted;
}

/**
 * Windmill's `DELETE /workspaces/delete/{workspace}`: a superadmin deletes any workspace (but
 * `admins`); a fork's admin deletes the fork (what `wmill workspace delete-fork` does with the
 * user's own token). `onlyDeleteForks` refuses a workspace that is not a fork. A hard delete: every
 * row of every table that carries the workspace's id, in one transaction.
 */
export async function deleteWorkspace(
  ctx: SecretsContext,
  principal: Principal,
  id: string,
  options: { onlyDeleteForks?: boolean } = {},
): Promise<void> {
  refuseJobCredential(principal, "delete workspaces");
  if (id === ADMINS_WORKSPACE) throw new AppError("FORBIDDEN", "the admins workspace cannot be deleted");
  const { rows } = await ctx.pool.query<{ parent_workspace_id: string | null }>(
    "SELECT parent_workspace_id FROM workspace WHERE id = $1",
    [id],
  );
  const row = rows[0];
  if (!row) throw notFound(`workspace ${id}`);
  if (!principal.isSuperAdmin) {
    // Non-members learn nothing (404); members must be admins of a fork.
    const membership = await requireMembership(ctx, principal, id);
    if (!row.parent_workspace_id)
      throw new AppError("FORBIDDEN", "only superadmins delete a workspace that is not a fork");
    requirePermission(membership, "workspace.manage");
  }
  if (options.onlyDeleteForks && !row.parent_workspace_id)
    throw invalidInput("only_delete_forks", `workspace ${id} is not a fork`);
  await hardDeleteWorkspace(ctx, principal, id, row.parent_workspace_id);
}
