import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client.ts";
import type { Pool } from "./pool.ts";

export { Prisma, PrismaClient } from "./generated/client.ts";
export type {
  ApiToken,
  AuditLog,
  Folder,
  Group,
  InstanceSetting,
  Job,
  JobLog,
  Script,
  User,
  WorkerPing,
  Workspace,
  WorkspaceMember,
} from "./generated/client.ts";
export { JobStatus, WorkspaceRole, PermissionLevel } from "./generated/enums.ts";
export { isDatabaseUnavailable, isTransientDatabaseError } from "./errors.ts";
export { clientClassFor, createClient, parseMultiHostUrl } from "./hosts.ts";
export {
  assertPoolerSettings,
  DIRECT_URL_REQUIRED,
  isTransactionPooled,
  sessionUrl,
  useDirectDatabaseUrl,
  withoutPgbouncerParam,
} from "./pgbouncer.ts";
export {
  clusterRoom,
  connectionBudget,
  describeBudget,
  directConnections,
  POOL_DEFAULTS,
  roomProblem,
  warnIfNoRoom,
  WORKER_CLAIM_POOL_SIZE,
  type ConnectionBudget,
} from "./budget.ts";
export { createPool, prepared, withTransaction, withDatabase, type Pool, type PoolClient } from "./pool.ts";

export type Db = PrismaClient;

/** One Prisma client sharing the process's pg pool, so Prisma and raw SQL use the same connections. */
export function createDb(pool: Pool): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg(pool) });
}

/** Prisma error code for a unique-constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = (error as { code?: unknown }).code;
  // P2002 from Prisma, 23505 straight from Postgres (raw SQL).
  return code === "P2002" || code === "23505";
}
