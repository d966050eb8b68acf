import { z } from "zod";
import { useDirectDatabaseUrl } from "@millrace/db/pgbouncer";
import {
  booleanVar,
  databaseUrlVar,
  directDatabaseUrlVar,
  parseEnv,
  requireDirectUrlWhenPooled,
  positiveIntVar,
  secretKeyVar,
} from "@millrace/core/config";

const launcherEnvSchema = z
  .object({
    MODE: z
      .enum(["standalone", "server", "worker", "agent", "pool"], {
        error: "must be standalone, server, worker, agent or pool",
      })
      .default("standalone"),
    DATABASE_URL: databaseUrlVar.optional(),
    DATABASE_URL_DIRECT: directDatabaseUrlVar,
    PORT: positiveIntVar(8000),
    BASE_URL: z.url().optional(),
    // Where jobs reach a server (WM_TOKEN callbacks); defaults to BASE_URL.
    BASE_INTERNAL_URL: z.url().optional(),
    NUM_WORKERS: z.string().optional(),
    // MODE=pool: the worker groups this machine hosts (comma separated), whose worker processes
    // it starts and stops as the autoscaler decides, and the most it runs at once, in all.
    POOL_GROUPS: z
      .string()
      .optional()
      .transform((value) =>
        (value ?? "")
          .split(",")
          .map((group) => group.trim())
          .filter(Boolean),
      )
      .pipe(
        z.array(
          z.string().regex(/^[A-Za-z0-9_-]{1,50}$/, {
            error: (issue) =>
              `"${String(issue.input)}" is not a worker group name (1-50 letters, digits, _ or -)`,
          }),
        ),
      ),
    POOL_MAX_WORKERS: positiveIntVar(4),
    // Seconds a worker stopped by the pool lets its running job finish (passed to the workers).
    WORKER_GRACE_PERIOD: positiveIntVar(30),
    SKIP_MIGRATION: booleanVar,
    SUPERADMIN_EMAIL: z.email().optional(),
    SUPERADMIN_PASSWORD: z.string().min(8, "must be at least 8 characters").optional(),
    // Port of the embedded PostgreSQL (only used when DATABASE_URL is unset).
    EMBEDDED_PG_PORT: positiveIntVar(5488),
    // Instance key for sessions and secret variables: required with MODE=server, standalone
    // generates one into .data/ when unset, a worker without it cannot read secrets.
    MILLRACE_SECRET_KEY: secretKeyVar,
  })
  .superRefine((env, context) => {
    requireDirectUrlWhenPooled(env, context);
    // MODE=agent has no database access at all (BASE_INTERNAL_URL and AGENT_TOKEN instead).
    if (env.MODE !== "standalone" && env.MODE !== "agent" && !env.DATABASE_URL) {
      context.addIssue({
        code: "custom",
        path: ["DATABASE_URL"],
        message: `is required with MODE=${env.MODE} (only MODE=standalone starts an embedded PostgreSQL)`,
      });
    }
    if (env.MODE === "server" && !env.MILLRACE_SECRET_KEY) {
      context.addIssue({
        code: "custom",
        path: ["MILLRACE_SECRET_KEY"],
        message:
          "is required with MODE=server: sessions are signed and secrets encrypted with it (32+ " +
          "characters, e.g. `openssl rand -base64 32`; the same value on every server and worker)",
      });
    }
    if (env.MODE === "pool" && env.POOL_GROUPS.length === 0) {
      context.addIssue({
        code: "custom",
        path: ["POOL_GROUPS"],
        message: "is required with MODE=pool: the worker groups this machine hosts, e.g. burst,gpu",
      });
    }
    if ((env.MODE === "worker" || env.MODE === "pool") && !env.BASE_INTERNAL_URL && !env.BASE_URL) {
      // A worker of its own has no server beside it: localhost would answer nothing, and every
      // job calling back (windmill-client, wmill) would fail.
      context.addIssue({
        code: "custom",
        path: ["BASE_INTERNAL_URL"],
        message:
          `is required with MODE=${env.MODE} (or BASE_URL): the URL at which jobs on this machine reach a ` +
          "Millrace server, e.g. http://millrace-server:8000",
      });
    }
    if (!!env.SUPERADMIN_EMAIL !== !!env.SUPERADMIN_PASSWORD) {
      context.addIssue({
        code: "custom",
        path: [env.SUPERADMIN_EMAIL ? "SUPERADMIN_PASSWORD" : "SUPERADMIN_EMAIL"],
        message: "set SUPERADMIN_EMAIL and SUPERADMIN_PASSWORD together",
      });
    }
  });

export type LauncherEnv = z.infer<typeof launcherEnvSchema>;

export function loadLauncherEnv(): LauncherEnv {
  const env = parseEnv(launcherEnvSchema, process.env);
  useDirectDatabaseUrl(env.DATABASE_URL_DIRECT);
  return env;
}
