import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { BUILTIN_RESOURCE_TYPES, builtinResourceType } from "./builtin-types.ts";
import { SERVICE_RESOURCE_TYPES } from "./builtin-catalog.ts";
import { checkResourceValue, checkTypeSchema } from "./value-schema.ts";

// Names a Windmill repository uses without shipping their definitions (issue 23, item 7).
const EXPECTED = `
  postgresql mysql mssql ms_sql_server bigquery snowflake s3 slack smtp http redis mongodb oracledb
  clickhouse supabase stripe github gitlab openai anthropic azure_blob gcp_service_account gcs kafka
  nats sftp ftp ldap twilio sendgrid discord_webhook teams telegram notion airtable hubspot
  salesforce jira linear
`
  .trim()
  .split(/\s+/);

type Schema = { type?: string; properties?: Record<string, Schema>; required?: string[] } & Record<
  string,
  unknown
>;

/** A value with every required field (recursively), of the declared type. */
function sampleValue(schema: Schema): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  switch (schema.type) {
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 1;
    case "boolean":
      return true;
    case "array":
      return [sampleValue((schema.items as Schema | undefined) ?? { type: "string" })];
    case "object": {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = sampleValue(schema.properties?.[key] ?? {});
      return out;
    }
    case "string":
      if (typeof schema.pattern !== "string") return "x";
      return schema.pattern.includes("ldap") ? "ldaps://x.example" : "https://x.example";
    default:
      return "x";
  }
}

describe("built-in resource types", () => {
  it("has the common types of a Windmill workspace, at least 30 services, with distinct valid names", () => {
    const names = BUILTIN_RESOURCE_TYPES.map((t) => t.name);
    assert.equal(new Set(names).size, names.length, "names are distinct");
    for (const name of names) assert.match(name, /^[a-z][a-z0-9_]{0,49}$/);
    for (const name of EXPECTED) assert.ok(builtinResourceType(name), `missing ${name}`);
    const services = names.filter((n) => n !== "any" && n !== "state");
    assert.ok(services.length >= 30, `${services.length} service types`);
    assert.ok(SERVICE_RESOURCE_TYPES.length >= 30);
  });

  for (const type of BUILTIN_RESOURCE_TYPES) {
    if (type.schema === null) continue;
    const schema = type.schema as Schema;
    it(`${type.name}: a JSON schema that compiles, with required fields it declares`, () => {
      assert.ok(type.description.length > 0);
      assert.deepEqual(checkTypeSchema(schema), schema);
      assert.equal(schema.type, "object");
      const required = schema.required ?? [];
      assert.ok(required.length > 0, "names its required fields");
      for (const key of required) assert.ok(schema.properties?.[key], `required ${key} is declared`);
      // A value with the required fields is accepted, without one of them it is refused (naming it).
      const value = sampleValue(schema) as Record<string, unknown>;
      checkResourceValue(value, schema, type.name);
      for (const key of required) {
        const { [key]: _dropped, ...missing } = value;
        void _dropped;
        assert.throws(() => checkResourceValue(missing, schema, type.name), new RegExp(key));
      }
      // `$var:` references stand in for secrets.
      const withRef = { ...value, [required[0] as string]: "$var:f/ops/secret" };
      checkResourceValue(withRef, schema, type.name);
    });
  }

  it("service types accept fields a newer Windmill version of the type may carry", () => {
    for (const type of SERVICE_RESOURCE_TYPES) {
      const schema = type.schema as Schema;
      assert.notEqual(schema.additionalProperties, false, type.name);
      checkResourceValue({ ...(sampleValue(schema) as object), extra_field: 1 }, schema, type.name);
    }
  });

  it("uses Windmill's documented field names", () => {
    const fields = (name: string) =>
      Object.keys((builtinResourceType(name)?.schema as Schema).properties ?? {});
    assert.deepEqual(fields("snowflake").slice(0, 3), ["account_identifier", "username", "private_key"]);
    assert.ok(fields("azure_blob").includes("containerName"));
    assert.ok(fields("s3").includes("endPoint") && fields("s3").includes("pathStyle"));
    assert.deepEqual(fields("discord_webhook"), ["webhook_url"]);
    assert.deepEqual(fields("openai"), ["api_key", "organization_id"]);
    assert.deepEqual(fields("supabase"), ["url", "key"]);
    assert.ok(fields("gcp_service_account").includes("client_email"));
    assert.deepEqual(fields("mssql"), fields("ms_sql_server"));
  });

  it("docs/resource-types.md lists every type with its required fields in bold", () => {
    const doc = readFileSync(new URL("../../../../docs/resource-types.md", import.meta.url), "utf8");
    for (const type of BUILTIN_RESOURCE_TYPES) {
      const row = doc.split("\n").find((line) => line.startsWith(`| \`${type.name}\` `));
      assert.ok(row, `no row for ${type.name}`);
      for (const key of (type.schema as Schema | null)?.required ?? []) {
        assert.ok(row.includes(`**${key}**`), `${type.name}: ${key} is not marked required`);
      }
    }
  });
});
