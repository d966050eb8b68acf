import type { Pool } from "@millrace/db";
import { SECRET_KEY_VAR, SecretKeyError, deriveInstanceKey, newDataKey, open, seal } from "./cipher.ts";

/** Stored secret values: versioned so that a later format or key rotation can tell them apart. */
export const SECRET_PREFIX = "enc:v1:";
const WRAPPED_PREFIX = "wk:v1:";

/**
 * Encrypts and decrypts secret values with per-workspace data keys. Each workspace's key is
 * created on first use and stored wrapped (AES-256-GCM) by the instance key, which only lives in
 * the environment: a database dump or backup alone never yields a secret.
 */
export interface Keyring {
  /** False when no instance key is configured: every secret operation throws SecretKeyError. */
  readonly configured: boolean;
  encrypt(pool: Pool, workspaceId: string, plaintext: string): Promise<string>;
  /** Throws SecretKeyError when the value does not open (wrong instance key, damaged value). */
  decrypt(pool: Pool, workspaceId: string, ciphertext: string): Promise<string>;
  /** Null when `ciphertext` is not a value of this workspace (imports of encrypted values). */
  tryDecrypt(pool: Pool, workspaceId: string, ciphertext: string): Promise<string | null>;
  /** A wrapped workspace key (a restored repository's), opened; null when it does not open. */
  unwrapKey(workspaceId: string, wrapped: string): Buffer | null;
  /** A new data key for `workspaceId` and its wrapped form, to store in `workspace_key`. */
  newWrappedKey(workspaceId: string): { key: Buffer; wrapped: string };
  /** Drops the cached key of a workspace whose `workspace_key` row a restore just replaced. */
  forget(pool: Pool, workspaceId: string): void;
}

/** A secret value sealed with a workspace data key held by the caller (restore). */
export function sealSecret(key: Buffer, workspaceId: string, plaintext: string): string {
  return seal(key, Buffer.from(plaintext, "utf8"), workspaceId, SECRET_PREFIX);
}

/** Opens a secret value with a workspace data key held by the caller; null when it does not open. */
export function openSecret(key: Buffer, workspaceId: string, ciphertext: string): string | null {
  return open(key, ciphertext, workspaceId, SECRET_PREFIX)?.toString("utf8") ?? null;
}

export function isEncrypted(value: string): boolean {
  return value.startsWith(SECRET_PREFIX);
}

export function createKeyring(rawInstanceKey: string | undefined): Keyring {
  const instanceKey = rawInstanceKey ? deriveInstanceKey(rawInstanceKey) : null;
  // Per pool (i.e. per database), so that tests sharing a process never mix workspaces of two
  // databases. Keys are never rotated, so a cached key stays right for the life of the process.
  const cache = new WeakMap<Pool, Map<string, Buffer>>();

  function requireInstanceKey(): Buffer {
    if (!instanceKey) {
      throw new SecretKeyError(
        `${SECRET_KEY_VAR} is not set: secret variables cannot be encrypted or decrypted. ` +
          `Set it to the same value on every server and worker.`,
      );
    }
    return instanceKey;
  }

  async function workspaceKey(pool: Pool, workspaceId: string): Promise<Buffer> {
    const key = requireInstanceKey();
    let keys = cache.get(pool);
    if (!keys) cache.set(pool, (keys = new Map()));
    const cached = keys.get(workspaceId);
    if (cached) return cached;
    const context = `workspace_key:${workspaceId}`;
    // Outside any caller transaction on purpose: a key inserted by a transaction that later rolls
    // back must not stay in the cache. Concurrent first uses agree on the first insert.
    let { rows } = await pool.query<{ wrapped_key: string }>(
      "SELECT wrapped_key FROM workspace_key WHERE workspace_id = $1",
      [workspaceId],
    );
    if (rows.length === 0) {
      await pool.query(
        `INSERT INTO workspace_key (workspace_id, wrapped_key, created_at) VALUES ($1, $2, now())
         ON CONFLICT (workspace_id) DO NOTHING`,
        [workspaceId, seal(key, newDataKey(), context, WRAPPED_PREFIX)],
      );
      ({ rows } = await pool.query<{ wrapped_key: string }>(
        "SELECT wrapped_key FROM workspace_key WHERE workspace_id = $1",
        [workspaceId],
      ));
    }
    const wrapped = rows[0]?.wrapped_key;
    const dataKey = wrapped ? open(key, wrapped, context, WRAPPED_PREFIX) : null;
    if (!dataKey || dataKey.length !== 32) {
      throw new SecretKeyError(
        `the key of workspace ${workspaceId} does not open with this ${SECRET_KEY_VAR}: ` +
          `it is not the instance key its secrets were encrypted with`,
      );
    }
    keys.set(workspaceId, dataKey);
    return dataKey;
  }

  async function tryDecrypt(pool: Pool, workspaceId: string, ciphertext: string): Promise<string | null> {
    const key = await workspaceKey(pool, workspaceId);
    return open(key, ciphertext, workspaceId, SECRET_PREFIX)?.toString("utf8") ?? null;
  }

  return {
    configured: instanceKey !== null,
    async encrypt(pool, workspaceId, plaintext) {
      const key = await workspaceKey(pool, workspaceId);
      return seal(key, Buffer.from(plaintext, "utf8"), workspaceId, SECRET_PREFIX);
    },
    async decrypt(pool, workspaceId, ciphertext) {
      const plain = await tryDecrypt(pool, workspaceId, ciphertext);
      if (plain === null) {
        throw new SecretKeyError(
          `a secret of workspace ${workspaceId} does not decrypt: the stored value is damaged ` +
            `or was encrypted for another workspace`,
        );
      }
      return plain;
    },
    tryDecrypt,
    unwrapKey(workspaceId, wrapped) {
      const key = open(requireInstanceKey(), wrapped, `workspace_key:${workspaceId}`, WRAPPED_PREFIX);
      return key && key.length === 32 ? key : null;
    },
    newWrappedKey(workspaceId) {
      const key = newDataKey();
      return {
        key,
        wrapped: seal(requireInstanceKey(), key, `workspace_key:${workspaceId}`, WRAPPED_PREFIX),
      };
    },
    forget(pool, workspaceId) {
      cache.get(pool)?.delete(workspaceId);
    },
  };
}
