import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/** The environment variable holding the instance key that wraps every workspace key. */
export const SECRET_KEY_VAR = "MILLRACE_SECRET_KEY";
export const MIN_SECRET_KEY_LENGTH = 32;

/**
 * A secret cannot be encrypted or decrypted with the instance key this process has (missing, or
 * not the key the data was written with). Never an AppError: it is the operator's configuration,
 * not the caller's input, and it must never fall back to returning ciphertext or garbage.
 */
export class SecretKeyError extends Error {
  override name = "SecretKeyError";
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Why `raw` cannot be an instance key, or null when it can. */
export function instanceKeyProblem(raw: string): string | null {
  if (raw.trim() !== raw) return "must not start or end with whitespace";
  if (raw.length < MIN_SECRET_KEY_LENGTH)
    return `must be at least ${MIN_SECRET_KEY_LENGTH} characters (e.g. \`openssl rand -base64 32\`)`;
  return null;
}

/**
 * The AES-256 key derived from the configured string. HKDF lets operators pass any long random
 * string (base64, hex, a passphrase from a vault) while the cipher always gets 32 uniform bytes.
 */
export function deriveInstanceKey(raw: string): Buffer {
  const problem = instanceKeyProblem(raw);
  if (problem) throw new SecretKeyError(`${SECRET_KEY_VAR}: ${problem}`);
  return Buffer.from(hkdfSync("sha256", raw, "millrace", "millrace instance key v1", 32));
}

export function newDataKey(): Buffer {
  return randomBytes(32);
}

/**
 * AES-256-GCM: `<prefix><base64url(iv | tag | ciphertext)>`. `context` is authenticated but not
 * stored (the workspace id), so a ciphertext copied into another workspace does not decrypt.
 */
export function seal(key: Buffer, plaintext: Buffer, context: string, prefix: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return prefix + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** Returns null when `sealed` is malformed or does not authenticate under `key` and `context`. */
export function open(key: Buffer, sealed: string, context: string, prefix: string): Buffer | null {
  if (!sealed.startsWith(prefix)) return null;
  const raw = Buffer.from(sealed.slice(prefix.length), "base64url");
  if (raw.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    return null;
  }
}
