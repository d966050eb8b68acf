// `npm run drill:sync-example`: the sync-example test's two pushes, on a real clone of
// windmill-labs/windmill-sync-example (or any Windmill repository) named by WINDMILL_SYNC_EXAMPLE.
// Not part of `npm test` (the clone is not in this repository). Without the variable it fails:
// a drill that did not run has not passed.
//
//   git clone <windmill-sync-example> /tmp/wse
//   WINDMILL_SYNC_EXAMPLE=/tmp/wse npm run drill:sync-example
//
// It starts a throwaway Millrace (test database, REST API, one worker), pushes the clone with
// `wmill sync push --yes --plain-secrets --skip-apps` (Millrace has no apps; a secret encrypted by
// another instance is only storable as plain text), pushes it again, and prints what the second
// push still listed and whether it made new script or flow versions. Exit 0 only when the first
// push succeeded and the second made no new version. With DEFAULT_TS=deno it pushes the clone as a
// `defaultTs: deno` team holds it.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createApiToken, createKeyring, createUser, createWorkspace, principalOf } from "@millrace/core";
import { createTestServices } from "@millrace/core/testing";
import { globalSetup, globalTeardown } from "@millrace/db/testing/global-setup";
import { startTestApi, startTestWorker } from "@millrace/worker/testing";
import { changeLines, copyRepository } from "./sync-example.ts";
import { runWmill } from "./testing.ts";

const source = process.env.WINDMILL_SYNC_EXAMPLE;
if (!source || !fs.existsSync(path.join(source, "wmill.yaml"))) {
  console.error(
    "WINDMILL_SYNC_EXAMPLE must name a clone of a Windmill repository (a folder with wmill.yaml). Nothing was pushed: this is a failure, not a pass.",
  );
  process.exit(1);
}

const KEY = "sync-example-drill-instance-key-0123456789";
const WS = "syncexample";
await globalSetup();
const services = await createTestServices();
const home = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-sync-example-drill-"));
let failed = false;
try {
  const ctx = { ...services, secrets: createKeyring(KEY) };
  const admin = await createUser(ctx, { email: "importer@example.com", password: "importer-password-1" });
  await createWorkspace(ctx, principalOf(admin), { id: WS, name: WS });
  const token = await createApiToken(services, principalOf(admin), { label: "drill" });
  const api = await startTestApi(services.database.url, KEY);
  const worker = await startTestWorker(services.database.url, {
    MILLRACE_SECRET_KEY: KEY,
    BASE_INTERNAL_URL: api.url,
  });
  try {
    const repo = path.join(home, "repo");
    copyRepository(source, repo, { defaultTs: process.env.DEFAULT_TS === "deno" ? "deno" : undefined });
    const push = () =>
      runWmill(["sync", "push", "--yes", "--skip-branch-validation", "--plain-secrets", "--skip-apps"], {
        cwd: repo,
        home,
        instance: { url: api.url, token, workspace: WS },
      });
    const versions = async () =>
      (
        await services.pool.query<{ scripts: number; flows: number }>(
          `SELECT (SELECT count(*)::int FROM script WHERE workspace_id = $1) AS scripts,
                  (SELECT count(*)::int FROM flow_version WHERE workspace_id = $1) AS flows`,
          [WS],
        )
      ).rows[0]!;
    const first = await push();
    console.log(first.output);
    assert.equal(first.code, 0, "the first push failed (see above)");
    const before = await versions();
    const second = await push();
    assert.equal(second.code, 0, `the second push failed:\n${second.output}`);
    const after = await versions();
    console.log(`\nsecond push still lists ${changeLines(second.output).length} change(s):`);
    for (const line of changeLines(second.output)) console.log(`  ${line}`);
    console.log(
      `versions before/after the second push: ${JSON.stringify(before)} / ${JSON.stringify(after)}`,
    );
    assert.deepEqual(after, before, "the second push made new versions");
  } finally {
    await worker.stop();
    await api.close();
  }
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? error.message : error);
} finally {
  await services.close();
  fs.rmSync(home, { recursive: true, force: true });
  await globalTeardown();
}
console.log(failed ? "drill: FAILED" : "drill: passed");
process.exit(failed ? 1 : 0);
