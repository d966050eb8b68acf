// s3rver's types, for the apps whose tests compile this file (its package ships none).
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./s3rver.d.ts" />
// Test helpers for integration tests of core and the apps: a fresh database cloned from the
// migrated template, with the same services a server process builds.
import assert from "node:assert/strict";
import { createDb, createPool } from "@millrace/db";
import { createTestDatabase, type TestDatabase } from "@millrace/db/testing";
import type { Principal } from "./auth/principal.ts";
import { AppError } from "./errors.ts";
import { startBoss } from "./jobs/boss.ts";
import { JobEvents } from "./jobs/events.ts";
import type { JobsContext } from "./jobs/run.ts";
import { createUser, principalOf } from "./users.ts";
import { createWorkspace, requireMembership, type Membership } from "./workspaces.ts";

export interface TestServices extends JobsContext {
  database: TestDatabase;
  close(): Promise<void>;
}

export async function createTestServices(): Promise<TestServices> {
  const database = await createTestDatabase();
  const pool = createPool(database.url, { max: 5, applicationName: "millrace-test" });
  const events = new JobEvents(database.url);
  const [boss] = await Promise.all([startBoss(database.url, "server"), events.start()]);
  return {
    database,
    db: createDb(pool),
    pool,
    boss,
    events,
    limits: { defaultTimeoutSecs: 60, maxTimeoutSecs: 3600 },
    async close() {
      await boss.stop({ graceful: false, close: true, timeout: 2000 }).catch(() => {});
      await events.close();
      await pool.end();
      await database.drop();
    },
  };
}

let counter = 0;

/** A user with a workspace of their own (they are its admin). */
export async function createTestMember(
  services: TestServices,
  workspaceId = `ws${++counter}`,
): Promise<{ principal: Principal; membership: Membership }> {
  const n = ++counter;
  const user = await createUser(services, { email: `user${n}@example.com`, password: "password123" });
  const principal = principalOf(user);
  await createWorkspace(services, principal, { id: workspaceId, name: `Workspace ${workspaceId}` }).catch(
    async (error: { code?: string }) => {
      if (error.code !== "CONFLICT") throw error;
      await services.db.workspaceMember.create({ data: { workspaceId, userId: user.id, role: "admin" } });
    },
  );
  return { principal, membership: await requireMembership(services, principal, workspaceId) };
}

/** Asserts that `promise` rejects with an AppError of `code` (naming `field`, matching `pattern`). */
export async function rejectsWith(promise: Promise<unknown>, code: string, field?: string, pattern?: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof AppError, `expected AppError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (field) assert.equal(error.field, field, error.message);
    if (pattern) assert.match(error.message, pattern);
    return true;
  });
}

/**
 * A real S3-compatible server (s3rver) on a free loopback port, with one bucket, for the object
 * storage tests. It checks the access key (S3RVER) but not SigV4 signatures.
 */
export async function startTestS3(bucket = "millrace-test"): Promise<{
  endpoint: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  /** The value of an `s3` resource for this server (path-style, plain HTTP), with `overrides`. */
  resourceValue(overrides?: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}> {
  const { default: S3rver } = await import("s3rver");
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const directory = mkdtempSync(join(tmpdir(), "millrace-s3-"));
  const server = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const { port } = (await server.run()) as { port: number };
  return {
    endpoint: `127.0.0.1:${port}`,
    bucket,
    accessKey: "S3RVER",
    secretKey: "S3RVER",
    resourceValue: (overrides = {}) => ({
      bucket,
      region: "us-east-1",
      endPoint: `127.0.0.1:${port}`,
      useSSL: false,
      pathStyle: true,
      accessKey: "S3RVER",
      secretKey: "S3RVER",
      ...overrides,
    }),
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
