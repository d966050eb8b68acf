import { checkJsonInput, invalidInput, webhookArgs, type RunOptions } from "@millrace/core";
import { z } from "zod";
import { requestIp } from "../../auth/principal.ts";
import { readText } from "../../http.ts";
import type { RestContext } from "../router.ts";

export const MILLRACE_VERSION = "0.1.0";

function intParam(ctx: RestContext, name: string): number | undefined {
  const raw = ctx.url.searchParams.get(name);
  if (raw === null || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw invalidInput(name, `must be a whole number, got "${raw}"`);
  // 1e308 is a whole number to JavaScript; no parameter means anything past 2^53.
  if (!Number.isSafeInteger(value)) throw invalidInput(name, `is out of range, got "${raw}"`);
  return value;
}

// Run dates are kept to years 1 to 9999, which PostgreSQL, Prisma and JavaScript all hold.
const EARLIEST_RUN_DATE = Date.parse("0001-01-01T00:00:00Z");
const LATEST_RUN_DATE = Date.parse("9999-12-31T23:59:59Z");

/** Run options from the query string, as Windmill's run endpoints take them. */
export function runOptions(ctx: RestContext): RunOptions {
  const scheduledFor = ctx.url.searchParams.get("scheduled_for");
  const inSecs = intParam(ctx, "scheduled_in_secs");
  let when: Date | null = null;
  if (scheduledFor) {
    when = new Date(scheduledFor);
    if (Number.isNaN(when.getTime()))
      throw invalidInput("scheduled_for", `not a valid date-time: "${scheduledFor}"`);
    if (when.getTime() < EARLIEST_RUN_DATE || when.getTime() > LATEST_RUN_DATE)
      throw invalidInput("scheduled_for", "must be between 0001-01-01 and 9999-12-31");
  } else if (inSecs !== undefined) {
    if (inSecs < 0) throw invalidInput("scheduled_in_secs", "must not be negative");
    when = new Date(Date.now() + inSecs * 1000);
    if (!(when.getTime() <= LATEST_RUN_DATE))
      throw invalidInput("scheduled_in_secs", "is too far ahead (the run would start after the year 9999)");
  }
  return { scheduledFor: when, priority: intParam(ctx, "priority") ?? null };
}

/**
 * Run arguments: a JSON object body is the args; any other body is wrapped as `{ body }`. What the
 * database cannot hold is refused as readJson refuses it, naming the argument (`args.name`).
 */
export async function runArgs(ctx: RestContext): Promise<unknown> {
  const args =
    ctx.request.method === "GET"
      ? payloadArgs(ctx.url.searchParams.get("payload"))
      : webhookArgs(ctx.request.headers.get("content-type"), await readText(ctx.request));
  checkJsonInput(args, "args");
  return args;
}

/**
 * A GET run's arguments (Windmill's run_wait_result GET): `payload` is the arguments' JSON in
 * base64 (standard or URL-safe, as webhooks callers build it); none means no arguments.
 */
function payloadArgs(payload: string | null): unknown {
  if (payload === null || payload === "") return {};
  const base64 = payload.trim();
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(base64))
    throw invalidInput("payload", "must be base64 of a JSON object");
  let args: unknown;
  try {
    args = JSON.parse(Buffer.from(base64, "base64").toString("utf8"));
  } catch {
    throw invalidInput("payload", "must be base64 of a JSON object (its JSON does not parse)");
  }
  if (args === null || typeof args !== "object" || Array.isArray(args))
    throw invalidInput("payload", "must be base64 of a JSON object");
  return args;
}

/** What the audit log records of the call (the caller's address). */
export function callMeta(ctx: RestContext) {
  return { ip: requestIp(ctx.request.headers) };
}

/** `/api/w/:workspace/…/*path` routes' parameters. */
export const workspacePath = z.object({ workspace: z.string(), path: z.string() });

/** `/api/w/:workspace/…/:name` routes' parameters. */
export const workspaceName = z.object({ workspace: z.string(), name: z.string() });

/** A query flag: `true`/`false`, or `1`/`0` as some of Windmill's callers send them. */
export const queryFlag = z
  .enum(["true", "false", "1", "0"], { error: "must be true or false" })
  .transform((value) => value === "true" || value === "1");

/** A plain-text answer, as Windmill's create/update/delete routes give. */
export function textAnswer(description: string) {
  return { contentType: "text/plain", description };
}
