import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import type { Pool, PoolClient } from "@millrace/db";
import { SECRET_KEY_VAR, SecretKeyError, deriveInstanceKey, open, seal } from "./cipher.ts";

/**
 * Stored secret values. `enc:v2:<key id>:<sealed>` names the workspace key it was made with (a
 * fingerprint of the key, see keyId) and authenticates that header: it opens with that key in
 * any workspace that has it, which is what moving a workspace's key (`wmill sync --include-key`)
 * needs. `enc:v1:<sealed>` (written before workspace keys could change) names no key and is
 * bound to its workspace's id; it still opens, and every key change re-encrypts it as v2.
 */
export const SECRET_PREFIX = "enc:v2:";
const LEGACY_SECRET_PREFIX = "enc:v1:";
const V2_PATTERN = /^enc:v2:([A-Za-z0-9_-]{16}):/;
/** Wrapped workspace keys: v1 wraps 32 random bytes, v2 a key given as text (see dataKeyOf). */
const WRAPPED_RAW_PREFIX = "wk:v1:";
const WRAPPED_TEXT_PREFIX = "wk:v2:";

/** A workspace key: the AES-256 key, its id (named by ciphertexts) and its text form. */
export interface WorkspaceDataKey {
  key: Buffer;
  id: string;
  /** What getWorkspaceEncryptionKey answers and setWorkspaceEncryptionKey takes. */
  text: string;
}

/**
 * The key a text stands for. Millrace's own keys are 32 random bytes written as unpadded
 * base64url (43 characters): used as they are, so that a key read from one workspace and set on
 * another is the very same key. Any other text (Windmill's 64-character keys, a passphrase) is
 * stretched with HKDF. Either way the same text gives the same key on every instance.
 */
export function dataKeyOf(text: string): WorkspaceDataKey {
  const raw = /^[A-Za-z0-9_-]{43}$/.test(text) ? Buffer.from(text, "base64url") : null;
  const key =
    raw && raw.length === 32 && raw.toString("base64url") === text
      ? raw
      : Buffer.from(hkdfSync("sha256", text, "millrace", "millrace workspace key v2", 32));
  return { key, id: keyId(key), text };
}

function rawDataKey(key: Buffer): WorkspaceDataKey {
  return { key, id: keyId(key), text: key.toString("base64url") };
}

/** A key's public fingerprint (96 bits of an HMAC under the key: it tells nothing of the key). */
function keyId(key: Buffer): string {
  return createHmac("sha256", key).update("millrace workspace key id").digest("base64url").slice(0, 16);
}

/** A new random workspace key. */
export function newWorkspaceKey(): WorkspaceDataKey {
  return rawDataKey(randomBytes(32));
}

/** The id of the key a v2 ciphertext names; null for v1 (or anything else). */
export function ciphertextKeyId(ciphertext: string): string | null {
  return V2_PATTERN.exec(ciphertext)?.[1] ?? null;
}

/** Seals a secret value under a workspace key (always v2). */
export function sealWith(dataKey: WorkspaceDataKey, plaintext: string): string {
  const prefix = `${SECRET_PREFIX}${dataKey.id}:`;
  return seal(dataKey.key, Buffer.from(plaintext, "utf8"), prefix, prefix);
}

/** Opens a v2 value under `dataKey`, or a v1 value of `workspaceId`; null when it does not open. */
export function openWith(dataKey: WorkspaceDataKey, workspaceId: string, ciphertext: string): string | null {
  if (ciphertext.startsWith(LEGACY_SECRET_PREFIX))
    return open(dataKey.key, ciphertext, workspaceId, LEGACY_SECRET_PREFIX)?.toString("utf8") ?? null;
  if (ciphertextKeyId(ciphertext) !== dataKey.id) return null;
  const prefix = `${SECRET_PREFIX}${dataKey.id}:`;
  return open(dataKey.key, ciphertext, prefix, prefix)?.toString("utf8") ?? null;
}

/**
 * Encrypts and decrypts secret values with per-workspace keys. Each workspace's key is created on
 * first use and stored wrapped (AES-256-GCM) by the instance key, which only lives in the
 * environment: a database dump or backup alone never yields a secret.
 *
 * A workspace's key can be replaced (setWorkspaceEncryptionKey) while other servers and workers
 * run, so no process trusts its cache for writing: `encrypt` reads the current wrapped key (one
 * indexed row) and seals with it; decryption needs no query for a key the process already holds,
 * since each value names its key, and reloads the row for a key it does not know.
 */
