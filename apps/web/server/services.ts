import { createKeyring, JobEvents, startBoss, type JobsContext, type Keyring } from "@millrace/core";
import { createDb, createPool } from "@millrace/db";
import { serverEnv } from "./env.ts";

export interface Services extends JobsContext {
  secrets: Keyring;
  superadminSecret: string | undefined;
  waitResultTimeoutMs: number;
}

// One set per server process, kept on globalThis so that Next's module reloading (dev) and the
// several route bundles of a build share the same pools and LISTEN connection.
const holder = globalThis as unknown as { __millraceServices?: Promise<Services> };

async function createServices(): Promise<Services> {
  const env = serverEnv();
  const pool = createPool(env.DATABASE_URL, { max: 10, applicationName: "millrace-server" });
  const events = new JobEvents(env.DATABASE_URL);
  const [boss] = await Promise.all([startBoss(env.DATABASE_URL, "server"), events.start()]);
  return {
    db: createDb(pool),
    pool,
    boss,
    events,
    limits: {
      defaultTimeoutSecs: env.JOB_DEFAULT_TIMEOUT,
      maxTimeoutSecs: env.JOB_MAX_TIMEOUT,
      defaultMemoryLimitMb: env.JOB_MEMORY_LIMIT_MB || null,
    },
    superadminSecret: env.SUPERADMIN_SECRET,
    secrets: createKeyring(env.MILLRACE_SECRET_KEY),
    waitResultTimeoutMs: env.TIMEOUT_WAIT_RESULT * 1000,
  };
}

export function getServices(): Promise<Services> {
  holder.__millraceServices ??= createServices().catch((error: unknown) => {
    holder.__millraceServices = undefined;
    throw error;
  });
  return holder.__millraceServices;
}
