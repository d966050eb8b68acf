// A repository exported from Windmill names hub resource types (mssql, snowflake, slack…) without
// shipping their definitions: its sync push must apply unchanged, the values checked against the
// built-in types.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createKeyring } from "../secrets/index.ts";
import { restoreWorkspaceFiles, type RestoreContext } from "../sync/restore.ts";
import { createTestMember, createTestServices, type TestServices } from "../testing.ts";
import {
  deleteResourceType,
  getResourceType,
  listResourceTypes,
  updateResourceType,
} from "./resource-types.ts";
import { createResource, getResource } from "./resources.ts";

const KEY = "builtin-types-test-instance-key-0123456789";

/** Files as `wmill sync pull` writes them on Windmill (YAML, non-dotted paths). */
function windmillRepository(): Map<string, string> {
  return new Map([
    ["f/data/folder.meta.yaml", "summary: Data\nowners: []\nextra_perms: {}\n"],
    ["f/data/mssql_pwd.variable.yaml", "value: Pa55word!\nis_secret: false\ndescription: ''\n"],
    [
      "f/data/warehouse.resource.yaml",
      [
        "value:",
        "  host: sql.internal.example",
        "  port: 1433",
        "  user: etl",
        "  password: $var:f/data/mssql_pwd",
        "  dbname: sales",
        "  trust_cert: true",
        "description: Sales warehouse",
        "resource_type: mssql",
        "",
      ].join("\n"),
    ],
    [
      "f/data/snow.resource.yaml",
      [
        "value:",
        "  account_identifier: myorg-analytics",
        "  username: LOADER",
        "  private_key: $var:f/data/mssql_pwd",
        "  warehouse: COMPUTE_WH",
        "  database: RAW",
        "  schema: PUBLIC",
        "  role: LOADER_ROLE",
        "description: ''",
        "resource_type: snowflake",
        "",
      ].join("\n"),
    ],
    [
      "f/data/slack_bot.resource.yaml",
      "value:\n  token: xoxb-not-a-real-token\ndescription: Alerts bot\nresource_type: slack\n",
    ],
    [
      "f/data/events.resource.yaml",
      [
        "value:",
        "  brokers:",
        "    - kafka-1.internal:9092",
        "    - kafka-2.internal:9092",
        "  security_protocol: SASL_SSL",
        "  sasl_mechanism: SCRAM-SHA-512",
        "  username: app",
        "  password: secret",
        "description: ''",
        "resource_type: kafka",
        "",
      ].join("\n"),
    ],
    [
      "f/data/partner_drop.resource.yaml",
      "value:\n  host: sftp.partner.example\n  port: 22\n  username: acme\n  private_key: '-----BEGIN OPENSSH PRIVATE KEY-----'\ndescription: ''\nresource_type: sftp\n",
    ],
    [
      "f/data/llm.resource.yaml",
      "value:\n  api_key: sk-not-real\n  organization_id: org-123\ndescription: ''\nresource_type: openai\n",
    ],
    [
      // A field this version of the type does not list: pushed as it is.
      "f/data/gh.resource.yaml",
      "value:\n  token: ghp_not_real\n  expires_at: 2030-01-01\ndescription: ''\nresource_type: github\n",
    ],
  ]);
}

