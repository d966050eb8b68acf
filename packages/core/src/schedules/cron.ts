import { Cron } from "croner";
import { invalidInput } from "../errors.ts";

export const CRON_FIELDS = "second minute hour day-of-month month day-of-week";
export const MAX_PREVIEW_TICKS = 50;

/**
 * An IANA time zone name (`Europe/Paris`, `UTC`), returned in its canonical spelling. Offsets
 * (`+02:00`) are refused: a schedule follows its zone's daylight-saving changes, an offset cannot.
 */
export function checkTimezone(timezone: unknown): string {
  if (timezone === undefined || timezone === null || timezone === "") return "UTC";
  if (typeof timezone !== "string") throw invalidInput("timezone", "must be a string");
  const refuse = () =>
    invalidInput("timezone", `"${timezone}" is not an IANA time zone (like UTC or Europe/Paris)`);
  if (timezone.length > 64 || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(timezone)) throw refuse();
  try {
    const resolved = new Intl.DateTimeFormat("en-US", { timeZone: timezone }).resolvedOptions().timeZone;
    // The canonical spelling of the name given, but an alias (Etc/UTC, US/Eastern) stays as written:
    // a schedule pushed by wmill keeps the timezone of its file, so the next push finds it unchanged.
    return resolved.toLowerCase() === timezone.toLowerCase() ? resolved : timezone;
  } catch {
    throw refuse();
  }
}

/** Parses a 6-field cron (with seconds) in `timezone`; refuses one that never fires. */
export function parseCron(schedule: unknown, timezone: string): Cron {
  if (typeof schedule !== "string" || !schedule.trim()) throw invalidInput("schedule", "is required");
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== 6) {
    throw invalidInput(
      "schedule",
      `must have 6 fields (${CRON_FIELDS}), got ${fields.length}: "${schedule}"`,
    );
  }
  let cron: Cron;
  try {
    cron = new Cron(fields.join(" "), { paused: true, mode: "6-part", timezone });
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^Cron\w*:\s*/, "") : String(error);
    throw invalidInput("schedule", `not a valid cron expression: ${reason}`);
  }
  if (!cron.nextRun()) throw invalidInput("schedule", `"${schedule}" never fires`);
  return cron;
}

/** The first tick strictly after `after`, or null if the cron has no more. */
export function tickAfter(cron: Cron, after: Date): Date | null {
  return cron.nextRun(after);
}

/** The last tick at or before `at`. */
export function tickAtOrBefore(cron: Cron, at: Date): Date | null {
  return cron.previousRuns(1, new Date(at.getTime() + 1))[0] ?? null;
}

/** The next `count` ticks after `after` (the schedule form's preview). */
export function previewTicks(schedule: unknown, timezone: unknown, count = 5, after = new Date()): Date[] {
  const cron = parseCron(schedule, checkTimezone(timezone));
  return cron.nextRuns(Math.min(Math.max(count, 1), MAX_PREVIEW_TICKS), after);
}
