// The instance's own alerts, for operators without Prometheus (deploy/prometheus/alerts.yml covers
// those with it): a worker that stopped pinging, a tag whose due jobs no live worker serves, and a
// queue waiting past its threshold. The leader evaluates them after each fleet sample. Each is
// raised once (one open instance_alert row per key, enforced by a partial unique index, so two
// servers briefly both leading cannot raise it twice) and cleared with a recovery message. Both
// go to the audit log, the optional webhook and the optional script (instance settings), and the
// open ones show on the Workers page for superadmins.
import { prepared, type Pool } from "@millrace/db";
import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { AppError } from "../errors.ts";
import { requireSuperadmin, setGlobalSetting, validateGlobalSetting } from "../instance-admin.ts";
import {
  ALERT_QUEUE_WAIT_SETTING,
  ALERT_SCRIPT_SETTING,
  ALERT_WEBHOOK_URL_SETTING,
  ALERT_WORKER_OFFLINE_SETTING,
} from "./alert-settings.ts";
import type { JobsContext } from "../jobs/run.ts";
import { runScriptByPath } from "../jobs/run.ts";
import { runAs } from "../schedules/tick.ts";
import type { FleetSample } from "./sample.ts";

const DEFAULT_QUEUE_WAIT_SECS = 600;
const DEFAULT_WORKER_OFFLINE_SECS = 60;
/** A worker silent for a day is no longer watched: its alert is cleared as such. */
const WATCHED_WORKER_SECS = 24 * 3600;
const WEBHOOK_TIMEOUT_MS = 5000;

export type AlertKind = "worker_offline" | "tag_unserved" | "queue_wait";

export interface InstanceAlertView {
  id: string;
  kind: AlertKind;
  subject: string;
  message: string;
  raisedAt: Date;
  clearedAt: Date | null;
  recovery: string | null;
}

interface WantedAlert {
  key: string;
  kind: AlertKind;
  subject: string;
  message: string;
}

export interface AlertSettings {
  webhookUrl: string | null;
  script: { workspace: string; path: string } | null;
  queueWaitSecs: { default: number; byTag: Record<string, number> };
  workerOfflineSecs: number;
}

export async function readAlertSettings(pool: Pool): Promise<AlertSettings> {
  const { rows } = await pool.query<{ key: string; value: unknown }>(
    prepared("SELECT key, value FROM instance_setting WHERE key = ANY($1)", [
      [
        ALERT_WEBHOOK_URL_SETTING,
        ALERT_SCRIPT_SETTING,
        ALERT_QUEUE_WAIT_SETTING,
        ALERT_WORKER_OFFLINE_SETTING,
      ],
    ]),
  );
  const value = (key: string) => rows.find((row) => row.key === key)?.value;
  const script = value(ALERT_SCRIPT_SETTING);
  const match = typeof script === "string" ? /^([^:]+):(.+)$/.exec(script) : null;
  const wait = value(ALERT_QUEUE_WAIT_SETTING);
  const byTag = wait && typeof wait === "object" ? (wait as Record<string, number>) : {};
  const offline = value(ALERT_WORKER_OFFLINE_SETTING);
  return {
    webhookUrl:
      typeof value(ALERT_WEBHOOK_URL_SETTING) === "string"
        ? (value(ALERT_WEBHOOK_URL_SETTING) as string)
        : null,
    script: match ? { workspace: match[1]!, path: match[2]! } : null,
    queueWaitSecs: {
      default: typeof wait === "number" ? wait : (byTag["*"] ?? DEFAULT_QUEUE_WAIT_SECS),
      byTag,
    },
    workerOfflineSecs: typeof offline === "number" ? offline : DEFAULT_WORKER_OFFLINE_SECS,
  };
}

function duration(secs: number): string {
  return secs < 120 ? `${Math.round(secs)} s` : `${Math.round(secs / 60)} min`;
}

/**
 * The workers that stopped pinging: silent for `offlineSecs` (and less than a day), unless a
 * newer worker of the same group on the same host has started since (a restart under a new name).
 * A worker that stops gracefully removes its ping rows, so scaling down raises nothing.
 */
async function offlineWorkers(pool: Pool, offlineSecs: number) {
  const { rows } = await pool.query<{
    name: string;
    worker_group: string;
    host: string;
    silent_secs: number;
  }>(
    prepared(
      `SELECT w.name, w.worker_group, w.host,
              extract(epoch FROM (now() AT TIME ZONE 'UTC') - w.last_ping_at)::float8 AS silent_secs
         FROM worker_ping w
        WHERE w.last_ping_at < (now() AT TIME ZONE 'UTC') - make_interval(secs => $1)
          AND w.last_ping_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => $2)
          AND NOT EXISTS (
            SELECT 1 FROM worker_ping r
             WHERE r.worker_group = w.worker_group AND r.host = w.host AND r.started_at > w.last_ping_at
               AND r.last_ping_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => $1))
        ORDER BY w.name`,
      [offlineSecs, WATCHED_WORKER_SECS],
    ),
  );
  return rows;
}

