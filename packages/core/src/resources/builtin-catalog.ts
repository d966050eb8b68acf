/**
 * The service resource types a Windmill workspace starts with (Windmill Hub's common types), so a
 * repository whose resources name them (`resource_type: mssql`, `slack`, `snowflake`…) pushes to
 * Millrace unchanged. Each schema is written here from the service's own documentation and, where
 * Windmill documents its field names (windmill.dev/docs/integrations), with those names.
 *
 * The field lists are deliberately open (no `additionalProperties: false`): a resource exported
 * from Windmill may carry fields a later version of its type added, and must still push. `required`
 * names only what the service cannot be reached without.
 */
export interface BuiltinResourceType {
  name: string;
  description: string;
  /** JSON Schema of the value; null accepts any JSON value. */
  schema: Record<string, unknown> | null;
}

type Schema = Record<string, unknown>;

const str = (description: string, extra: Schema = {}): Schema => ({ type: "string", description, ...extra });
const secret = (description: string): Schema => str(description, { password: true });
const bool = (description: string, fallback: boolean): Schema => ({
  type: "boolean",
  description,
  default: fallback,
});
const port = (fallback: number): Schema => ({
  type: "integer",
  description: "Port",
  minimum: 1,
  maximum: 65535,
  default: fallback,
});

function object(properties: Record<string, Schema>, required: string[]): Schema {
  return { type: "object", properties, required };
}

/** An API reached with one token (OAuth access token, bot token, API key named `token`). */
function tokenType(name: string, description: string, tokenDescription: string): BuiltinResourceType {
  return { name, description, schema: object({ token: secret(tokenDescription) }, ["token"]) };
}

/** A Google service account key file, as Google Cloud downloads it (JSON key). */
const GCP_SERVICE_ACCOUNT = object(
  {
    type: str("Key type", { default: "service_account" }),
    project_id: str("Project ID"),
    private_key_id: str("Private key ID"),
    private_key: secret("Private key (PEM)"),
    client_email: str("Service account email"),
    client_id: str("Client ID"),
    auth_uri: str("Auth URI", { default: "https://accounts.google.com/o/oauth2/auth" }),
    token_uri: str("Token URI", { default: "https://oauth2.googleapis.com/token" }),
    auth_provider_x509_cert_url: str("Auth provider X.509 certificate URL"),
    client_x509_cert_url: str("Client X.509 certificate URL"),
  },
  ["client_email", "private_key"],
);

const MS_SQL_SERVER = object(
  {
    host: str("Host name or address"),
    port: port(1433),
    user: str("User name"),
    password: secret("Password"),
    dbname: str("Database name"),
    instance_name: str("Named instance (instead of a port)"),
    trust_cert: bool("Trust the server certificate without checking it", false),
    ca_cert: str("CA certificate (PEM) to check the server certificate with"),
    encrypt: bool("Encrypt the connection (TLS)", true),
  },
  ["host", "dbname"],
);

