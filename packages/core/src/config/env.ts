import { parseMetricsAddr } from "../metrics/listener.ts";
import { z } from "zod";
import { DIRECT_URL_REQUIRED, isTransactionPooled } from "@millrace/db/pgbouncer";
import { instanceKeyProblem } from "../secrets/cipher.ts";

/** Formats zod issues so that the message names the bad variable. */
export function parseEnv<T extends z.ZodType>(
  schema: T,
  env: Record<string, string | undefined>,
): z.infer<T> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".") || "(env)"}: ${issue.message}`);
  console.error(`Invalid environment:\n${lines.join("\n")}`);
  process.exit(1);
}

export const booleanVar = z
  .enum(["true", "false", "1", "0", ""])
  .optional()
  .transform((value) => value === "true" || value === "1");

export const positiveIntVar = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value === "") return fallback;
      const number = Number(value);
      if (!Number.isInteger(number) || number <= 0) {
        context.addIssue({ code: "custom", message: `must be a positive whole number, got "${value}"` });
        return z.NEVER;
      }
      return number;
    });

export const databaseUrlVar = z
  .string({ error: "is required (postgresql://user:password@host:5432/database)" })
  .refine((value) => /^postgres(ql)?:\/\//.test(value), "must start with postgresql://");

/** DATABASE_URL_DIRECT: a session connection beside a transaction-pooled DATABASE_URL (packages/db pgbouncer.ts). */
export const directDatabaseUrlVar = databaseUrlVar
  .refine(
    (value) => !isTransactionPooled(value),
    "must reach PostgreSQL or a PgBouncer database in session mode (no pgbouncer=true)",
  )
  .optional();

/** For a schema's superRefine: a transaction-pooled DATABASE_URL needs DATABASE_URL_DIRECT. */
export function requireDirectUrlWhenPooled(
  env: { DATABASE_URL?: string | undefined; DATABASE_URL_DIRECT?: string | undefined },
  context: z.RefinementCtx,
): void {
  if (env.DATABASE_URL && isTransactionPooled(env.DATABASE_URL) && !env.DATABASE_URL_DIRECT)
    context.addIssue({
      code: "custom",
      path: ["DATABASE_URL_DIRECT"],
      message: DIRECT_URL_REQUIRED.replace(/^DATABASE_URL_DIRECT: /, ""),
    });
}

export const tagListVar = z
  .string()
  .optional()
  .transform((value) =>
    value
      ? value
          .split(",")
          .map((tag) => tag.trim())
          .filter(Boolean)
      : undefined,
  );

/**
 * METRICS_ADDR (Windmill's variable): where a process serves Prometheus metrics on an address of
 * its own; "true" is 0.0.0.0:8001 as in Windmill, unset or "false" none (see metrics/listener.ts).
 */
export const metricsAddrVar = z
  .string()
  .optional()
  .transform((value, context) => {
    try {
      return parseMetricsAddr(value);
    } catch (error) {
      context.addIssue({ code: "custom", message: (error as Error).message.replace(/^METRICS_ADDR: /, "") });
      return z.NEVER;
    }
  });

/** MILLRACE_SECRET_KEY: optional at boot (secret operations then fail saying so), checked if set. */
export const secretKeyVar = z
  .string()
  .optional()
  .transform((value, context) => {
    if (!value) return undefined;
    const problem = instanceKeyProblem(value);
    if (problem) {
      context.addIssue({ code: "custom", message: problem });
      return z.NEVER;
    }
    return value;
  });

/**
 * MILLRACE_SECRET_KEY where the process cannot work without it: a server signs sessions with a key
 * derived from it (a key stored in the database alone would let a dump forge any session).
 */
export const requiredSecretKeyVar = z
  .string({
    error:
      "is required: servers sign sessions and encrypt secrets with it (32+ characters, e.g. " +
      "`openssl rand -base64 32`; the same value on every server and worker)",
  })
  .transform((value, context) => {
    const problem = instanceKeyProblem(value);
    if (problem) {
      context.addIssue({ code: "custom", message: problem });
      return z.NEVER;
    }
    return value;
  });