async function wantedAlerts(
  pool: Pool,
  sample: FleetSample,
  settings: AlertSettings,
): Promise<WantedAlert[]> {
  const wanted: WantedAlert[] = [];
  for (const worker of await offlineWorkers(pool, settings.workerOfflineSecs)) {
    wanted.push({
      key: `worker_offline:${worker.name}`,
      kind: "worker_offline",
      subject: worker.name,
      message: `worker ${worker.name} (group ${worker.worker_group}, host ${worker.host}) has not pinged for ${duration(worker.silent_secs)}`,
    });
  }
  for (const queue of sample.queues) {
    // A due job must have waited as long as a worker may be silent before its tag counts as
    // unserved: workers starting up, or restarting, are not an outage.
    if (queue.queued > 0 && queue.workers === 0 && queue.oldestWaitSecs >= settings.workerOfflineSecs) {
      wanted.push({
        key: `tag_unserved:${queue.tag}`,
        kind: "tag_unserved",
        subject: queue.tag,
        message: `${queue.queued} job(s) on tag ${queue.tag} wait and no live worker serves it (oldest: ${duration(queue.oldestWaitSecs)})`,
      });
      continue;
    }
    const threshold = settings.queueWaitSecs.byTag[queue.tag] ?? settings.queueWaitSecs.default;
    if (queue.oldestWaitSecs > threshold) {
      wanted.push({
        key: `queue_wait:${queue.tag}`,
        kind: "queue_wait",
        subject: queue.tag,
        message: `the oldest job on tag ${queue.tag} has waited ${duration(queue.oldestWaitSecs)} (threshold ${duration(threshold)})`,
      });
    }
  }
  return wanted;
}

function recoveryOf(kind: string, subject: string): string {
  if (kind === "worker_offline") return `worker ${subject} is back, or no longer watched`;
  if (kind === "tag_unserved") return `tag ${subject} is served again, or its queue emptied`;
  return `the queue of tag ${subject} waits less than its threshold again`;
}

export interface AlertChanges {
  raised: InstanceAlertView[];
  cleared: InstanceAlertView[];
}

type AlertRow = {
  id: string;
  kind: AlertKind;
  subject: string;
  message: string;
  raised_at: Date;
  cleared_at: Date | null;
  recovery: string | null;
};

const view = (row: AlertRow): InstanceAlertView => ({
  id: String(row.id),
  kind: row.kind,
  subject: row.subject,
  message: row.message,
  raisedAt: row.raised_at,
  clearedAt: row.cleared_at,
  recovery: row.recovery,
});

/** Raises what the fleet now warrants and clears what it no longer does; then tells whom it must. */
export async function evaluateFleetAlerts(
  ctx: JobsContext,
  sample: FleetSample,
  log: (message: string) => void = () => {},
): Promise<AlertChanges> {
  const settings = await readAlertSettings(ctx.pool);
  const wanted = await wantedAlerts(ctx.pool, sample, settings);
  const { rows: raised } = await ctx.pool.query<AlertRow>(
    `INSERT INTO instance_alert (kind, subject, key, message)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
     ON CONFLICT (key) WHERE cleared_at IS NULL DO NOTHING
     RETURNING id, kind, subject, message, raised_at, cleared_at, recovery`,
    [
      wanted.map((a) => a.kind),
      wanted.map((a) => a.subject),
      wanted.map((a) => a.key),
      wanted.map((a) => a.message),
    ],
  );
  const keys = new Set(wanted.map((a) => a.key));
  const { rows: open } = await ctx.pool.query<{ id: string; kind: string; subject: string; key: string }>(
    prepared("SELECT id, kind, subject, key FROM instance_alert WHERE cleared_at IS NULL", []),
  );
  const ended = open.filter((alert) => !keys.has(alert.key));
  const { rows: cleared } = await ctx.pool.query<AlertRow>(
    `UPDATE instance_alert a SET cleared_at = now(), recovery = e.recovery
       FROM unnest($1::bigint[], $2::text[]) AS e(id, recovery)
      WHERE a.id = e.id AND a.cleared_at IS NULL
      RETURNING a.id, a.kind, a.subject, a.message, a.raised_at, a.cleared_at, a.recovery`,
    [ended.map((alert) => alert.id), ended.map((alert) => recoveryOf(alert.kind, alert.subject))],
  );
  const changes = { raised: raised.map(view), cleared: cleared.map(view) };
  for (const alert of changes.raised) await tell(ctx, settings, alert, "raised", log);
  for (const alert of changes.cleared) await tell(ctx, settings, alert, "recovered", log);
  return changes;
}

