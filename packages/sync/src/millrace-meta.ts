// What Millrace commits beside wmill's layout so that a repository alone rebuilds a workspace:
// `.millrace/workspace.yaml` (the workspace, its wrapped data key, members, webhook tokens) and,
// when a superadmin opted in, `.millrace/instance.yaml` (worker group configs, custom tags).
// wmill ignores dot folders, so these files never disturb `wmill sync pull/push`.
import { z } from "zod";
import { fromYaml, toYaml } from "./layout.ts";
import type { JsonObject, SyncError } from "./model.ts";

export const WORKSPACE_META_FILE = ".millrace/workspace.yaml";
export const INSTANCE_META_FILE = ".millrace/instance.yaml";

const username = z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, "must be a username (letters, digits, _ . -)");

const memberSchema = z.strictObject({
  username,
  email: z.email(),
  name: z.string().nullable().default(null),
  role: z.enum(["admin", "developer", "operator"]),
  disabled: z.boolean().default(false),
  is_superadmin: z.boolean().default(false),
  /** Only when the workspace's git sync opted in to password hashes. */
  password_hash: z.string().optional(),
});

const webhookTokenSchema = z.strictObject({
  /** sha256 of the token: the token itself is never stored anywhere. */
  token_hash: z.string().regex(/^[0-9a-f]{64}$/, "must be a sha256 hex digest"),
  token_prefix: z.string(),
  label: z.string().nullable().default(null),
  username,
  scope_path: z.string().nullable().default(null),
  expires_at: z.iso.datetime().nullable().default(null),
});

const workspaceMetaSchema = z.strictObject({
  format: z.literal(1),
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,49}$/, "must be a workspace id (a-z, 0-9, _ and -)"),
  name: z.string().min(1),
  /** The workspace's data key, wrapped by MILLRACE_SECRET_KEY (`wk:v1:…`); secrets need it. */
  wrapped_key: z.string().startsWith("wk:v1:").nullable().default(null),
  members: z.array(memberSchema).default([]),
  webhook_tokens: z.array(webhookTokenSchema).default([]),
  /**
   * Who deployed each script's latest version and who each schedule runs as: a restored job keeps
   * the rights it had (a job is bounded by its code's deployer), not the restorer's.
   */
  owners: z
    .strictObject({
      scripts: z.record(z.string(), username).default({}),
      schedules: z.record(z.string(), username).default({}),
      /** Who deployed each flow's latest version. */
      flows: z.record(z.string(), username).default({}),
    })
    .default({ scripts: {}, schedules: {}, flows: {} }),
});

const instanceMetaSchema = z.strictObject({
  format: z.literal(1),
  custom_tags: z.array(z.string()).default([]),
  worker_groups: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
});

export type SyncMember = z.infer<typeof memberSchema>;
export type SyncWebhookToken = z.infer<typeof webhookTokenSchema>;
export type WorkspaceMeta = z.infer<typeof workspaceMetaSchema>;
export type InstanceMeta = Omit<z.infer<typeof instanceMetaSchema>, "worker_groups"> & {
  worker_groups: Record<string, JsonObject>;
};

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Deterministic: members and tokens sorted, keys in a fixed order. */
export function workspaceMetaToYaml(meta: WorkspaceMeta): string {
  return toYaml({
    format: 1,
    id: meta.id,
    name: meta.name,
    wrapped_key: meta.wrapped_key,
    members: [...meta.members]
      .sort((a, b) => byText(a.username, b.username))
      .map((m) => ({
        username: m.username,
        email: m.email,
        name: m.name,
        role: m.role,
        disabled: m.disabled,
        is_superadmin: m.is_superadmin,
        ...(m.password_hash ? { password_hash: m.password_hash } : {}),
      })),
    webhook_tokens: [...meta.webhook_tokens]
      .sort((a, b) => byText(a.token_hash, b.token_hash))
      .map((t) => ({
        token_hash: t.token_hash,
        token_prefix: t.token_prefix,
        label: t.label,
        username: t.username,
        scope_path: t.scope_path,
        expires_at: t.expires_at,
      })),
    owners: {
      scripts: sortKeys(meta.owners.scripts),
      schedules: sortKeys(meta.owners.schedules),
      ...(Object.keys(meta.owners.flows).length > 0 ? { flows: sortKeys(meta.owners.flows) } : {}),
    },
  });
}

export function instanceMetaToYaml(meta: InstanceMeta): string {
  const groups = Object.keys(meta.worker_groups).sort(byText);
  return toYaml({
    format: 1,
    custom_tags: [...meta.custom_tags].sort(byText),
    worker_groups: Object.fromEntries(groups.map((name) => [name, sortKeys(meta.worker_groups[name])])),
  });
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => byText(a, b))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  return value;
}

function parseMeta<T>(file: string, text: string, schema: z.ZodType<T>, errors: SyncError[]): T | null {
  let doc: unknown;
  try {
    doc = fromYaml(text);
  } catch (error) {
    errors.push({ file, message: `malformed YAML: ${(error as Error).message.split("\n")[0]}` });
    return null;
  }
  const parsed = schema.safeParse(doc);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    errors.push({ file, field: issue.path.join(".") || undefined, message: issue.message });
  }
  return null;
}

export function parseWorkspaceMeta(text: string, errors: SyncError[]): WorkspaceMeta | null {
  return parseMeta(WORKSPACE_META_FILE, text, workspaceMetaSchema, errors);
}

export function parseInstanceMeta(text: string, errors: SyncError[]): InstanceMeta | null {
  return parseMeta(INSTANCE_META_FILE, text, instanceMetaSchema, errors) as InstanceMeta | null;
}

/**
 * Files Millrace writes into a repository, so the ones a sync may delete or overwrite: anything
 * else there (a README, CI files, apps) is left alone.
 */
export function isSyncManagedFile(file: string): boolean {
  return (
    file === "wmill.yaml" ||
    file === "settings.yaml" ||
    file.startsWith(".millrace/") ||
    ((file.startsWith("f/") || file.startsWith("u/") || file.startsWith("groups/")) &&
      /\.(yaml|lock|sh|py|ts|sql)$/.test(file) &&
      !/(__app|\.app|__raw_app|\.raw_app)\//.test(file)) ||
    (!file.includes("/") && file.endsWith(".resource-type.yaml"))
  );
}
