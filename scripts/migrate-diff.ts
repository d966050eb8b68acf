// Authoring a migration (`prisma migrate dev` does not work here, see STACK.md):
//   npm run db:migrate-diff -- <name>   writes prisma/migrations/<timestamp>_<name>/migration.sql
// It diffs the schema at git HEAD with the working copy; review the SQL, commit both together,
// and `npm run check` verifies that the migrations rebuild exactly schema.prisma.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { diffSinceHead, isEmptyMigration } from "./lib/migration-diff.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error("usage: npm run db:migrate-diff -- <name_in_snake_case>");
  process.exit(2);
}
const sql = await diffSinceHead(root);
if (isEmptyMigration(sql)) {
  console.log("schema.prisma has not changed since HEAD: nothing to write");
  process.exit(0);
}
const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
const dir = path.join(root, "prisma/migrations", `${stamp}_${name}`);
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, "migration.sql"), sql);
console.log(`wrote ${path.relative(root, dir)}/migration.sql: review it, then commit it with the schema`);
