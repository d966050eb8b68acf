import { z } from "zod";
import { invalidInput } from "../errors.ts";
import type { RetryPolicy } from "./enqueue.ts";

export interface JobLimits {
  /** Applied when a script sets none. */
  defaultTimeoutSecs: number;
  /** Instance-wide cap on any job's timeout. */
  maxTimeoutSecs: number;
  /** Applied when a script sets no memory limit (null: none). */
  defaultMemoryLimitMb?: number | null;
}

/** The limits a script may set, as Windmill's NewScript names them. */
export interface ScriptLimitsInput {
  timeout?: number | null;
  priority?: number | null;
  concurrent_limit?: number | null;
  concurrency_time_window_s?: number | null;
  concurrency_key?: string | null;
  retry?: unknown;
  memory_limit_mb?: number | null;
}

const retrySchema = z
  .object({
    constant: z
      .object({ attempts: z.number().int().min(0).max(100), seconds: z.number().min(0).max(86400) })
      .optional(),
    exponential: z
      .object({
        attempts: z.number().int().min(0).max(100),
        multiplier: z.number().min(0).max(1000),
        seconds: z.number().min(0).max(86400),
        random_factor: z.number().min(0).max(100).optional(),
      })
      .optional(),
  })
  .strict();

function wholeNumber(field: string, value: number | null | undefined, min: number, max: number, unit = "") {
  if (value === null || value === undefined) return null;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidInput(field, `must be a whole number from ${min} to ${max}${unit}`);
  }
  return value;
}

export function checkedPriority(priority: number | null | undefined, field = "priority"): number | null {
  return wholeNumber(field, priority, 1, 100);
}

export function checkedTimeout(
  limits: JobLimits,
  timeout: number | null | undefined,
  field = "timeout",
): number | null {
  if (timeout === null || timeout === undefined) return null;
  if (!Number.isInteger(timeout) || timeout <= 0)
    throw invalidInput(field, "must be a positive whole number of seconds");
  if (timeout > limits.maxTimeoutSecs) {
    throw invalidInput(
      field,
      `at most ${limits.maxTimeoutSecs} seconds (the instance's maximum job timeout)`,
    );
  }
  return timeout;
}

export interface CheckedScriptLimits {
  timeoutSecs: number | null;
  priority: number | null;
  concurrentLimit: number | null;
  concurrencyTimeWindowS: number | null;
  concurrencyKey: string | null;
  retry: RetryPolicy | null;
  memoryLimitMb: number | null;
}

/** Validates a script's limits, naming the field at fault (Windmill's field names). */
export function checkScriptLimits(limits: JobLimits, input: ScriptLimitsInput): CheckedScriptLimits {
  let retry: RetryPolicy | null = null;
  if (input.retry !== undefined && input.retry !== null) {
    const parsed = retrySchema.safeParse(input.retry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalidInput(["retry", ...(issue?.path ?? [])].join("."), issue?.message ?? "invalid");
    }
    retry = parsed.data;
  }
  const key = input.concurrency_key ?? null;
  if (key !== null && (key.length === 0 || key.length > 255)) {
    throw invalidInput("concurrency_key", "must be 1-255 characters");
  }
  return {
    timeoutSecs: checkedTimeout(limits, input.timeout),
    priority: checkedPriority(input.priority),
    concurrentLimit: wholeNumber("concurrent_limit", input.concurrent_limit, 1, 10000),
    concurrencyTimeWindowS: wholeNumber(
      "concurrency_time_window_s",
      input.concurrency_time_window_s,
      0,
      86400 * 7,
    ),
    concurrencyKey: key,
    retry,
    memoryLimitMb: wholeNumber("memory_limit_mb", input.memory_limit_mb, 16, 1024 * 1024, " MB"),
  };
}

/** `$workspace` and `$args[name]` in a concurrency key, resolved at enqueue time. */
export function resolveConcurrencyKey(
  key: string,
  workspaceId: string,
  args: Record<string, unknown>,
): string {
  const resolved = key
    .replaceAll("$workspace", workspaceId)
    .replace(/\$args\[([A-Za-z0-9_]+)\]/g, (_, name: string) => {
      const value = args[name];
      return typeof value === "string" ? value : JSON.stringify(value ?? null);
    });
  // Keys never cross workspaces: two tenants using the same key do not limit each other.
  return `${workspaceId}/${resolved}`;
}
