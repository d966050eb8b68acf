// The names of the alert settings and their validators: instance-admin.ts checks a setting with
// them when it is saved, and alerts.ts (which saves through instance-admin.ts) reads them.
import { invalidInput } from "../errors.ts";
import { parsePath } from "../paths.ts";

export const ALERT_WEBHOOK_URL_SETTING = "alert_webhook_url";
export const ALERT_SCRIPT_SETTING = "alert_script";
export const ALERT_QUEUE_WAIT_SETTING = "alert_queue_wait_secs";
export const ALERT_WORKER_OFFLINE_SETTING = "alert_worker_offline_secs";

// Validators of the alert settings (instance-admin.ts's KNOWN_SETTINGS): the value returned is stored.
export function checkAlertWebhookUrl(value: unknown): string {
  if (typeof value !== "string" || value.length > 2000) throw invalidInput("value", "must be an http(s) URL");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidInput("value", `not a URL: "${value}"`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw invalidInput("value", "must be an http(s) URL");
  return url.toString();
}

export function checkAlertScript(value: unknown): string {
  const match = typeof value === "string" ? /^([a-z0-9][a-z0-9_-]{0,49}):(.+)$/.exec(value) : null;
  if (!match) throw invalidInput("value", 'must be "<workspace>:<script path>", e.g. "ops:f/alerts/page"');
  parsePath(match[2]!, "value");
  return value as string;
}

function positiveSecs(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    throw invalidInput(field, `must be a positive whole number of seconds, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** A number of seconds for every tag, or `{ "*": 600, "gpu": 3600 }` with per-tag thresholds. */
export function checkQueueWaitThresholds(value: unknown): number | Record<string, number> {
  if (typeof value === "number") return positiveSecs(value, "value");
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw invalidInput("value", 'must be seconds, or an object of tag → seconds ("*" for every other tag)');
  }
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([tag, secs]) => [
      tag,
      positiveSecs(secs, `value.${tag}`),
    ]),
  );
}

export function checkWorkerOfflineSecs(value: unknown): number {
  return positiveSecs(value, "value");
}
