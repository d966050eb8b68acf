// `npm run compat`: writes docs/compatibility.md from a live probe of every endpoint Windmill's
// clients call. It runs the compatibility test (apps/cli/src/windmill-compat.int.test.ts, with its
// own test PostgreSQL, API and worker) in write mode; the same test, run normally, fails when the
// document and reality disagree.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DOC_PATH } from "./doc.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const result = spawnSync(process.execPath, ["scripts/run-tests.ts", "int", "windmill-compat"], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, MILLRACE_COMPAT_WRITE: "1" },
});
// The document as prettier keeps it (npm run check), so a fresh one passes the check as written.
if (fs.existsSync(DOC_PATH)) {
  spawnSync(path.join(root, "node_modules/.bin/prettier"), ["--write", DOC_PATH], {
    cwd: root,
    stdio: "inherit",
  });
}
process.exit(result.status ?? 1);
