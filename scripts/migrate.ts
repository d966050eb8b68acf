// `node scripts/migrate.ts`: applies the database migrations to DATABASE_URL and exits (the Helm
// chart's migrations Job, or a release step of your own). Servers started afterwards with
// SKIP_MIGRATION=true then never race each other to migrate.
import { assertNodeVersion } from "@millrace/core/config";
import { migrateDeploy } from "@millrace/db/migrate";

assertNodeVersion();
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("DATABASE_URL: is required (the database to migrate)");
  process.exit(2);
}
const { applied } = await migrateDeploy(databaseUrl);
console.log(applied.length ? `applied migrations: ${applied.join(", ")}` : "database schema is up to date");