export const SERVICE_RESOURCE_TYPES: readonly BuiltinResourceType[] = [
  // Databases and warehouses
  { name: "ms_sql_server", description: "A Microsoft SQL Server database", schema: MS_SQL_SERVER },
  {
    name: "mssql",
    description: "A Microsoft SQL Server database (same fields as ms_sql_server)",
    schema: MS_SQL_SERVER,
  },
  {
    name: "oracledb",
    description: "An Oracle database",
    schema: object(
      {
        user: str("User name"),
        password: secret("Password"),
        database: str("Connect string: host:port/service_name, or a TNS alias"),
      },
      ["user", "database"],
    ),
  },
  {
    name: "clickhouse",
    description: "A ClickHouse server (HTTP interface)",
    schema: object(
      {
        host: str("Server URL, e.g. https://host:8443"),
        username: str("User name", { default: "default" }),
        password: secret("Password"),
        database: str("Default database"),
      },
      ["host"],
    ),
  },
  {
    name: "bigquery",
    description: "Google BigQuery, reached with a service account key",
    schema: GCP_SERVICE_ACCOUNT,
  },
  {
    name: "snowflake",
    description: "A Snowflake account (key-pair authentication)",
    schema: object(
      {
        account_identifier: str("Account identifier (orgname-accountname)"),
        username: str("User name"),
        private_key: secret("Private key (PEM) of the user's RSA key pair"),
        public_key: str("Public key of the user's RSA key pair"),
        password: secret("Password (instead of a key pair)"),
        warehouse: str("Warehouse"),
        database: str("Database"),
        schema: str("Schema"),
        role: str("Role"),
      },
      ["account_identifier", "username"],
    ),
  },
  {
    name: "mongodb",
    description: "A MongoDB deployment",
    schema: object(
      {
        db: str("Database name"),
        servers: {
          type: "array",
          description: "Servers of the deployment",
          items: object({ host: str("Host name"), port: port(27017) }, ["host"]),
        },
        credential: object(
          {
            username: str("User name"),
            password: secret("Password"),
            db: str("Authentication database", { default: "admin" }),
            mechanism: str("Authentication mechanism", { default: "SCRAM-SHA-256" }),
          },
          [],
        ),
        tls: bool("Use TLS", true),
      },
      ["db", "servers"],
    ),
  },
  {
    name: "mongodb_rest",
    description: "MongoDB Atlas Data API",
    schema: object({ endpoint: str("Data API endpoint URL"), api_key: secret("API key") }, [
      "endpoint",
      "api_key",
    ]),
  },
  {
    name: "redis",
    description: "A Redis server",
    schema: object(
      {
        host: str("Host name or address"),
        port: port(6379),
        username: str("User name (Redis 6 ACL)"),
        password: secret("Password"),
        db: { type: "integer", description: "Database index", minimum: 0, default: 0 },
        tls: bool("Use TLS", false),
      },
      ["host"],
    ),
  },
  {
    name: "supabase",
    description: "A Supabase project's API",
    schema: object({ url: str("Project URL"), key: secret("API key (anon or service_role)") }, [
      "url",
      "key",
    ]),
  },
  // Object storage and clouds
  {
    name: "azure_blob",
    description: "An Azure Blob Storage container",
    schema: object(
      {
        accountName: str("Storage account name"),
        containerName: str("Container name"),
        accessKey: secret("Storage account access key"),
        useSSL: bool("Use HTTPS", true),
        endPoint: str("Endpoint (empty for Azure)"),
      },
      ["accountName", "containerName"],
    ),
  },
  {
    name: "gcp_service_account",
    description: "A Google Cloud service account key",
    schema: GCP_SERVICE_ACCOUNT,
  },
  {
    name: "gcs",
    description: "A Google Cloud Storage bucket",
    schema: object(
      {
        bucket: str("Bucket name"),
        serviceAccountKey: { ...GCP_SERVICE_ACCOUNT, description: "Service account key (JSON)" },
      },
      ["bucket"],
    ),
  },
  {
    name: "aws",
    description: "AWS credentials (an IAM access key)",
    schema: object(
      {
        awsAccessKeyId: str("Access key ID"),
        awsSecretAccessKey: secret("Secret access key"),
        region: str("Region", { default: "us-east-1" }),
      },
      ["awsAccessKeyId", "awsSecretAccessKey"],
    ),
  },
  // Messaging and file transfer
  {
    name: "kafka",
    description: "A Kafka cluster",
    schema: object(
      {
        brokers: {
          description: "Bootstrap brokers: host:port, as a list or comma-separated",
          anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
        },
        security_protocol: {
          type: "string",
          enum: ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"],
          default: "PLAINTEXT",
        },
        sasl_mechanism: { type: "string", enum: ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] },
        username: str("SASL user name"),
        password: secret("SASL password"),
      },
      ["brokers"],
    ),
  },
  {
    name: "nats",
    description: "A NATS server or cluster",
    schema: object(
      {
        servers: { type: "array", description: "Server URLs (nats://host:4222)", items: { type: "string" } },
        user: str("User name"),
        password: secret("Password"),
        token: secret("Token (instead of user and password)"),
        require_tls: bool("Require TLS", false),
      },
      ["servers"],
    ),
  },
  {
    name: "mqtt",
    description: "An MQTT broker",
    schema: object(
      {
        host: str("Broker host"),
        port: port(1883),
        username: str("User name"),
        password: secret("Password"),
        tls: bool("Use TLS", false),
      },
      ["host"],
    ),
  },
  {
    // What Windmill's git sync settings name (git_repo_resource_path); Millrace's git sync reads
    // its url (a token in it is stored apart, encrypted) and branch.
    name: "git_repository",
    description: "A git repository over HTTPS (git sync)",
    schema: object(
      {
        url: secret("Repository URL, https://<user>:<token>@host/org/repo.git"),
        branch: str("Branch", { default: "main" }),
        folder: str("Folder of the repository to sync into"),
      },
      ["url"],
    ),
  },
  {
    name: "sftp",
    description: "An SFTP server (SSH file transfer)",
    schema: object(
      {
        host: str("Host name or address"),
        port: port(22),
        username: str("User name"),
        password: secret("Password"),
        private_key: secret("Private key (PEM/OpenSSH), instead of a password"),
        passphrase: secret("Passphrase of the private key"),
      },
      ["host", "username"],
    ),
  },
  {
    name: "ftp",
    description: "An FTP or FTPS server",
    schema: object(
      {
        host: str("Host name or address"),
        port: port(21),
        user: str("User name", { default: "anonymous" }),
        password: secret("Password"),
        secure: bool("Use explicit FTPS (AUTH TLS)", false),
      },
      ["host"],
    ),
  },
  {
    name: "ldap",
    description: "An LDAP directory",
    schema: object(
      {
        url: str("Server URL (ldap:// or ldaps://)", { pattern: "^ldaps?://" }),
        bind_dn: str("Bind DN"),
        password: secret("Bind password"),
        base_dn: str("Base DN for searches"),
      },
      ["url"],
    ),
  },
  // Chat and notifications
  tokenType("slack", "A Slack workspace (bot or user OAuth token)", "OAuth token (xoxb-… or xoxp-…)"),
  {
    name: "discord_webhook",
    description: "A Discord channel webhook",
    schema: object({ webhook_url: secret("Webhook URL") }, ["webhook_url"]),
  },
  {
    name: "discord_bot_configuration",
    description: "A Discord bot",
    schema: object({ public_key: str("Application public key"), application_id: str("Application ID") }, [
      "public_key",
    ]),
  },
  {
    name: "teams",
    description: "A Microsoft Teams channel (incoming webhook or workflow URL)",
    schema: object({ webhook_url: secret("Webhook URL") }, ["webhook_url"]),
  },
  tokenType("telegram", "A Telegram bot", "Bot token from @BotFather"),
  {
    name: "twilio",
    description: "A Twilio account",
    schema: object({ accountSid: str("Account SID"), token: secret("Auth token") }, ["accountSid", "token"]),
  },
  tokenType("sendgrid", "SendGrid email API", "API key"),
  {
    name: "matrix",
    description: "A Matrix homeserver account",
    schema: object({ baseUrl: str("Homeserver URL"), token: secret("Access token") }, ["baseUrl", "token"]),
  },
  // Developer tools and SaaS APIs
  tokenType("github", "GitHub (OAuth or personal access token)", "Access token"),
  {
    name: "gitlab",
    description: "GitLab (OAuth or personal access token)",
    schema: object(
      { token: secret("Access token"), baseUrl: str("Instance URL", { default: "https://gitlab.com" }) },
      ["token"],
    ),
  },
  tokenType("stripe", "Stripe API", "Secret API key (sk_…)"),
  {
    name: "openai",
    description: "OpenAI API",
    schema: object({ api_key: secret("API key"), organization_id: str("Organization ID") }, ["api_key"]),
  },
  {
    name: "anthropic",
    description: "Anthropic API",
    schema: object({ api_key: secret("API key") }, ["api_key"]),
  },
  tokenType("notion", "Notion (integration or OAuth token)", "Integration token"),
  {
    name: "airtable",
    description: "Airtable API",
    schema: object({ apiKey: secret("Personal access token") }, ["apiKey"]),
  },
  {
    name: "airtable_table",
    description: "An Airtable table",
    schema: object({ baseId: str("Base ID (app…)"), tableName: str("Table name") }, ["baseId", "tableName"]),
  },
  tokenType("hubspot", "HubSpot (private app access token)", "Private app access token"),
  {
    name: "salesforce",
    description: "Salesforce (OAuth)",
    schema: object(
      { token: secret("Access token"), instance_url: str("Instance URL (https://…my.salesforce.com)") },
      ["token"],
    ),
  },
  {
    name: "jira",
    description: "Jira Cloud (account email and API token)",
    schema: object(
      {
        domain: str("Site, e.g. yourteam.atlassian.net"),
        username: str("Account email"),
        password: secret("API token"),
      },
      ["domain", "username", "password"],
    ),
  },
  {
    name: "linear",
    description: "Linear API",
    schema: object({ apiKey: secret("API key") }, ["apiKey"]),
  },
  {
    name: "datadog",
    description: "Datadog API",
    schema: object(
      {
        apiKey: secret("API key"),
        appKey: secret("Application key"),
        apiBase: str("API base URL", { default: "https://api.datadoghq.com" }),
      },
      ["apiKey"],
    ),
  },
  {
    name: "graphql",
    description: "A GraphQL API",
    schema: object(
      {
        base_url: str("Endpoint URL", { pattern: "^https?://" }),
        bearer_token: secret("Bearer token"),
        custom_headers: { type: "object", additionalProperties: { type: "string" } },
      },
      ["base_url"],
    ),
  },
  tokenType("gsheets", "Google Sheets (OAuth)", "OAuth access token"),
  tokenType("gdrive", "Google Drive (OAuth)", "OAuth access token"),
  tokenType("gmail", "Gmail (OAuth)", "OAuth access token"),
  tokenType("gcal", "Google Calendar (OAuth)", "OAuth access token"),
];
