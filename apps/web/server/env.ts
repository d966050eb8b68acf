import { z } from "zod";
import { useDirectDatabaseUrl } from "@millrace/db/pgbouncer";
import { POOL_DEFAULTS } from "@millrace/db";
import {
  databaseUrlVar,
  directDatabaseUrlVar,
  requireDirectUrlWhenPooled,
  metricsAddrVar,
  parseEnv,
  positiveIntVar,
  requiredSecretKeyVar,
} from "@millrace/core/config";

const serverEnvSchema = z
  .object({
    DATABASE_URL: databaseUrlVar,
    DATABASE_URL_DIRECT: directDatabaseUrlVar,
    // The port the web server listens on (all interfaces).
    PORT: positiveIntVar(3000),
    BASE_URL: z.url().default("http://localhost:8000"),
    // A bearer token accepted as superadmin on the API, as in Windmill.
    SUPERADMIN_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
    // Wraps every workspace's key for secret variables and keys the session-signing key; the same
    // value on every server and worker. Required: see sessionSigningSecret.
    MILLRACE_SECRET_KEY: requiredSecretKeyVar,
    // Seconds run_wait_result waits for a job before answering with a timeout.
    TIMEOUT_WAIT_RESULT: positiveIntVar(60),
    // Request bodies larger than this many MB are refused with 413 (run args are capped at 5 MB).
    REQUEST_BODY_LIMIT_MB: positiveIntVar(6),
    // Files written to a workspace's object storage through the API (writeS3File) larger than this
    // many MB are refused with 413; they are streamed to the store, never held whole in memory.
    OBJECT_STORAGE_UPLOAD_LIMIT_MB: positiveIntVar(1024),
    // Job timeout when a script sets none, and the instance-wide cap on any job's timeout.
    JOB_DEFAULT_TIMEOUT: positiveIntVar(900),
    JOB_MAX_TIMEOUT: positiveIntVar(86400),
    // Memory limit of a job whose script sets none (MB); unset or 0: no limit.
    JOB_MEMORY_LIMIT_MB: positiveIntVar(0),
    // Database connections (packages/db budget.ts): the main pool and pg-boss's.
    DB_POOL_SIZE: positiveIntVar(POOL_DEFAULTS.server.pool),
    DB_QUEUE_POOL_SIZE: positiveIntVar(POOL_DEFAULTS.server.queue),
    // A running job whose worker has not pinged for this many seconds is a zombie.
    ZOMBIE_JOB_TIMEOUT: positiveIntVar(60),
    // true: zombie jobs go back to the queue (at most 3 times); false: they fail at once.
    RESTART_ZOMBIE_JOBS: z
      .enum(["true", "false"], { error: "must be true or false" })
      .default("true")
      .transform((value) => value === "true"),
    // Completed jobs and their logs are deleted after this many seconds (default 30 days); the
    // instance setting retention_period_secs overrides it.
    RETENTION_PERIOD_SECS: positiveIntVar(30 * 24 * 3600),
    // Audit log rows are deleted after this many days.
    AUDIT_RETENTION_DAYS: positiveIntVar(365),
    // The leader samples queues and worker groups this often (seconds): what /metrics, the Workers
    // page's charts and the alerts read.
    FLEET_SAMPLE_SECS: positiveIntVar(15),
    // The leader decides the worker count of every autoscaled worker group this often (seconds),
    // from the fleet sampler's latest sample (see packages/core/src/autoscaling).
    AUTOSCALING_INTERVAL_SECS: positiveIntVar(30),
    // Set by Kubernetes in every pod: where the `kubernetes` autoscaling integration finds the API
    // server when the group's config names no kubeconfig.
    KUBERNETES_SERVICE_HOST: z.string().min(1).optional(),
    KUBERNETES_SERVICE_PORT: positiveIntVar(443),
    // /metrics on this server's port answers only with `Authorization: Bearer <METRICS_TOKEN>`;
    // unset, it is off there (it names tags and workspaces). METRICS_ADDR serves it without a token
    // on an address of its own, for a scraper on a private network (Windmill's variable).
    METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
    METRICS_ADDR: metricsAddrVar,
  })
  .superRefine(requireDirectUrlWhenPooled);

export type ServerEnv = z.infer<typeof serverEnvSchema>;

let cached: ServerEnv | undefined;

export function serverEnv(): ServerEnv {
  if (!cached) {
    cached = parseEnv(serverEnvSchema, process.env);
    useDirectDatabaseUrl(cached.DATABASE_URL_DIRECT);
  }
  return cached;
}