export interface Keyring {
  /** False when no instance key is configured: every secret operation throws SecretKeyError. */
  readonly configured: boolean;
  /**
   * Encrypts with the workspace's current key. Pass the transaction that stores the value as
   * `tx`: the key's row is then held (FOR SHARE) until it ends, so a key change waits for it and
   * re-encrypts what it stored, and a value is never stored under a key that was just replaced.
   */
  encrypt(pool: Pool, workspaceId: string, plaintext: string, tx?: PoolClient): Promise<string>;
  /** Throws SecretKeyError when the value does not open (wrong instance key, damaged value). */
  decrypt(pool: Pool, workspaceId: string, ciphertext: string): Promise<string>;
  /** Null when `ciphertext` is not a value of this workspace. */
  tryDecrypt(pool: Pool, workspaceId: string, ciphertext: string): Promise<string | null>;
  /**
   * The plain value when `ciphertext` is under the workspace's current key (a value sent already
   * encrypted, to be stored as it is), else null. With `tx`, the key row is held as by encrypt.
   */
  openCurrent(pool: Pool, workspaceId: string, ciphertext: string, tx?: PoolClient): Promise<string | null>;
  /** Holds the workspace key's row (FOR SHARE) in `tx`: take it before other rows (no deadlock). */
  lockKey(tx: PoolClient, workspaceId: string): Promise<void>;
  /** The workspace's current key, created if it has none. */
  currentKey(pool: Pool, workspaceId: string): Promise<WorkspaceDataKey>;
  /** `dataKey` wrapped for `workspaceId`, to store in `workspace_key`. */
  wrap(workspaceId: string, dataKey: WorkspaceDataKey): string;
  /** A wrapped workspace key (a restored repository's), opened; null when it does not open. */
  unwrapKey(workspaceId: string, wrapped: string): WorkspaceDataKey | null;
  /** A new data key for `workspaceId` and its wrapped form, to store in `workspace_key`. */
  newWrappedKey(workspaceId: string): { key: WorkspaceDataKey; wrapped: string };
  /** Drops the cached key of a workspace whose `workspace_key` row a restore just replaced. */
  forget(pool: Pool, workspaceId: string): void;
}

/** A secret value sealed with a workspace key held by the caller (restore). */
export function sealSecret(dataKey: WorkspaceDataKey, _workspaceId: string, plaintext: string): string {
  return sealWith(dataKey, plaintext);
}

/** Opens a secret value with a workspace key held by the caller; null when it does not open. */
export function openSecret(
  dataKey: WorkspaceDataKey,
  workspaceId: string,
  ciphertext: string,
): string | null {
  return openWith(dataKey, workspaceId, ciphertext);
}

export function isEncrypted(value: string): boolean {
  return value.startsWith(SECRET_PREFIX) || value.startsWith(LEGACY_SECRET_PREFIX);
}

/** What a process knows of a workspace's keys: the current one as last read, and every one seen. */
interface CachedKeys {
  wrapped: string | null;
  current: WorkspaceDataKey | null;
  byId: Map<string, WorkspaceDataKey>;
}

