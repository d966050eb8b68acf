import { randomBytes } from "node:crypto";
import pg from "pg";
import { withDatabase } from "../pool.ts";

export const TEST_ADMIN_URL_VAR = "MILLRACE_TEST_ADMIN_URL";
export const TEST_TEMPLATE_VAR = "MILLRACE_TEST_TEMPLATE";

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function adminUrl(): string {
  const url = process.env[TEST_ADMIN_URL_VAR];
  if (!url)
    throw new Error(`${TEST_ADMIN_URL_VAR} is unset: run integration tests through \`npm run test:int\``);
  return url;
}

/**
 * A fresh database cloned from the migrated template (built once per test run by the global
 * setup): a few ms, and each test file gets its own isolated data.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = adminUrl();
  const template = process.env[TEST_TEMPLATE_VAR];
  if (!template) throw new Error(`${TEST_TEMPLATE_VAR} is unset`);
  const name = `millrace_test_${randomBytes(5).toString("hex")}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  } finally {
    await client.end();
  }
  return {
    name,
    url: withDatabase(admin, name),
    async drop() {
      const dropper = new pg.Client({ connectionString: admin });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}
