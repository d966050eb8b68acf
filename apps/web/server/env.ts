import { z } from "zod";
import { databaseUrlVar, parseEnv, positiveIntVar } from "@millrace/core/config";

const serverEnvSchema = z.object({
  DATABASE_URL: databaseUrlVar,
  BASE_URL: z.url().default("http://localhost:8000"),
  // A bearer token accepted as superadmin on the API, as in Windmill.
  SUPERADMIN_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
  // Seconds run_wait_result waits for a job before answering with a timeout.
  TIMEOUT_WAIT_RESULT: positiveIntVar(60),
  // Job timeout when a script sets none, and the instance-wide cap on any job's timeout.
  JOB_DEFAULT_TIMEOUT: positiveIntVar(900),
  JOB_MAX_TIMEOUT: positiveIntVar(86400),
});

export type ServerEnv = z.infer<typeof serverEnvSchema>;

let cached: ServerEnv | undefined;

export function serverEnv(): ServerEnv {
  cached ??= parseEnv(serverEnvSchema, process.env);
  return cached;
}
