// Runs the unit (`*.test.ts`) or integration (`*.int.test.ts`) tests of every package with
// node:test. Integration files run two at a time (MILLRACE_TEST_CONCURRENCY) against one
// PostgreSQL, each file in a database of its own cloned from a migrated template (see
// global-setup.ts): most of their time is spent waiting on processes, so two overlap well on two
// cores. None restarts or fills the shared server (the drills that do start their own).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const kind = process.argv[2];
if (kind !== "unit" && kind !== "int") {
  console.error("usage: node scripts/run-tests.ts unit|int [filter]");
  process.exit(2);
}
const filter = process.argv[3];
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

function collect(dir: string, out: string[]): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "generated" || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) collect(full, out);
    else if (
      kind === "int" ? entry.name.endsWith(".int.test.ts") : /(?<!\.int)\.test\.ts$/.test(entry.name)
    ) {
      out.push(path.relative(root, full));
    }
  }
}

const files: string[] = [];
for (const top of ["packages", "apps"]) {
  for (const pkg of fs.readdirSync(path.join(root, top))) {
    // The web app has no src/: its tests sit beside the components and libraries they test.
    for (const folder of ["src", "components", "lib", "server"]) {
      const dir = path.join(root, top, pkg, folder);
      if (fs.existsSync(dir)) collect(dir, files);
    }
  }
}
const selected = files.filter((file) => !filter || file.includes(filter)).sort();
if (selected.length === 0) {
  console.error(`no ${kind} test files found${filter ? ` matching ${filter}` : ""}`);
  process.exit(1);
}
const args = ["--test", "--test-reporter=spec"];
if (kind === "int") {
  args.push(
    `--test-concurrency=${process.env.MILLRACE_TEST_CONCURRENCY ?? 2}`,
    "--test-global-setup=packages/db/src/testing/global-setup.ts",
  );
}
const result = spawnSync(process.execPath, [...args, ...selected], { cwd: root, stdio: "inherit" });
process.exit(result.status ?? 1);
