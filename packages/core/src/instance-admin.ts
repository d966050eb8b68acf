import { withTransaction, type Pool } from "@millrace/db";
import { actorName, type Principal } from "./auth/principal.ts";
import type { CoreContext } from "./context.ts";
import { AppError, invalidInput } from "./errors.ts";
import {
  ALERT_QUEUE_WAIT_SETTING,
  ALERT_SCRIPT_SETTING,
  ALERT_WEBHOOK_URL_SETTING,
  ALERT_WORKER_OFFLINE_SETTING,
  checkAlertScript,
  checkAlertWebhookUrl,
  checkQueueWaitThresholds,
  checkWorkerOfflineSecs,
} from "./fleet/alert-settings.ts";
import {
  CUSTOM_TAGS_SETTING,
  formatCustomTag,
  invalidateCustomTagsCache,
  parseCustomTags,
} from "./workers/custom-tags.ts";

/** Instance administration is for superadmins only (callers are authenticated upstream). */
export function requireSuperadmin(principal: Principal, action = "do this"): void {
  if (!principal.isSuperAdmin) throw new AppError("FORBIDDEN", `only a superadmin may ${action}`);
}

/** One audit row for an instance-level change, written in the caller's transaction. */
export async function auditInstanceChange(
  client: { query: Pool["query"] },
  principal: Principal,
  operation: string,
  resource: string,
  parameters: unknown,
): Promise<void> {
  await client.query(
    `INSERT INTO audit_log (workspace_id, actor, operation, resource, parameters, at)
     VALUES (NULL, $1, $2, $3, $4, now() AT TIME ZONE 'UTC')`,
    [actorName(principal), operation, resource, JSON.stringify(parameters ?? null)],
  );
}

const SETTING_KEY = /^[a-z][a-z0-9_]{0,63}$/;
const MAX_SETTING_BYTES = 64 * 1024;

function positiveInt(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    throw invalidInput(field, `must be a positive whole number of seconds, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Settings with a known meaning are checked; the value returned is what gets stored. */
const KNOWN_SETTINGS: Record<string, (value: unknown) => unknown> = {
  [CUSTOM_TAGS_SETTING]: (value) => parseCustomTags(value, "value").map(formatCustomTag),
  retention_period_secs: (value) => positiveInt(value, "value"),
  [ALERT_WEBHOOK_URL_SETTING]: checkAlertWebhookUrl,
  [ALERT_SCRIPT_SETTING]: checkAlertScript,
  [ALERT_QUEUE_WAIT_SETTING]: checkQueueWaitThresholds,
  [ALERT_WORKER_OFFLINE_SETTING]: checkWorkerOfflineSecs,
};

function checkKey(key: string): void {
  if (!SETTING_KEY.test(key)) {
    throw invalidInput("key", `"${key}" is not a setting name (lowercase letters, digits and _)`);
  }
  // Instance secrets (the session-signing key…) share the table; they never cross the API.
  if (key.includes("secret")) {
    throw new AppError("FORBIDDEN", `setting ${key} is managed by Millrace and not available over the API`);
  }
}

/** Validates a setting without storing it; returns the value as it would be stored. */
export function validateGlobalSetting(key: string, value: unknown): unknown {
  checkKey(key);
  const known = KNOWN_SETTINGS[key];
  if (known) return known(value);
  if ((JSON.stringify(value) ?? "").length > MAX_SETTING_BYTES)
    throw invalidInput("value", "larger than 64 KiB");
  return value;
}

/**
 * Settings every signed-in user may read: Windmill's clients ask for them outside instance
 * administration (`wmill workspace add --create` reads automate_username_creation).
 */
const READABLE_BY_ALL: readonly string[] = ["automate_username_creation"];

/** A setting's value, or null when it is not set. */
export async function getGlobalSetting(
  ctx: CoreContext,
  principal: Principal,
  key: string,
): Promise<unknown> {
  if (!READABLE_BY_ALL.includes(key)) requireSuperadmin(principal, "read instance settings");
  checkKey(key);
  const { rows } = await ctx.pool.query<{ value: unknown }>(
    "SELECT value FROM instance_setting WHERE key = $1",
    [key],
  );
  return rows[0]?.value ?? null;
}

/**
 * Sets (or, with null/undefined, removes) an instance setting. Invalid values are refused before
 * anything is written.
 */
export async function setGlobalSetting(
  ctx: CoreContext,
  principal: Principal,
  key: string,
  value: unknown,
): Promise<unknown> {
  requireSuperadmin(principal, "change instance settings");
  const remove = value === null || value === undefined;
  const stored = remove ? null : validateGlobalSetting(key, value);
  if (remove) checkKey(key);
  await withTransaction(ctx.pool, async (client) => {
    if (remove) await client.query("DELETE FROM instance_setting WHERE key = $1", [key]);
    else {
      await client.query(
        `INSERT INTO instance_setting (key, value, updated_at) VALUES ($1, $2, now() AT TIME ZONE 'UTC')
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
        [key, JSON.stringify(stored)],
      );
    }
    await auditInstanceChange(client, principal, remove ? "settings.delete" : "settings.set", key, stored);
  });
  if (key === CUSTOM_TAGS_SETTING) invalidateCustomTagsCache(ctx.pool);
  return stored;
}

/**
 * Every instance setting a superadmin may read over the API (windmill-client's GlobalSetting list,
 * `wmill instance pull`): instance secrets (whose key names a secret) never leave.
 */
export async function listGlobalSettings(
  ctx: CoreContext,
  principal: Principal,
): Promise<{ name: string; value: unknown }[]> {
  requireSuperadmin(principal, "read instance settings");
  const { rows } = await ctx.pool.query<{ name: string; value: unknown }>(
    `SELECT key AS name, value FROM instance_setting WHERE key NOT LIKE '%secret%' ORDER BY key`,
  );
  return rows.filter((row) => SETTING_KEY.test(row.name));
}
