import { SERVICE_RESOURCE_TYPES, type BuiltinResourceType } from "./builtin-catalog.ts";

export type { BuiltinResourceType } from "./builtin-catalog.ts";

// Resource types every workspace has, with the field names of Windmill's hub types so that
// scripts written for Windmill read the same keys. Workspace-defined types live in the
// `resource_type` table and may not reuse these names. The services' types (mssql, snowflake,
// slack, …) are in builtin-catalog.ts.

const str = (description: string, extra: Record<string, unknown> = {}) => ({
  type: "string",
  description,
  ...extra,
});
const port = (fallback: number) => ({ type: "integer", minimum: 1, maximum: 65535, default: fallback });

export const BUILTIN_RESOURCE_TYPES: readonly BuiltinResourceType[] = [
  {
    name: "postgresql",
    description: "A PostgreSQL database",
    schema: {
      type: "object",
      properties: {
        host: str("Host name or address"),
        port: port(5432),
        user: str("User name"),
        password: str("Password (use $var:<path> to a secret variable)"),
        dbname: str("Database name"),
        sslmode: {
          type: "string",
          enum: ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"],
          default: "prefer",
        },
        root_certificate_pem: str("CA certificate (PEM) for verify-ca / verify-full"),
      },
      required: ["host", "user", "dbname"],
      additionalProperties: false,
    },
  },
  {
    name: "mysql",
    description: "A MySQL or MariaDB database",
    schema: {
      type: "object",
      properties: {
        host: str("Host name or address"),
        port: port(3306),
        user: str("User name"),
        password: str("Password"),
        database: str("Database name"),
        ssl: { type: "boolean", default: false },
      },
      required: ["host", "user", "database"],
      additionalProperties: false,
    },
  },
  {
    name: "smtp",
    description: "An SMTP server to send mail through",
    schema: {
      type: "object",
      properties: {
        host: str("SMTP host"),
        port: port(587),
        user: str("User name"),
        password: str("Password"),
        from: str("Default sender address"),
        tls_implicit: { type: "boolean", default: false },
      },
      required: ["host", "port"],
      additionalProperties: false,
    },
  },
  {
    name: "s3",
    description: "An S3-compatible bucket",
    schema: {
      type: "object",
      properties: {
        bucket: str("Bucket name"),
        region: str("Region"),
        endPoint: str("Endpoint host (empty for AWS)"),
        port: port(443),
        useSSL: { type: "boolean", default: true },
        pathStyle: { type: "boolean", default: false },
        accessKey: str("Access key id"),
        secretKey: str("Secret access key"),
      },
      required: ["bucket"],
      additionalProperties: false,
    },
  },
  {
    name: "http",
    description: "An HTTP API: base URL and the headers to send",
    schema: {
      type: "object",
      properties: {
        base_url: str("Base URL", { pattern: "^https?://" }),
        token: str("Bearer token"),
        headers: { type: "object", additionalProperties: { type: "string" } },
      },
      required: ["base_url"],
      additionalProperties: false,
    },
  },
  {
    name: "api_key",
    description: "A single API key",
    schema: {
      type: "object",
      properties: { api_key: str("The key") },
      required: ["api_key"],
      additionalProperties: false,
    },
  },
  ...SERVICE_RESOURCE_TYPES,
  {
    // The type Windmill's Python client gives set_resource by default.
    name: "any",
    description: "Any JSON value",
    schema: null,
  },
  {
    // What windmill-client's setState/getState store between runs of a script.
    name: "state",
    description: "A script's state kept between runs (setState / getState)",
    schema: null,
  },
  // The types of Windmill's app builder, which every Windmill workspace has: a repository pulled
  // from Windmill holds resources of them (custom components, themes, component groups). Millrace
  // has no apps, but it keeps these resources as they are, so that importing such a repository
  // neither stops nor loses them.
  { name: "app_custom", description: "A custom app component (Windmill apps)", schema: null },
  { name: "app_theme", description: "An app theme (Windmill apps)", schema: null },
  { name: "app_group", description: "A group of app components (Windmill apps)", schema: null },
];

export function builtinResourceType(name: string): BuiltinResourceType | undefined {
  return BUILTIN_RESOURCE_TYPES.find((type) => type.name === name);
}
