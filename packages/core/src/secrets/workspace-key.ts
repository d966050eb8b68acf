// Windmill's workspace encryption key (getWorkspaceEncryptionKey / setWorkspaceEncryptionKey),
// which `wmill sync pull --include-key` writes to an `encryption_key` file and `wmill sync push`
// sets on the workspace it pushes to, so that the secrets of the repository (ciphertexts) open
// there too.
//
// The key answered is the workspace's data key itself, as text (43 base64url characters for a key
// Millrace made): the key every secret of the workspace is encrypted with, never the instance key
// (MILLRACE_SECRET_KEY) that wraps it in the database. Set on another workspace, of this instance
// or another one, it makes that workspace decrypt the ciphertexts exported from this one: a
// ciphertext names its key by a fingerprint (`enc:v2:<key id>:…`) and is not bound to its
// workspace. Any other text of 32 to 1024 printable characters is a key too (stretched with HKDF),
// so a Windmill repository's own `encryption_key` file pushes unchanged.
//
// Setting a key re-encrypts every secret of the workspace (secret variables and the git sync
// password) in one transaction that holds the key's row: writers of secrets hold that row too
// (FOR SHARE) while they store, so nothing is stored under the old key once the new one commits,
// and the other servers and workers, whose caches hold the old key, see values that name a key
// they do not know and reload it. `skip_reencrypt` (wmill: "the secrets are already encrypted with
// the new key") changes nothing: a value already under the new key is kept as it is in every case,
// and one under the old key is re-encrypted anyway, since left alone it would never open again.
import { withTransaction, type PoolClient } from "@millrace/db";
import { recordAudit } from "../audit/index.ts";
import { AppError, invalidInput } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import { SecretKeyError } from "./cipher.ts";
import type { SecretsContext } from "./context.ts";
import {
  ciphertextKeyId,
  dataKeyOf,
  isEncrypted,
  openWith,
  sealWith,
  type WorkspaceDataKey,
} from "./keyring.ts";

export const MIN_WORKSPACE_KEY_LENGTH = 32;
export const MAX_WORKSPACE_KEY_LENGTH = 1024;

/** Why `text` cannot be a workspace key, or null when it can. */
export function workspaceKeyProblem(text: string): string | null {
  if (text.length < MIN_WORKSPACE_KEY_LENGTH || text.length > MAX_WORKSPACE_KEY_LENGTH)
    return (
      `must be ${MIN_WORKSPACE_KEY_LENGTH} to ${MAX_WORKSPACE_KEY_LENGTH} characters, e.g. the key ` +
      "another workspace's GET encryption_key answers"
    );
  if (!/^[\x21-\x7e]+$/.test(text))
    return "must be printable ASCII characters without spaces (it is kept in a text file)";
  return null;
}

export interface KeyCallMeta {
  ip?: string | null;
}

/**
 * The workspace's key, for its admins (audited). A workspace whose secrets still include values
 * written before keys could move (`enc:v1:`, bound to the workspace's id) has them re-encrypted
 * under the same key first, so that everything exported with this key opens elsewhere.
 */
