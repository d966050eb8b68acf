import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { POOL_DEFAULTS, useDirectDatabaseUrl } from "@millrace/db";
import {
  databaseUrlVar,
  directDatabaseUrlVar,
  requireDirectUrlWhenPooled,
  metricsAddrVar,
  parseEnv,
  positiveIntVar,
  secretKeyVar,
  tagListVar,
} from "@millrace/core/config";
import { booleanVar } from "@millrace/core/config";

export const workerEnvSchema = z.object({
  DATABASE_URL: databaseUrlVar,
  DATABASE_URL_DIRECT: directDatabaseUrlVar,
  WORKER_GROUP: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,50}$/, "use letters, digits, _ and - (at most 50)")
    .default("default"),
  WORKER_TAGS: tagListVar,
  NUM_WORKERS: positiveIntVar(1),
  // Database connections (packages/db budget.ts): the main pool and pg-boss's.
  DB_POOL_SIZE: positiveIntVar(POOL_DEFAULTS.worker.pool),
  DB_QUEUE_POOL_SIZE: positiveIntVar(POOL_DEFAULTS.worker.queue),
  // Unset: BASE_INTERNAL_URL (see loadWorkerEnv), else http://localhost:8000.
  BASE_URL: z.url().optional(),
  BASE_INTERNAL_URL: z.url().optional(),
  JOB_DIR: z.string().default(path.join(os.tmpdir(), "millrace-jobs")),
  WORKER_NAME_PREFIX: z.string().optional(),
  // Seconds a stopping worker lets running jobs finish before it puts them back in the queue.
  WORKER_GRACE_PERIOD: positiveIntVar(30),
  // Seconds between pings; must stay well under the servers' ZOMBIE_JOB_TIMEOUT (pings go out
  // at least 4 times per fence delay whatever this says: see fence.ts).
  WORKER_PING_INTERVAL: positiveIntVar(5),
  // The servers' ZOMBIE_JOB_TIMEOUT, used only until the leader's published value is read with
  // the first ping: a worker that has no heartbeat committed for half of it kills its running
  // jobs (self-fencing, see fence.ts).
  ZOMBIE_JOB_TIMEOUT: positiveIntVar(60),
  // `<workspace>:<script path>`: serve only that script, from a warm process (dedicated worker).
  DEDICATED_WORKER: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9_-]{0,49}:[uf]\/[A-Za-z0-9_/-]+$/,
      "must be <workspace>:<script path>, e.g. demo:f/ops/fast",
    )
    .optional(),
  // Installed dependencies, one folder per lock (default: millrace-cache beside JOB_DIR).
  DEPENDENCY_CACHE_DIR: z.string().optional(),
  // Handed to pip and bun when they install dependencies (never to jobs).
  PIP_INDEX_URL: z.string().optional(),
  PIP_EXTRA_INDEX_URL: z.string().optional(),
  PIP_FIND_LINKS: z.string().optional(),
  PIP_TRUSTED_HOST: z.string().optional(),
  PIP_CERT: z.string().optional(),
  NPM_CONFIG_REGISTRY: z.string().optional(),
  HTTP_PROXY: z.string().optional(),
  HTTPS_PROXY: z.string().optional(),
  NO_PROXY: z.string().optional(),
  // Serves Prometheus metrics (GET /metrics) on this address: "true" (0.0.0.0:8001), "host:port".
  METRICS_ADDR: metricsAddrVar,
  // A job whose result (JSON) is larger than this many MB fails with ResultTooLarge.
  JOB_MAX_RESULT_MB: positiveIntVar(10),
  // Memory limit (MB) of jobs whose script sets none; unset: each slot's share of 3/4 of the
  // machine's memory (see job-memory.ts); 0: no limit.
  JOB_MEMORY_LIMIT_MB: z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value === "") return undefined;
      const number = Number(value);
      if (!Number.isInteger(number) || number < 0) {
        context.addIssue({
          code: "custom",
          message: `must be a whole number of MB (0: no limit), got "${value}"`,
        });
        return z.NEVER;
      }
      return number;
    }),
  // MB a job's folder may hold (its files, and deleted ones it keeps open): DiskQuotaExceeded past it.
  JOB_DISK_QUOTA_MB: positiveIntVar(1024),
  // Run jobs without bubblewrap even where it is available (trusted code only).
  DISABLE_SANDBOX: booleanVar,
  // Decrypts the secret variables and resources a job is given (the servers' value).
  MILLRACE_SECRET_KEY: secretKeyVar,
});

type InstallerVar =
  | "PIP_INDEX_URL"
  | "PIP_EXTRA_INDEX_URL"
  | "PIP_FIND_LINKS"
  | "PIP_TRUSTED_HOST"
  | "PIP_CERT"
  | "NPM_CONFIG_REGISTRY"
  | "HTTP_PROXY"
  | "HTTPS_PROXY"
  | "NO_PROXY";

/** The variables pip and bun see when they install dependencies. */
export function installerEnv(env: Partial<Record<InstallerVar, string>>): Record<string, string> {
  const names = [
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_TRUSTED_HOST",
    "PIP_CERT",
    "NPM_CONFIG_REGISTRY",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
  ] as const;
  const out: Record<string, string> = {};
  for (const name of names) if (env[name]) out[name] = env[name];
  return out;
}

export type WorkerEnv = z.infer<typeof workerEnvSchema> & { BASE_URL: string };

export function loadWorkerEnv(env: Record<string, string | undefined> = process.env): WorkerEnv {
  const parsed = parseEnv(workerEnvSchema.superRefine(requireDirectUrlWhenPooled), env);
  useDirectDatabaseUrl(parsed.DATABASE_URL_DIRECT);
  return { ...parsed, BASE_URL: parsed.BASE_URL ?? parsed.BASE_INTERNAL_URL ?? "http://localhost:8000" };
}
