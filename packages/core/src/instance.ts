import { randomBytes } from "node:crypto";
import type { CoreContext } from "./context.ts";

/**
 * A random secret stored once in the database (e.g. the session-signing key), so every server
 * sharing the database agrees on it without extra configuration. The first writer wins the race.
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
