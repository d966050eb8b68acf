// Fails when prisma/schema.prisma and prisma/migrations disagree (a schema change without its
// migration, or a hand-edited migration).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { migrationDrift } from "./lib/migration-diff.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const drift = await migrationDrift(root);
if (drift.length > 0) {
  console.error("prisma/schema.prisma and prisma/migrations disagree:\n");
  console.error(drift.join("\n"));
  console.error("Run `npm run db:migrate-diff -- <name>` and commit the result.");
  process.exit(1);
}
console.log("migrations match schema.prisma");