/** Audit log, webhook, script: each failure is logged, none stops the others or the leader. */
async function tell(
  ctx: JobsContext,
  settings: AlertSettings,
  alert: InstanceAlertView,
  status: "raised" | "recovered",
  log: (message: string) => void,
): Promise<void> {
  const message = status === "raised" ? alert.message : (alert.recovery ?? "");
  log(`alert ${status}: ${message}`);
  const payload = {
    status,
    kind: alert.kind,
    subject: alert.subject,
    message,
    raised_at: alert.raisedAt.toISOString(),
    cleared_at: alert.clearedAt?.toISOString() ?? null,
    // Slack's and Mattermost's incoming webhooks read `text`.
    text: `Millrace ${status === "raised" ? "alert" : "recovered"}: ${message}`,
  };
  await ctx.pool
    .query(
      `INSERT INTO audit_log (workspace_id, actor, operation, resource, parameters, at)
       VALUES (NULL, 'millrace', $1, $2, $3, now() AT TIME ZONE 'UTC')`,
      [`alerts.${status}`, `${alert.kind}:${alert.subject}`, JSON.stringify({ message })],
    )
    .catch((error: Error) => log(`alert audit failed: ${error.message}`));
  if (settings.webhookUrl) {
    await fetch(settings.webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    })
      .then((response) => {
        if (!response.ok) log(`alert webhook answered ${response.status}`);
      })
      .catch((error: Error) => log(`alert webhook failed: ${error.message}`));
  }
  if (settings.script) {
    const { workspace, path } = settings.script;
    await runAlertScript(ctx, workspace, path, payload).catch((error: Error) =>
      log(`alert script ${workspace}:${path} could not start: ${error.message}`),
    );
  }
}

/** The script runs as whoever deployed its current version, as a schedule runs as its editor. */
async function runAlertScript(
  ctx: JobsContext,
  workspace: string,
  path: string,
  args: object,
): Promise<void> {
  const script = await ctx.db.script.findFirst({
    where: { workspaceId: workspace, path, archived: false },
    orderBy: { createdAt: "desc" },
    select: { createdBy: true },
  });
  if (!script) throw new AppError("NOT_FOUND", `script ${path} not found in workspace ${workspace}`);
  const membership = await runAs(ctx, workspace, `u/${script.createdBy}`);
  await runScriptByPath(ctx, membership, path, args);
}

/** Open alerts, newest first, and the last day's cleared ones (superadmins: the Workers page banner). */
export async function listInstanceAlerts(
  ctx: Pick<CoreContext, "pool">,
  principal: Principal,
): Promise<{ open: InstanceAlertView[]; recent: InstanceAlertView[] }> {
  requireSuperadmin(principal, "read the instance's alerts");
  const { rows } = await ctx.pool.query<AlertRow>(
    prepared(
      `SELECT id, kind, subject, message, raised_at, cleared_at, recovery FROM instance_alert
        WHERE cleared_at IS NULL OR cleared_at > now() - interval '1 day'
        ORDER BY raised_at DESC LIMIT 200`,
      [],
    ),
  );
  return {
    open: rows.filter((row) => !row.cleared_at).map(view),
    recent: rows.filter((row) => row.cleared_at).map(view),
  };
}

/** The alert settings as the settings page edits them (superadmins only). */
export interface AlertSettingsInput {
  webhookUrl: string | null;
  script: string | null;
  queueWaitSecs: number | Record<string, number> | null;
  workerOfflineSecs: number | null;
}

const ALERT_SETTING_FIELDS = [
  ["webhookUrl", ALERT_WEBHOOK_URL_SETTING],
  ["script", ALERT_SCRIPT_SETTING],
  ["queueWaitSecs", ALERT_QUEUE_WAIT_SETTING],
  ["workerOfflineSecs", ALERT_WORKER_OFFLINE_SETTING],
] as const;

export async function getAlertSettings(ctx: CoreContext, principal: Principal): Promise<AlertSettingsInput> {
  requireSuperadmin(principal, "read the alert settings");
  const { rows } = await ctx.pool.query<{ key: string; value: unknown }>(
    "SELECT key, value FROM instance_setting WHERE key = ANY($1)",
    [ALERT_SETTING_FIELDS.map(([, key]) => key)],
  );
  const value = (key: string) => rows.find((row) => row.key === key)?.value ?? null;
  return Object.fromEntries(
    ALERT_SETTING_FIELDS.map(([field, key]) => [field, value(key)]),
  ) as unknown as AlertSettingsInput;
}

/**
 * Saves the alert settings: every value is checked first, naming the field at fault, so a bad one
 * leaves all of them as they were; null (or "") removes a setting.
 */
export async function saveAlertSettings(
  ctx: CoreContext,
  principal: Principal,
  input: AlertSettingsInput,
): Promise<AlertSettingsInput> {
  requireSuperadmin(principal, "change the alert settings");
  const values = ALERT_SETTING_FIELDS.map(([field, key]) => {
    const raw = input[field];
    const value = raw === "" ? null : raw;
    if (value === null || value === undefined) return { key, value: null };
    try {
      return { key, value: validateGlobalSetting(key, value) };
    } catch (error) {
      if (error instanceof AppError && error.field?.startsWith("value")) {
        throw new AppError(error.code, error.message, field + error.field.slice("value".length));
      }
      throw error;
    }
  });
  for (const { key, value } of values) await setGlobalSetting(ctx, principal, key, value);
  return getAlertSettings(ctx, principal);
}
