// docs/compatibility.md kept true: the endpoints Windmill's installed clients call (read from
// windmill-client 1.818 and windmill-cli 1.819 themselves), each called well-formed against a live
// Millrace with a worker, its answer checked against windmill-client's generated types, and the
// outcome compared with the state the document gives it. `npm run compat` runs this file with
// MILLRACE_COMPAT_WRITE=1, which writes the document from the outcome instead of comparing.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, it } from "node:test";
import { createApiToken, createKeyring, createUser, createWorkspace, principalOf } from "@millrace/core";
import { createTestServices, startTestS3, type TestServices } from "@millrace/core/testing";
import { startTestApi, startTestWorker, type TestApi, type TestWorker } from "@millrace/worker/testing";
import { DOC_PATH, parseDoc, renderDoc } from "../../../scripts/compat/doc.ts";
import { windmillClientEndpoints, type ClientEndpoint } from "../../../scripts/compat/endpoints.ts";
import { FIXTURES, probe, type World } from "../../../scripts/compat/probe.ts";
import { responseShapes } from "../../../scripts/compat/shapes.ts";

const KEY = "windmill-compat-instance-key-0123456789abcdef";
const WRITE = process.env.MILLRACE_COMPAT_WRITE === "1";
const PY = 'def main(name: str = "world"):\n    return f"hello {name}"\n';