export async function getWorkspaceEncryptionKey(
  ctx: SecretsContext,
  membership: Membership,
  meta: KeyCallMeta = {},
): Promise<{ key: string }> {
  requirePermission(membership, "workspace.manage");
  const ws = membership.workspace.id;
  await ctx.secrets.currentKey(ctx.pool, ws); // made now if the workspace has none yet
  const { rows } = await ctx.pool.query<{ legacy: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM variable WHERE workspace_id = $1 AND is_secret AND starts_with(value, 'enc:v1:'))
         OR EXISTS (SELECT 1 FROM git_sync_config WHERE workspace_id = $1 AND starts_with(secret, 'enc:v1:'))
         AS legacy`,
    [ws],
  );
  if (rows[0]?.legacy) await reencryptWorkspace(ctx, membership, null, { ip: meta.ip, upgrade: true });
  const current = await ctx.secrets.currentKey(ctx.pool, ws);
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: ws,
    operation: "workspaces.get_encryption_key",
    resource: ws,
    ip: meta.ip ?? null,
  });
  return { key: current.text };
}

export interface SetKeyInput {
  newKey: string;
  skipReencrypt?: boolean;
}

export interface SetKeyResult {
  /** Values re-encrypted under the new key. */
  reencrypted: number;
  /** Values already under it, kept as they were. */
  kept: number;
}

/** Replaces the workspace's key and re-encrypts every secret under it, all in one transaction. */
export async function setWorkspaceEncryptionKey(
  ctx: SecretsContext,
  membership: Membership,
  input: SetKeyInput,
  meta: KeyCallMeta = {},
): Promise<SetKeyResult> {
  requirePermission(membership, "workspace.manage");
  if (typeof input.newKey !== "string") throw invalidInput("new_key", "must be a string");
  const problem = workspaceKeyProblem(input.newKey);
  if (problem) throw invalidInput("new_key", problem);
  return reencryptWorkspace(ctx, membership, dataKeyOf(input.newKey), {
    ip: meta.ip,
    skipReencrypt: input.skipReencrypt ?? false,
  });
}

interface EncryptedValue {
  what: string;
  value: string;
  store(client: PoolClient, value: string): Promise<unknown>;
}

/**
 * Moves every encrypted value of the workspace under `next` (null: the current key, i.e. only
 * `enc:v1:` values are rewritten) and makes `next` the workspace's key. The key's row is locked
 * first (every writer of secrets takes it first too), then the values' rows.
 */
async function reencryptWorkspace(
  ctx: SecretsContext,
  membership: Membership,
  next: WorkspaceDataKey | null,
  options: { ip?: string | null; skipReencrypt?: boolean; upgrade?: boolean },
): Promise<SetKeyResult> {
  const ws = membership.workspace.id;
  await ctx.secrets.currentKey(ctx.pool, ws); // the workspace has a key row to lock
  return withTransaction(ctx.pool, async (client) => {
    const { rows: keyRows } = await client.query<{ wrapped_key: string }>(
      "SELECT wrapped_key FROM workspace_key WHERE workspace_id = $1 FOR UPDATE",
      [ws],
    );
    const old = keyRows[0] ? ctx.secrets.unwrapKey(ws, keyRows[0].wrapped_key) : null;
    if (!old) {
      throw new SecretKeyError(
        `the key of workspace ${ws} does not open with this MILLRACE_SECRET_KEY: ` +
          `it is not the instance key its secrets were encrypted with`,
      );
    }
    const target = next ?? old;
    const values: EncryptedValue[] = [];
    const variables = await client.query<{ path: string; value: string }>(
      "SELECT path, value FROM variable WHERE workspace_id = $1 AND is_secret ORDER BY path FOR UPDATE",
      [ws],
    );
    for (const row of variables.rows) {
      values.push({
        what: `variable ${row.path}`,
        value: row.value,
        store: (c, value) =>
          c.query("UPDATE variable SET value = $3 WHERE workspace_id = $1 AND path = $2", [
            ws,
            row.path,
            value,
          ]),
      });
    }
    const gitSync = await client.query<{ secret: string | null }>(
      "SELECT secret FROM git_sync_config WHERE workspace_id = $1 FOR UPDATE",
      [ws],
    );
    if (gitSync.rows[0]?.secret) {
      values.push({
        what: "the git sync password",
        value: gitSync.rows[0].secret,
        store: (c, value) =>
          c.query("UPDATE git_sync_config SET secret = $2 WHERE workspace_id = $1", [ws, value]),
      });
    }

    let reencrypted = 0;
    let kept = 0;
    const unreadable: string[] = [];
    for (const item of values) {
      // Not a ciphertext (a restored secret whose key was lost is kept empty): nothing to move.
      if (!isEncrypted(item.value)) continue;
      if (ciphertextKeyId(item.value) === target.id) {
        kept++;
        continue;
      }
      const plain = openWith(old, ws, item.value) ?? openWith(target, ws, item.value);
      if (plain === null) {
        unreadable.push(item.what);
        continue;
      }
      await item.store(client, sealWith(target, plain));
      reencrypted++;
    }
    if (unreadable.length > 0) {
      // Nothing is written: the transaction rolls back.
      throw new AppError(
        "CONFLICT",
        `${unreadable.join(", ")} ${unreadable.length === 1 ? "does" : "do"} not decrypt with the ` +
          "workspace's current key: set or delete them before changing the key",
      );
    }
    const changed = target.id !== old.id;
    if (changed) {
      await client.query("UPDATE workspace_key SET wrapped_key = $2 WHERE workspace_id = $1", [
        ws,
        ctx.secrets.wrap(ws, target),
      ]);
    }
    if (changed || reencrypted > 0) {
      // The repository of a linked git sync holds the old ciphertexts: its next run commits them.
      await client.query(
        "UPDATE git_sync_config SET sync_requested_at = now(), next_attempt_at = now() WHERE workspace_id = $1",
        [ws],
      );
    }
    if (!options.upgrade) {
      await recordAudit(client, membership.principal, {
        workspaceId: ws,
        operation: "workspaces.set_encryption_key",
        resource: ws,
        // Never the key: what was done with it.
        parameters: { changed, reencrypted, kept, skip_reencrypt: options.skipReencrypt ?? false },
        ip: options.ip ?? null,
      });
    }
    return { reencrypted, kept };
  });
}
