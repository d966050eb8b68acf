import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { databaseUrlVar, parseEnv, positiveIntVar, secretKeyVar, tagListVar } from "@millrace/core/config";
import { booleanVar } from "@millrace/core/config";

const workerEnvSchema = z.object({
  DATABASE_URL: databaseUrlVar,
  WORKER_GROUP: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,50}$/, "use letters, digits, _ and - (at most 50)")
    .default("default"),
  WORKER_TAGS: tagListVar,
  NUM_WORKERS: positiveIntVar(1),
  BASE_URL: z.url().default("http://localhost:8000"),
  BASE_INTERNAL_URL: z.url().optional(),
  JOB_DIR: z.string().default(path.join(os.tmpdir(), "millrace-jobs")),
  WORKER_NAME_PREFIX: z.string().optional(),
  // Seconds a stopping worker lets running jobs finish before it puts them back in the queue.
  WORKER_GRACE_PERIOD: positiveIntVar(30),
  // Seconds between pings; must stay well under the servers' ZOMBIE_JOB_TIMEOUT.
  WORKER_PING_INTERVAL: positiveIntVar(5),
  // Run jobs without bubblewrap even where it is available (trusted code only).
  DISABLE_SANDBOX: booleanVar,
  // Decrypts the secret variables and resources a job is given (the servers' value).
  MILLRACE_SECRET_KEY: secretKeyVar,
});

export type WorkerEnv = z.infer<typeof workerEnvSchema>;

export function loadWorkerEnv(env: Record<string, string | undefined> = process.env): WorkerEnv {
  return parseEnv(workerEnvSchema, env);
}
