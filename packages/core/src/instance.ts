import { hkdfSync, randomBytes } from "node:crypto";
import type { CoreContext } from "./context.ts";
import { deriveInstanceKey } from "./secrets/cipher.ts";

/**
 * A random value stored once in the database, so every server sharing the database agrees on it
 * without extra configuration. The first writer wins the race. Never a secret on its own: the
 * database may be dumped or backed up (see sessionSigningSecret).
 */
export async function getInstanceSecret(ctx: CoreContext, key: string): Promise<string> {
  const candidate = randomBytes(32).toString("base64url");
  await ctx.pool.query(
    `INSERT INTO instance_setting (key, value, updated_at) VALUES ($1, to_jsonb($2::text), now())
     ON CONFLICT (key) DO NOTHING`,
    [key, candidate],
  );
  const { rows } = await ctx.pool.query<{ value: string }>(
    "SELECT value FROM instance_setting WHERE key = $1",
    [key],
  );
  const value = rows[0]?.value;
  if (typeof value !== "string") throw new Error(`instance setting ${key} is not a string`);
  return value;
}

/**
 * The random half of the session-signing key, in `instance_setting` (the name contains "secret"
 * so that the settings API never shows it). Deleting the row signs every session out.
 */
export const SESSION_SALT_SETTING = "session_secret_salt";

/**
 * The key that signs (and encrypts) browser sessions: HKDF of the instance key
 * (MILLRACE_SECRET_KEY, which lives outside the database) and a random value stored in the
 * database. Every server with the same key and database derives the same one; a database dump
 * alone does not yield it, so it cannot be used to forge a session. (Before, the key itself was
 * stored as `session_secret`; a migration deleted it, so sessions signed with it are refused.)
 */
export async function sessionSigningSecret(ctx: CoreContext, rawInstanceKey: string): Promise<string> {
  const salt = await getInstanceSecret(ctx, SESSION_SALT_SETTING);
  const key = hkdfSync("sha256", deriveInstanceKey(rawInstanceKey), salt, "millrace session signing v1", 32);
  return Buffer.from(key).toString("base64url");
}