export function createKeyring(rawInstanceKey: string | undefined): Keyring {
  const instanceKey = rawInstanceKey ? deriveInstanceKey(rawInstanceKey) : null;
  // Per pool (i.e. per database), so that tests sharing a process never mix workspaces of two
  // databases. A key seen once stays right for the values that name it, so old keys are kept:
  // a value read just before a key change still opens after it.
  const cache = new WeakMap<Pool, Map<string, CachedKeys>>();

  function requireInstanceKey(): Buffer {
    if (!instanceKey) {
      throw new SecretKeyError(
        `${SECRET_KEY_VAR} is not set: secret variables cannot be encrypted or decrypted. ` +
          `Set it to the same value on every server and worker.`,
      );
    }
    return instanceKey;
  }

  function cached(pool: Pool, workspaceId: string): CachedKeys {
    let workspaces = cache.get(pool);
    if (!workspaces) cache.set(pool, (workspaces = new Map()));
    let keys = workspaces.get(workspaceId);
    if (!keys) workspaces.set(workspaceId, (keys = { wrapped: null, current: null, byId: new Map() }));
    return keys;
  }

  function unwrap(workspaceId: string, wrapped: string): WorkspaceDataKey | null {
    const key = requireInstanceKey();
    const context = `workspace_key:${workspaceId}`;
    if (wrapped.startsWith(WRAPPED_TEXT_PREFIX)) {
      const text = open(key, wrapped, context, WRAPPED_TEXT_PREFIX);
      return text ? dataKeyOf(text.toString("utf8")) : null;
    }
    const raw = open(key, wrapped, context, WRAPPED_RAW_PREFIX);
    return raw && raw.length === 32 ? rawDataKey(raw) : null;
  }

  function wrap(workspaceId: string, dataKey: WorkspaceDataKey): string {
    const context = `workspace_key:${workspaceId}`;
    // A key whose text is its raw bytes is wrapped as such (the format every key had before
    // keys could be set); any other text is wrapped as text, so that it can be read back.
    return dataKey.text === dataKey.key.toString("base64url")
      ? seal(requireInstanceKey(), dataKey.key, context, WRAPPED_RAW_PREFIX)
      : seal(requireInstanceKey(), Buffer.from(dataKey.text, "utf8"), context, WRAPPED_TEXT_PREFIX);
  }

  /**
   * The workspace's current key as the database has it now (`FOR SHARE` through `tx` when given).
   * A workspace without a key gets one; the insert is outside any caller transaction on purpose
   * (a key inserted by a transaction that rolls back must not be cached), and concurrent first
   * uses agree on the first insert.
   */
  async function loadCurrent(pool: Pool, workspaceId: string, tx?: PoolClient): Promise<WorkspaceDataKey> {
    requireInstanceKey();
    const select = `SELECT wrapped_key FROM workspace_key WHERE workspace_id = $1${tx ? " FOR SHARE" : ""}`;
    let { rows } = await (tx ?? pool).query<{ wrapped_key: string }>(select, [workspaceId]);
    if (rows.length === 0) {
      await pool.query(
        `INSERT INTO workspace_key (workspace_id, wrapped_key, created_at) VALUES ($1, $2, now())
         ON CONFLICT (workspace_id) DO NOTHING`,
        [workspaceId, wrap(workspaceId, newWorkspaceKey())],
      );
      ({ rows } = await (tx ?? pool).query<{ wrapped_key: string }>(select, [workspaceId]));
    }
    const wrapped = rows[0]?.wrapped_key;
    const keys = cached(pool, workspaceId);
    if (wrapped !== undefined && wrapped === keys.wrapped && keys.current) return keys.current;
    const dataKey = wrapped ? unwrap(workspaceId, wrapped) : null;
    if (!dataKey) {
      throw new SecretKeyError(
        `the key of workspace ${workspaceId} does not open with this ${SECRET_KEY_VAR}: ` +
          `it is not the instance key its secrets were encrypted with`,
      );
    }
    keys.wrapped = wrapped!;
    keys.current = dataKey;
    keys.byId.set(dataKey.id, dataKey);
    return dataKey;
  }

  async function tryDecrypt(pool: Pool, workspaceId: string, ciphertext: string): Promise<string | null> {
    const keys = cached(pool, workspaceId);
    const id = ciphertextKeyId(ciphertext);
    if (id !== null) {
      const known = keys.byId.get(id);
      if (known) return openWith(known, workspaceId, ciphertext);
      // A key this process has not seen: the workspace's key may have changed since it looked.
      const current = await loadCurrent(pool, workspaceId);
      return current.id === id ? openWith(current, workspaceId, ciphertext) : null;
    }
    if (!ciphertext.startsWith(LEGACY_SECRET_PREFIX)) return null;
    // v1 names no key: the keys seen, then the current one if it is new to this process.
    requireInstanceKey();
    for (const key of keys.byId.values()) {
      const plain = openWith(key, workspaceId, ciphertext);
      if (plain !== null) return plain;
    }
    const before = keys.current;
    const current = await loadCurrent(pool, workspaceId);
    return current === before ? null : openWith(current, workspaceId, ciphertext);
  }

  return {
    configured: instanceKey !== null,
    async encrypt(pool, workspaceId, plaintext, tx) {
      return sealWith(await loadCurrent(pool, workspaceId, tx), plaintext);
    },
    async decrypt(pool, workspaceId, ciphertext) {
      const plain = await tryDecrypt(pool, workspaceId, ciphertext);
      if (plain === null) {
        throw new SecretKeyError(
          `a secret of workspace ${workspaceId} does not decrypt: the stored value is damaged ` +
            `or was encrypted with another key`,
        );
      }
      return plain;
    },
    tryDecrypt,
    async openCurrent(pool, workspaceId, ciphertext, tx) {
      return openWith(await loadCurrent(pool, workspaceId, tx), workspaceId, ciphertext);
    },
    async lockKey(tx, workspaceId) {
      await tx.query("SELECT 1 FROM workspace_key WHERE workspace_id = $1 FOR SHARE", [workspaceId]);
    },
    currentKey: (pool, workspaceId) => loadCurrent(pool, workspaceId),
    wrap,
    unwrapKey: unwrap,
    newWrappedKey(workspaceId) {
      const key = newWorkspaceKey();
      return { key, wrapped: wrap(workspaceId, key) };
    },
    forget(pool, workspaceId) {
      cache.get(pool)?.delete(workspaceId);
    },
  };
}