describe("Windmill's clients against Millrace (docs/compatibility.md)", () => {
  let services: TestServices;
  let api: TestApi;
  let worker: TestWorker;
  let s3: Awaited<ReturnType<typeof startTestS3>>;
  let token: string;
  let world: World;
  // Read once, before any server runs: the checker blocks the event loop for seconds, and an idle
  // keep-alive connection closed meanwhile would fail the next request for nothing.
  let shapes: ReturnType<typeof responseShapes>;
  const endpoints: ClientEndpoint[] = windmillClientEndpoints();
  const inScope = endpoints.filter((e) => !e.outOfScope);

  async function rest(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${api.url}/api${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `seeding: ${method} ${path} answered ${response.status} ${text}`);
    return /json/.test(response.headers.get("content-type") ?? "") ? JSON.parse(text) : text;
  }

  async function completed(ws: string, id: string): Promise<void> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const job = (await rest("GET", `/w/${ws}/jobs_u/get/${id}`)) as { type?: string };
      if (job.type === "CompletedJob") return;
      assert.ok(Date.now() < deadline, `seeding: job ${id} did not complete:\n${worker.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  before(async () => {
    shapes = responseShapes();
    services = await createTestServices();
    const ctx = { ...services, secrets: createKeyring(KEY) };
    const admin = await createUser(ctx, {
      email: "admin@example.com",
      password: "compat-password-1",
      superAdmin: true,
      name: "Admin",
    });
    const ws = "compat";
    await createWorkspace(ctx, principalOf(admin), { id: ws, name: "Compat" });
    const bob = await createUser(ctx, { email: "bob@example.com", password: "compat-password-3" });
    await services.db.workspaceMember.create({
      data: { workspaceId: ws, userId: bob.id, role: "developer" },
    });
    await createUser(ctx, { email: "carol@example.com", password: "compat-password-4" });
    token = await createApiToken(services, principalOf(admin), { label: "windmill compat" });
    api = await startTestApi(services.database.url, KEY);
    worker = await startTestWorker(services.database.url, {
      MILLRACE_SECRET_KEY: KEY,
      BASE_INTERNAL_URL: api.url,
    });

    // The world, made as a Windmill user makes it: over Windmill's REST paths.
    await rest("POST", `/w/${ws}/folders/create`, { name: "demo" });
    const scriptHash = String(
      await rest("POST", `/w/${ws}/scripts/create`, {
        path: "f/demo/hello",
        summary: "Hello",
        description: "",
        content: PY,
        language: "python3",
      }),
    );
    await rest("POST", `/w/${ws}/variables/create`, {
      path: "f/demo/secret",
      value: "s3cr3t",
      is_secret: true,
      description: "",
    });
    await rest("POST", `/w/${ws}/resources/type/create`, {
      name: "compat_kind",
      schema: { type: "object", properties: { host: { type: "string" } } },
      description: "",
    });
    s3 = await startTestS3("compat");
    await rest("POST", `/w/${ws}/resources/create`, {
      path: "f/demo/s3",
      value: s3.resourceValue(),
      resource_type: "s3",
      description: "",
    });
    await rest("POST", `/w/${ws}/resources/create`, {
      path: "f/demo/db",
      value: { host: "localhost" },
      resource_type: "compat_kind",
      description: "",
    });
    await rest("POST", `/w/${ws}/schedules/create`, {
      path: "f/demo/nightly",
      schedule: "0 0 3 * * *",
      timezone: "UTC",
      script_path: "f/demo/hello",
      is_flow: false,
      args: {},
      enabled: false,
    });
    await rest("POST", `/w/${ws}/groups/create`, { name: "ops", summary: "Operators" });
    await rest("POST", `/w/${ws}/flows/create`, {
      path: "f/demo/flow",
      summary: "Flow",
      description: "",
      value: {
        modules: [
          {
            id: "a",
            value: {
              type: "script",
              path: "f/demo/hello",
              input_transforms: { name: { type: "static", value: "flow" } },
            },
          },
        ],
      },
      schema: { type: "object", properties: {}, required: [] },
    });
    const history = (await rest("GET", `/w/${ws}/flows/history/p/f/demo/flow`)) as { id: number }[];
    const job = String(await rest("POST", `/w/${ws}/jobs/run/p/f/demo/hello`, { name: "compat" }));
    const flowJob = String(await rest("POST", `/w/${ws}/jobs/run/f/f/demo/flow`, {}));
    const queued = String(await rest("POST", `/w/${ws}/jobs/run/p/f/demo/hello?scheduled_in_secs=3600`, {}));
    await completed(ws, job);
    await completed(ws, flowJob);
    world = {
      ws,
      admin: admin.username,
      adminEmail: admin.email,
      bob: bob.username,
      carolEmail: "carol@example.com",
      scriptHash: scriptHash.trim(),
      job: job.trim(),
      flowJob: flowJob.trim(),
      flowVersion: history[0]!.id,
      later: { queued: queued.trim() },
    };
  });

  after(async () => {
    await worker?.stop();
    await api?.close();
    await s3?.close();
    await services?.close();
  });

  it("has a fixture for every in-scope endpoint, and nothing else", () => {
    const fixtures = new Set(FIXTURES.map(([operationId]) => operationId));
    const missing = inScope.filter((e) => !fixtures.has(e.operationId)).map((e) => e.operationId);
    assert.deepEqual(missing, [], "in-scope endpoints without a fixture in scripts/compat/probe.ts");
    const known = new Set(inScope.map((e) => e.operationId));
    const stale = [...fixtures].filter((operationId) => !known.has(operationId));
    assert.deepEqual(stale, [], "fixtures of endpoints the clients no longer call");
  });

  it("every endpoint is in the state docs/compatibility.md gives it", { timeout: 600_000 }, async () => {
    const byOperation = new Map(inScope.map((e) => [e.operationId, e]));
    const results = new Map<string, { ok: boolean; problem: string }>();
    for (const [operationId, fixture] of FIXTURES) {
      const endpoint = byOperation.get(operationId);
      if (!endpoint) continue;
      const key = `${endpoint.method} ${endpoint.path}`;
      let result: { ok: boolean; problem: string; body?: unknown };
      try {
        result = await probe(api.url, token, endpoint, world, fixture(world), shapes.get(key));
      } catch (error) {
        result = {
          ok: false,
          problem: `probe failed: ${(error as Error).message} ${String((error as Error).cause ?? "")}`,
        };
      }
      results.set(key, result);
      // What later fixtures need from earlier answers.
      if (operationId === "createToken" && typeof result.body === "string") {
        world.later.tokenPrefix = result.body.trim().slice(0, 10);
      }
    }

    const rendered = renderDoc(endpoints, results);
    if (WRITE) {
      fs.writeFileSync(DOC_PATH, rendered.text);
      return;
    }
    assert.ok(fs.existsSync(DOC_PATH), "docs/compatibility.md is missing: run npm run compat");
    const documented = parseDoc(fs.readFileSync(DOC_PATH, "utf8"));
    const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
    assert.deepEqual(
      documented.map((r) => `${key(r)} ${r.operationId}`).sort(),
      rendered.rows.map((r) => `${key(r)} ${r.operationId}`).sort(),
      "docs/compatibility.md does not list the endpoints the installed clients call: run npm run compat",
    );
    const actual = new Map(rendered.rows.map((r) => [key(r), r]));
    const disagreements = documented
      .filter((r) => actual.get(key(r))!.state !== r.state)
      .map((r) => {
        const found = actual.get(key(r))!;
        return `${key(r)} (${r.operationId}): the document says ${r.state}, it is ${found.state}${found.state === "pending" ? `: ${found.note}` : ""}`;
      });
    assert.deepEqual(disagreements, [], "docs/compatibility.md and reality disagree: run npm run compat");
  });

  it("Windmill settings: those Millrace lacks are accepted only unset; object storage is S3 only; refusals name the field", async () => {
    const post = (name: string, body: unknown) =>
      fetch(`${api.url}/api/w/${world.ws}/workspaces/${name}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    assert.equal((await post("edit_webhook", { webhook: "" })).status, 200);
    const refused = await post("edit_webhook", { webhook: "https://example.com/hook" });
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get("x-error-field"), "webhook");
    assert.match(await refused.text(), /no workspace webhook/);
    // Object storage: S3 only, refused naming the field; an empty body (what wmill sends for no
    // storage) removes it.
    const gcs = await post("edit_large_file_storage_config", {
      large_file_storage: { type: "GoogleCloudStorage", gcs_resource_path: "f/demo/gcs" },
    });
    assert.equal(gcs.status, 400);
    assert.equal(gcs.headers.get("x-error-field"), "large_file_storage.type");
    assert.equal((await post("edit_large_file_storage_config", {})).status, 200);
    const settings = await fetch(`${api.url}/api/w/${world.ws}/workspaces/get_settings`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(((await settings.json()) as { large_file_storage?: unknown }).large_file_storage, undefined);
    const handler = await post("edit_error_handler", { path: "script/f/demo/hello" });
    assert.equal(handler.status, 400);
    const groups = await fetch(`${api.url}/api/groups/overwrite`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify([{ name: "admins" }]),
    });
    assert.equal(groups.status, 400);
  });

  // Issue 23 asks for 95 % of the in-scope endpoints. The floor is what is reached (148 of 153:
  // Slack and Teams approvals and workflow-as-code approval URLs are pending), so that none is
  // lost; raise it as endpoints land.
  const MIN_WORKING = 148;
  it(`at least ${MIN_WORKING} and 95 % of the in-scope endpoints work, as the document says`, () => {
    const rows = parseDoc(fs.readFileSync(DOC_PATH, "utf8")).filter((r) => r.state !== "out of scope");
    const works = rows.filter((r) => r.state === "works").length;
    assert.ok(works >= Math.ceil(rows.length * 0.95), `${works} of ${rows.length} work: under 95 %`);
    const pending = rows.filter((r) => r.state === "pending").map((r) => `${r.method} ${r.path}`);
    assert.ok(works >= MIN_WORKING, `${works} of ${rows.length} work; pending:\n${pending.join("\n")}`);
  });
});
