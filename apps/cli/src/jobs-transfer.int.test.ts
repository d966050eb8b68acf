// What `wmill jobs pull` / `wmill jobs push` call, through windmill-client's JobService (the same
// generated services wmill bundles) against a live Millrace with a real worker: a workspace's
// finished and queued jobs exported, deleted where they were, and imported into another workspace.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createApiToken, createFolder, createKeyring, createWorkspace, deployScript } from "@millrace/core";
import { createTestMember, createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import * as wmillClient from "windmill-client";

const KEY = "jobs-transfer-instance-key-0123456789abcd";
const FROM = "movefrom";
const TO = "moveto";

describe("moving a workspace's jobs with Windmill's export, import and delete", () => {
  let services: TestServices;
  let api: TestApi;
  let worker: TestWorker;
  let username: string;

  before(async () => {
    services = await createTestServices();
    const { membership, principal } = await createTestMember(services, FROM);
    username = principal.username;
    await createWorkspace(services, principal, { id: TO, name: "Move to" });
    const ctx = { ...services, secrets: createKeyring(KEY) };
    const target = { ...membership, workspace: { ...membership.workspace, id: TO } };
    for (const m of [membership, target]) {
      await createFolder(ctx, m, { name: "ops" });
      await deployScript(ctx, m, {
        path: "f/ops/greet",
        language: "bash",
        content: 'name="$1"\necho "hello $name"\n',
      });
    }
    const token = await createApiToken(services, principal, { label: "jobs transfer" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: api.url,
    });
    delete process.env.WM_JOB_ID;
    wmillClient.setClient(token, api.url);
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await services?.close();
  });

  it("exports finished and queued jobs with their logs, deletes them, and imports them elsewhere", async () => {
    const { JobService } = wmillClient;
    const result = await JobService.runWaitResultScriptByPath({
      workspace: FROM,
      path: "f/ops/greet",
      requestBody: { name: "moved" },
    });
    assert.equal(result, "hello moved");
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const queuedId = await JobService.runScriptByPath({
      workspace: FROM,
      path: "f/ops/greet",
      requestBody: { name: "later" },
      scheduledFor: later,
    });

    const completed = (await JobService.exportCompletedJobs({ workspace: FROM, page: 1, perPage: 100 })) as {
      id: string;
      result: unknown;
      logs?: string;
      email: string;
      created_by: string;
      job_kind: string;
    }[];
    assert.equal(completed.length, 1);
    const [done] = completed;
    assert.equal(done!.result, "hello moved");
    assert.match(done!.logs ?? "", /hello moved/);
    assert.equal(done!.job_kind, "script");
    assert.equal(done!.created_by, username);
    assert.match(done!.email, /@example\.com$/);
    const queued = (await JobService.exportQueuedJobs({ workspace: FROM })) as { id: string }[];
    assert.deepEqual(
      queued.map((job) => job.id),
      [queuedId],
    );

    // Ids are unique on an instance: the import needs them gone from where they were.
    await assert.rejects(
      JobService.importCompletedJobs({ workspace: TO, requestBody: completed as never }),
      (error: { status?: number; body?: unknown }) =>
        error.status === 409 && /\[0\]\.id: job .* already exists/.test(String(error.body)),
    );
    assert.equal(
      await JobService.deleteJobs({ workspace: FROM, requestBody: [done!.id, queuedId] }),
      "Deleted 2 jobs",
    );
    await assert.rejects(JobService.getJob({ workspace: FROM, id: done!.id }), { status: 404 });

    assert.equal(
      await JobService.importCompletedJobs({ workspace: TO, requestBody: completed as never }),
      "Imported 1 completed jobs",
    );
    const imported = await JobService.getCompletedJob({ workspace: TO, id: done!.id });
    assert.equal(imported.result, "hello moved");
    assert.equal(imported.success, true);
    assert.match(imported.logs ?? "", /hello moved/);

    // A queued job is started again here, as the importing admin, at its time.
    const answer = await JobService.importQueuedJobs({ workspace: TO, requestBody: queued as never });
    const newId = /new jobs\): (\S+)$/.exec(String(answer))?.[1];
    assert.ok(newId, String(answer));
    const restarted = await JobService.getJob({ workspace: TO, id: newId });
    assert.equal(restarted.type, "QueuedJob");
    assert.deepEqual(restarted.args, { name: "later" });
    assert.equal(restarted.permissioned_as, `u/${username}`);
    assert.equal(new Date((restarted as { scheduled_for: string }).scheduled_for).toISOString(), later);
  });

  it("refuses a bad import naming the job and field, and writes nothing", async () => {
    const { JobService } = wmillClient;
    const id = "0190f0e0-0000-7000-8000-000000000001";
    const good = {
      id,
      job_kind: "script",
      created_by: username,
      permissioned_as: `u/${username}`,
      created_at: new Date().toISOString(),
      email: "x@example.com",
      visible_to_owner: true,
    };
    const { permissioned_as: _missing, ...bad } = { ...good, id: "0190f0e0-0000-7000-8000-000000000002" };
    await assert.rejects(
      JobService.importCompletedJobs({ workspace: TO, requestBody: [good, bad] as never }),
      (error: { status?: number; body?: unknown }) =>
        error.status === 400 && /^1\.permissioned_as: is required/.test(String(error.body)),
    );
    await assert.rejects(JobService.getJob({ workspace: TO, id }), { status: 404 });
    await assert.rejects(
      JobService.importQueuedJobs({
        workspace: TO,
        requestBody: [{ ...good, job_kind: "preview", raw_code: "echo hi" }] as never,
      }),
      (error: { status?: number; body?: unknown }) =>
        error.status === 400 &&
        /^\[0\]\.job_kind: a queued preview job cannot be imported/.test(String(error.body)),
    );
  });
});
