// The disaster-recovery drill (issue 20): an instance filled with every kind Millrace syncs is
// synced to a real git remote over HTTP, its database is dropped completely, a fresh database is
// restored from the remote with the real `millrace restore --from-git` (a child process, through
// the REST API), and then: the sync export is byte for byte the one taken before, scripts of the
// five languages run on a real worker, a secret decrypts inside a job, a flow runs, schedules of a
// script and of a flow tick, and a user whose password hash was committed signs in with the same
// password.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  addGroupMember,
  createApiToken,
  createFlow,
  createFolder,
  createGroup,
  createKeyring,
  createResource,
  createResourceType,
  createSchedule,
  createUser,
  createVariable,
  createWebhookToken,
  deployScript,
  latestScript,
  principalOf,
  readRepositoryFiles,
  requireMembership,
  runDueSchedules,
  runFlowByPath,
  runGitSync,
  runScriptByPath,
  setGitSyncSettings,
  setGlobalSetting,
  updateFlow,
  updateWorkerGroupConfig,
  waitForJob,
  type Membership,
  type Principal,
} from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { pullFiles } from "@millrace/sync/git";
import { startTestGitRemote, type TestGitRemote } from "@millrace/sync/testing/git-remote";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import { runCli } from "./testing.ts";

const KEY = "drill-instance-key-0123456789abcdefghijklmn";
const SECRET = "drill-s3cr3t-value";
const WS = "drill";
const REPO_OPTIONS = { instanceConfig: true, passwordHashes: true };

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The database of `services` as a `postgresql` resource value (database `postgres`). */
function databaseResource(services: TestServices) {
  const url = new URL(services.database.url);
  return {
    host: url.hostname,
    port: Number(url.port),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    dbname: "postgres",
    sslmode: "disable",
  };
}

async function fill(services: TestServices, admin: Membership, superadmin: Principal): Promise<void> {
  const ctx = { ...services, secrets: createKeyring(KEY) };
  const dev = await createUser(services, { email: "dev@drill.example", password: "dev-password-1" });
  await services.db.workspaceMember.create({ data: { workspaceId: WS, userId: dev.id, role: "developer" } });
  const operator = await createUser(services, { email: "op@drill.example", password: "op-password-1" });
  await services.db.workspaceMember.create({
    data: { workspaceId: WS, userId: operator.id, role: "operator" },
  });

  await createGroup(ctx, admin, { name: "oncall", summary: "Who gets paged" });
  await addGroupMember(ctx, admin, "oncall", dev.username);
  await createFolder(ctx, admin, {
    name: "ops",
    summary: "Operations",
    extraPerms: { "g/oncall": true, [`u/${operator.username}`]: false },
  });
  await createFolder(ctx, admin, { name: "reports" });

  const deploy = async (input: { path: string; language: string; content: string; summary?: string }) => {
    const latest = await latestScript(ctx, WS, input.path);
    return deployScript(ctx, admin, { ...input, parentHash: latest?.hash });
  };
  // Several versions each: only the latest is in git, and it is what comes back.
  await deploy({ path: "f/ops/hello", language: "bash", content: 'echo "draft"\n' });
  await deploy({
    path: "f/ops/hello",
    language: "bash",
    content: 'name="$1"\necho "hello $name"\n',
    summary: "Greets",
  });
  await deploy({ path: "f/ops/sum", language: "python3", content: "def main(a: int):\n    return a\n" });
  await deploy({
    path: "f/ops/sum",
    language: "python3",
    content: "def main(a: int, b: int = 2):\n    return a + b\n",
  });
  await deploy({
    path: "f/ops/secret_digest",
    language: "python3",
    content:
      "import hashlib\n\ndef main(token: str):\n    return hashlib.sha256(token.encode()).hexdigest()\n",
  });
  await deploy({
    path: "f/reports/shout",
    language: "bun",
    content: "export function main(s: string) {\n  return s.toUpperCase();\n}\n",
  });
  await deploy({
    path: "f/reports/shout",
    language: "bun",
    content: "export function main(s: string) {\n  return s.toUpperCase() + '!';\n}\n",
  });
  await deploy({
    path: "f/reports/twice",
    language: "deno",
    content: "export function main(n: number) {\n  return n * 2;\n}\n",
  });
  await deploy({
    path: "f/reports/next",
    language: "postgresql",
    content: "-- $1 n (int)\nSELECT $1 + 1 AS next;\n",
  });

  await createResourceType(ctx, admin, {
    name: "c_service",
    schema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { url: { type: "string" }, token: { type: "string" } },
      required: ["url"],
    },
    description: "An internal service",
  });
  await createVariable(ctx, admin, { path: "f/ops/region", value: "eu-west-1", description: "Where we run" });
  await createVariable(ctx, admin, { path: "f/ops/token", value: SECRET, isSecret: true });
  await createResource(ctx, admin, {
    path: "f/ops/service",
    resourceType: "c_service",
    value: { url: "https://service.internal", token: "$var:f/ops/token" },
    description: "Service with a secret token",
  });
  await createResource(ctx, admin, {
    path: "f/reports/db",
    resourceType: "postgresql",
    value: databaseResource(services),
  });

  await createSchedule(ctx, admin, {
    path: "f/ops/every_second",
    schedule: "* * * * * *",
    scriptPath: "f/ops/hello",
    args: { name: "tick" },
  });
  await createSchedule(ctx, admin, {
    path: "f/ops/nightly",
    schedule: "0 30 2 * * *",
    timezone: "Europe/Paris",
    scriptPath: "f/ops/sum",
    args: { a: 1 },
    enabled: false,
    summary: "Nightly sum",
  });
  // A flow of two versions: a loop over a deployed script, then an inline python step.
  const flow = (suffix: string) => ({
    path: "f/ops/greet_all",
    summary: "Greets everyone",
    value: {
      modules: [
        {
          id: "a",
          value: {
            type: "forloopflow",
            iterator: { type: "javascript", expr: "flow_input.names" },
            skip_failures: false,
            modules: [
              {
                id: "b",
                value: {
                  type: "script",
                  path: "f/ops/hello",
                  input_transforms: { name: { type: "javascript", expr: "flow_input.iter.value" } },
                },
              },
            ],
          },
        },
        {
          id: "c",
          summary: "Join",
          value: {
            type: "rawscript",
            language: "python3",
            content: `def main(greetings):\n    return " / ".join(greetings) + "${suffix}"\n`,
            input_transforms: { greetings: { type: "javascript", expr: "results.a" } },
          },
        },
      ],
    },
  });
  await createFlow(ctx, admin, flow(""));
  await updateFlow(ctx, admin, "f/ops/greet_all", flow("!"));
  await createSchedule(ctx, admin, {
    path: "f/ops/greet_every_second",
    schedule: "* * * * * *",
    scriptPath: "f/ops/greet_all",
    isFlow: true,
    args: { names: ["flow tick"] },
  });
  await createWebhookToken(ctx, admin, { path: "f/ops/hello", label: "ci" });
  await updateWorkerGroupConfig(ctx, superadmin, "reports", { worker_tags: ["reports", "bash"] });
  await setGlobalSetting(ctx, superadmin, "custom_tags", ["gpu", `reports(${WS})`]);
}