describe("sync push of a Windmill repository naming built-in resource types", () => {
  let services: TestServices;

  before(async () => {
    services = await createTestServices();
  });
  after(async () => {
    await services?.close();
  });

  it("applies unchanged, and the resources keep their types and values", async () => {
    const ctx: RestoreContext = { ...services, secrets: createKeyring(KEY) };
    const { membership } = await createTestMember(services, "from_windmill");
    const files = windmillRepository();
    const report = await restoreWorkspaceFiles(ctx, membership.principal, files, {
      scope: "workspace",
      workspaceId: "from_windmill",
      membership,
    });
    assert.deepEqual(report.errors, []);
    assert.equal(report.applied, true);
    const expected: [string, string][] = [
      ["f/data/warehouse", "mssql"],
      ["f/data/snow", "snowflake"],
      ["f/data/slack_bot", "slack"],
      ["f/data/events", "kafka"],
      ["f/data/partner_drop", "sftp"],
      ["f/data/llm", "openai"],
      ["f/data/gh", "github"],
    ];
    for (const [path, type] of expected) {
      const resource = await getResource(ctx, membership, path);
      assert.equal(resource.resourceType, type, path);
    }
    const warehouse = await getResource(ctx, membership, "f/data/warehouse");
    assert.deepEqual(warehouse.value, {
      host: "sql.internal.example",
      port: 1433,
      user: "etl",
      password: "$var:f/data/mssql_pwd",
      dbname: "sales",
      trust_cert: true,
    });
    assert.deepEqual((await getResource(ctx, membership, "f/data/events")).value, {
      brokers: ["kafka-1.internal:9092", "kafka-2.internal:9092"],
      security_protocol: "SASL_SSL",
      sasl_mechanism: "SCRAM-SHA-512",
      username: "app",
      password: "secret",
    });
    // Pushing the same repository again changes nothing.
    const again = await restoreWorkspaceFiles(ctx, membership.principal, files, {
      scope: "workspace",
      workspaceId: "from_windmill",
      membership,
    });
    assert.deepEqual(again.errors, []);
    assert.deepEqual(again.diff.added, []);
  });

  it("refuses a value without a required field of its built-in type, naming the file and the field", async () => {
    const ctx: RestoreContext = { ...services, secrets: createKeyring(KEY) };
    const { membership } = await createTestMember(services, "bad_values");
    const files = new Map([
      ["f/data/folder.meta.yaml", "summary: Data\nowners: []\nextra_perms: {}\n"],
      [
        "f/data/snow.resource.yaml",
        "value:\n  username: LOADER\ndescription: ''\nresource_type: snowflake\n",
      ],
      [
        "f/data/events.resource.yaml",
        "value:\n  brokers: kafka:9092\n  security_protocol: TLS\ndescription: ''\nresource_type: kafka\n",
      ],
    ]);
    const report = await restoreWorkspaceFiles(ctx, membership.principal, files, {
      scope: "workspace",
      workspaceId: "bad_values",
      membership,
    });
    assert.equal(report.applied, false);
    const named = report.errors.map((e) => `${e.file}#${e.field ?? ""}`).sort();
    assert.deepEqual(named, [
      "f/data/events.resource.yaml#value.security_protocol",
      "f/data/snow.resource.yaml#value.account_identifier",
    ]);
  });

  it("a repository's own type named like a built-in one shadows it in that workspace, and wmill's update of a built-in makes it the workspace's own", async () => {
    const ctx: RestoreContext = { ...services, secrets: createKeyring(KEY) };
    const { membership } = await createTestMember(services, "own_github");
    const files = new Map([
      ["f/data/folder.meta.yaml", "summary: Data\nowners: []\nextra_perms: {}\n"],
      [
        "github.resource-type.yaml",
        "schema:\n  type: object\n  properties:\n    app_id:\n      type: string\n  required:\n    - app_id\ndescription: Our GitHub app\n",
      ],
      // Valid for the repository's type, not for the built-in one (no token).
      ["f/data/gh_app.resource.yaml", "value:\n  app_id: '1234'\ndescription: ''\nresource_type: github\n"],
    ]);
    const report = await restoreWorkspaceFiles(ctx, membership.principal, files, {
      scope: "workspace",
      workspaceId: "own_github",
      membership,
    });
    assert.deepEqual(report.errors, []);
    assert.equal(report.applied, true);
    const github = (await listResourceTypes(ctx, membership)).filter((type) => type.name === "github");
    assert.equal(github.length, 1, "listed once");
    assert.equal(github[0]!.builtin, false);
    assert.equal(github[0]!.description, "Our GitHub app");
    await assert.rejects(
      createResource(ctx, membership, {
        path: "f/data/other",
        resourceType: "github",
        value: { token: "x" },
      }),
      /app_id/,
      "checked against the workspace's type",
    );

    // Elsewhere the built-in still rules; an update of it (what wmill pushes for a type it finds
    // existing) creates the workspace's own, and deleting that brings the built-in back.
    const { membership: other } = await createTestMember(services, "edits_slack");
    const edited = await updateResourceType(ctx, other, "slack", { description: "Our Slack" });
    assert.equal(edited.builtin, false);
    assert.equal((await getResourceType(ctx, other, "slack")).description, "Our Slack");
    assert.equal(
      (await getResourceType(ctx, membership, "slack")).builtin,
      true,
      "other workspaces unchanged",
    );
    await deleteResourceType(ctx, other, "slack");
    assert.equal((await getResourceType(ctx, other, "slack")).builtin, true);
    await assert.rejects(
      deleteResourceType(ctx, other, "slack"),
      /built-in resource type and cannot be deleted/,
    );
  });
});
