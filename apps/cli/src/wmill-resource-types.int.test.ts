// The real `wmill` (npm windmill-cli 1.819) pushes a repository whose resources name Windmill's
// common resource types (mssql, snowflake, slack, kafka, …) without defining them: Millrace ships
// those types, so the push succeeds unchanged and a second push has nothing to do.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { createApiToken, createUser, createWorkspace, principalOf } from "@millrace/core";
import { createTestServices, type TestServices } from "@millrace/core/testing";
import { startTestApi, type TestApi } from "@millrace/worker/testing";
import { runWmill, type WmillRun } from "./testing.ts";

const KEY = "wmill-resource-types-key-0123456789abcdef";
const WS = "rtypes";

const RESOURCES: Record<string, { type: string; value: string[] }> = {
  "f/data/warehouse": {
    type: "mssql",
    value: [
      "  host: sql.internal.example",
      "  port: 1433",
      "  user: etl",
      "  dbname: sales",
      "  trust_cert: true",
    ],
  },
  "f/data/snow": {
    type: "snowflake",
    value: ["  account_identifier: myorg-analytics", "  username: LOADER", "  warehouse: COMPUTE_WH"],
  },
  "f/data/alerts": { type: "slack", value: ["  token: xoxb-not-a-real-token"] },
  "f/data/events": {
    type: "kafka",
    value: ["  brokers:", "    - kafka-1.internal:9092", "  security_protocol: SASL_SSL"],
  },
  "f/data/drop": { type: "sftp", value: ["  host: sftp.partner.example", "  username: acme"] },
  "f/data/bq": {
    type: "bigquery",
    value: [
      "  project_id: analytics",
      "  client_email: etl@analytics.iam.gserviceaccount.com",
      "  private_key: x",
    ],
  },
};

describe("wmill sync push of resources of Windmill's common types", () => {
  let services: TestServices;
  let api: TestApi;
  let token: string;
  let home: string;
  let repo: string;

  function wmill(args: string[]): Promise<WmillRun> {
    return runWmill(args, { cwd: repo, home });
  }
  async function ok(args: string[]) {
    const run = await wmill(args);
    assert.equal(run.code, 0, `wmill ${args.join(" ")}:\n${run.output}`);
    return run;
  }
  function write(file: string, content: string) {
    fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    fs.writeFileSync(path.join(repo, file), content);
  }

  before(async () => {
    services = await createTestServices();
    const admin = await createUser(services, { email: "ops@example.com", password: "rtypes-password-1" });
    await createWorkspace(services, principalOf(admin), { id: WS, name: "Resource types" });
    token = await createApiToken(services, principalOf(admin), { label: "resource types" });
    api = await startTestApi(services.database.url, KEY);
    home = fs.mkdtempSync(path.join(os.tmpdir(), "millrace-rtypes-"));
    repo = path.join(home, "repo");
    fs.mkdirSync(repo);
  });
  after(async () => {
    await api?.close();
    await services?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it("pushes them unchanged, and a second push has nothing to do", async () => {
    await ok(["workspace", "add", "millrace", WS, `${api.url}/`, "--token", token]);
    write(
      "wmill.yaml",
      "defaultTs: bun\nincludes:\n  - f/**\nexcludes: []\nnonDottedPaths: true\nsyncBehavior: v1\n",
    );
    write("f/data/folder.meta.yaml", "summary: Data\nowners: []\nextra_perms: {}\n");
    for (const [resourcePath, { type, value }] of Object.entries(RESOURCES)) {
      write(
        `${resourcePath}.resource.yaml`,
        ["value:", ...value, "description: ''", `resource_type: ${type}`, ""].join("\n"),
      );
    }
    const pushed = await ok(["sync", "push", "--yes", "--skip-branch-validation"]);
    for (const resourcePath of Object.keys(RESOURCES)) {
      assert.match(pushed.output, new RegExp(`\\+ resource ${resourcePath}`), pushed.output);
    }
    for (const [resourcePath, { type }] of Object.entries(RESOURCES)) {
      const res = await fetch(`${api.url}/api/w/${WS}/resources/get/${resourcePath}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(res.status, 200, resourcePath);
      const body = (await res.json()) as { resource_type: string; value: Record<string, unknown> };
      assert.equal(body.resource_type, type, resourcePath);
    }
    const warehouse = await fetch(`${api.url}/api/w/${WS}/resources/get_value/f/data/warehouse`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.deepEqual(await warehouse.json(), {
      host: "sql.internal.example",
      port: 1433,
      user: "etl",
      dbname: "sales",
      trust_cert: true,
    });
    // The type's schema is there for wmill and windmill-client to read.
    const type = await fetch(`${api.url}/api/w/${WS}/resources/type/get/snowflake`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(type.status, 200);
    const schema = ((await type.json()) as { schema: { required: string[] } }).schema;
    assert.deepEqual(schema.required, ["account_identifier", "username"]);

    const again = await ok(["sync", "push", "--yes", "--skip-branch-validation"]);
    assert.doesNotMatch(again.output, /\+ resource|~ resource/, again.output);
  });
});