describe("disaster-recovery drill: git sync, drop the database, restore from git", () => {
  let source: TestServices | null = null;
  let target: TestServices;
  let remote: TestGitRemote;
  let api: TestApi;
  let worker: TestWorker;
  let exported: Map<string, string>;
  let cacheDir: string;
  let token: string;
  let restored: Membership;
  let devPasswordHash: string | null;

  before(async () => {
    cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-drill-"));
    remote = await startTestGitRemote({ username: "drill", password: "drill-token" });
    source = await createTestServices();
    const ctx = { ...source, secrets: createKeyring(KEY) };
    const { membership: admin, principal } = await createTestMember(source, WS);
    await source.pool.query(`UPDATE "user" SET is_super_admin = true WHERE id = $1`, [principal.userId]);
    const superadmin = { ...principal, isSuperAdmin: true };
    await fill(source, admin, superadmin);
    await setGitSyncSettings(
      ctx,
      { ...admin, principal: superadmin },
      {
        remote_url: remote.url,
        username: "drill",
        password: "drill-token",
        include_instance_config: true,
        include_password_hashes: true,
      },
    );
    const synced = await runGitSync(ctx, WS, { cacheDir });
    assert.equal(synced.status, "success", synced.error);
    exported = await readRepositoryFiles(source.pool, WS, REPO_OPTIONS);
    devPasswordHash = (await source.db.user.findUniqueOrThrow({ where: { email: "dev@drill.example" } }))
      .passwordHash;
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await target?.close();
    await source?.close();
    await remote?.close();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  it("the remote holds the whole workspace, secrets encrypted", async () => {
    const onRemote = await pullFiles({
      dir: path.join(cacheDir, "check"),
      url: remote.url,
      branch: "main",
      auth: { username: "drill", password: "drill-token" },
    });
    assert.deepEqual([...onRemote.keys()].sort(), [...exported.keys()].sort());
    for (const [file, text] of exported) assert.equal(onRemote.get(file), text, file);
    const all = [...onRemote.values()].join("\n");
    assert.ok(!all.includes(SECRET), "no secret in plain text on the remote");
    assert.match(onRemote.get("f/ops/token.variable.yaml") ?? "", /enc:v2:/);
    assert.match(onRemote.get(".millrace/instance.yaml") ?? "", /reports/);
  });

  it("drops the database, restores a fresh one from git with the CLI: the export is byte for byte the same", async () => {
    await source!.close();
    source = null;
    target = await createTestServices();
    const fresh = await createUser(target, {
      email: "root@fresh.example",
      password: "fresh-password-1",
      superAdmin: true,
    });
    const principal = { ...principalOf(fresh), isSuperAdmin: true };
    token = await createApiToken(target, principal, { label: "drill" });
    api = await startTestApi(target.database.url, KEY);

    const run = await runCli(
      [
        "--url",
        api.url,
        "--token",
        token,
        "--json",
        "restore",
        "--from-git",
        remote.url,
        "--git-username",
        "drill",
        "--git-password",
        "drill-token",
        "--yes",
      ],
      {},
    );
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const report = JSON.parse(run.stdout) as { applied: boolean; counts: Record<string, number> };
    assert.equal(report.applied, true);
    assert.equal(report.counts.scripts, 6);
    assert.equal(report.counts.flows, 1);
    console.log(`restore: ${run.ms} ms (CLI, REST, git clone and database writes)`);

    const after = await readRepositoryFiles(target.pool, WS, REPO_OPTIONS);
    assert.deepEqual([...after.keys()].sort(), [...exported.keys()].sort());
    for (const [file, text] of exported)
      assert.equal(after.get(file), text, `${file} differs after the restore`);

    const members = await target.pool.query<{ username: string }>(
      `SELECT u.username FROM workspace_member m JOIN "user" u ON u.id = m.user_id WHERE m.workspace_id = $1`,
      [WS],
    );
    const admin = members.rows.find((m) => m.username.startsWith("user"))!.username;
    const adminUser = await target.db.user.findUniqueOrThrow({ where: { username: admin } });
    restored = await requireMembership(target, principalOf(adminUser), WS);
    // The committed password hash came back: the same password signs in.
    const dev = await target.db.user.findUniqueOrThrow({ where: { email: "dev@drill.example" } });
    assert.equal(dev.passwordHash, devPasswordHash);
  });

  it("scripts of every language run, a secret decrypts inside a job, and a schedule ticks", async () => {
    worker = await startTestWorker(target.database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: api.url,
    });
    const run = async (scriptPath: string, args: unknown) => {
      const id = await runScriptByPath(target, restored, scriptPath, args);
      const job = await waitForJob(target, restored, id, 60_000);
      assert.equal(job.status, "success", `${scriptPath}: ${JSON.stringify(job.result)} ${job.logs ?? ""}`);
      return job.result;
    };
    assert.equal(await run("f/ops/hello", { name: "drill" }), "hello drill");
    assert.equal(await run("f/ops/sum", { a: 40 }), 42);
    assert.equal(await run("f/reports/shout", { s: "up" }), "UP!");
    assert.equal(await run("f/reports/twice", { n: 21 }), 42);
    assert.deepEqual(await run("f/reports/next", { database: "$res:f/reports/db", n: 41 }), [{ next: 42 }]);
    assert.equal(await run("f/ops/secret_digest", { token: "$var:f/ops/token" }), sha256(SECRET));
    // The flow came back as its latest version and runs its steps on the worker.
    const flowJob = await waitForJob(
      target,
      restored,
      await runFlowByPath(target, restored, "f/ops/greet_all", { names: ["ann", "bob"] }),
      60_000,
    );
    assert.equal(flowJob.status, "success", JSON.stringify(flowJob.result));
    assert.equal(flowJob.result, "hello ann / hello bob!");

    await new Promise((resolve) => setTimeout(resolve, 1200));
    const ticks = await runDueSchedules(target);
    assert.ok(
      ticks.some((t) => t.path === "f/ops/every_second" && t.jobId),
      JSON.stringify(ticks),
    );
    const tick = ticks.find((t) => t.path === "f/ops/every_second")!;
    const job = await waitForJob(target, restored, tick.jobId!, 60_000);
    assert.equal(job.result, "hello tick");
    // The schedule of the flow came back too, and its tick runs the flow.
    const flowTick = ticks.find((t) => t.path === "f/ops/greet_every_second");
    assert.ok(flowTick?.jobId, JSON.stringify(ticks));
    const flowRun = await waitForJob(target, restored, flowTick.jobId, 60_000);
    assert.equal(flowRun.result, "hello flow tick!");
  });
});
