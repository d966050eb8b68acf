import { createKeyring, JobEvents, startBoss, type JobsContext, type Keyring } from "@millrace/core";
import {
  connectionBudget,
  createDb,
  createPool,
  describeBudget,
  assertPoolerSettings,
  warnIfNoRoom,
} from "@millrace/db";
import { serverEnv } from "./env.ts";

export interface Services extends JobsContext {
  secrets: Keyring;
  superadminSecret: string | undefined;
  waitResultTimeoutMs: number;
}

// One set per server process, kept on globalThis so that Next's module reloading (dev) and the
// several route bundles of a build share the same pools and LISTEN connection.
const holder = globalThis as unknown as { __millraceServices?: Promise<Services> };

let budgetShown = false;

async function createServices(): Promise<Services> {
  const env = serverEnv();
  if (!budgetShown) {
    budgetShown = true;
    const budget = connectionBudget("server", {
      poolSize: env.DB_POOL_SIZE,
      queuePoolSize: env.DB_QUEUE_POOL_SIZE,
    });
    const log = (message: string) => console.log(`[server] ${message}`);
    log(describeBudget(budget));
    await warnIfNoRoom(env.DATABASE_URL, budget, "this server", log);
  }
  await assertPoolerSettings(env.DATABASE_URL);
  const pool = createPool(env.DATABASE_URL, { max: env.DB_POOL_SIZE, applicationName: "millrace-server" });
  const events = new JobEvents(env.DATABASE_URL);
  const [boss] = await Promise.all([
    startBoss(env.DATABASE_URL, "server", { max: env.DB_QUEUE_POOL_SIZE }),
    events.start(),
  ]);
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
