import { withTransaction, type Pool } from "@millrace/db";
import { DEFAULT_TAGS } from "@millrace/runtime";
import { z } from "zod";
import type { Principal } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { workerSizeSchema, runtimeDirsSchema } from "./runtime-config.ts";
import { auditInstanceChange, requireSuperadmin } from "../instance-admin.ts";
import { parsePath } from "../paths.ts";
import { WORKSPACE_ID } from "../workspaces.ts";
import { autoscalingConfigSchema } from "../autoscaling/config.ts";

/** Workers LISTEN here; the payload is the name of the group whose config changed or went away. */
export const WORKER_CONFIG_CHANNEL = "millrace_worker_config";

export const WORKER_GROUP_NAME = /^[A-Za-z0-9_-]{1,50}$/;
// Workers serve concrete queues: no `$workspace` or `$args[…]` here.
const WORKER_TAG = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_SCRIPT_CHARS = 64 * 1024;

const script = (what: string) =>
  z.string({ error: "must be a string" }).max(MAX_SCRIPT_CHARS, `${what} is limited to 64 KiB`);

const SUPPORTED = [
  "worker_tags",
  "init_bash",
  "periodic_script_bash",
  "periodic_script_interval_seconds",
  "dedicated_worker",
  "network",
  "worker_size",
  "runtime_dirs",
  "autoscaling",
];

const configSchema = z
  .strictObject(
    {
      worker_tags: z
        .array(
          z.string({ error: "must be a string" }).regex(WORKER_TAG, {
            error: (issue) => `${JSON.stringify(issue.input)} is not a tag (1-64 letters, digits, _ . or -)`,
          }),
          { error: "must be a list of tags" },
        )
        .min(1, "list at least one tag, or leave worker_tags out to serve the default tags")
        .max(200, "at most 200 tags")
        .superRefine((tags, ctx) => {
          tags.forEach((tag, i) => {
            if (tags.indexOf(tag) !== i)
              ctx.addIssue({ code: "custom", path: [i], message: `"${tag}" is listed twice` });
          });
        })
        .optional(),
      init_bash: script("the init script").optional(),
      periodic_script_bash: script("the periodic script").optional(),
      periodic_script_interval_seconds: z
        .number({ error: "must be a number of seconds" })
        .int("must be a whole number of seconds")
        .min(10, "must be at least 10 seconds")
        .max(7 * 24 * 3600, "must be at most a week")
        .optional(),
      dedicated_worker: z
        .string({ error: "must be a string" })
        .superRefine((value, ctx) => {
          const problem = dedicatedWorkerProblem(value);
          if (problem) ctx.addIssue({ code: "custom", message: problem });
        })
        .optional(),
      network: z.boolean({ error: "must be true or false" }).optional(),
      worker_size: workerSizeSchema.optional(),
      runtime_dirs: runtimeDirsSchema.optional(),
      autoscaling: autoscalingConfigSchema.optional(),
    },
    {
      error: (issue) =>
        issue.code === "unrecognized_keys"
          ? `not a worker group setting Millrace supports (supported: ${SUPPORTED.join(", ")})`
          : "must be a JSON object",
    },
  )
  .superRefine((config, ctx) => {
    if (config.periodic_script_bash && config.periodic_script_interval_seconds === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["periodic_script_interval_seconds"],
        message: "is required when periodic_script_bash is set",
      });
    }
  });

/** Windmill's WorkerConfig fields Millrace implements, plus `network` (default true). */
export type WorkerGroupConfig = z.infer<typeof configSchema>;

function dedicatedWorkerProblem(value: string): string | null {
  const colon = value.indexOf(":");
  if (colon === -1) return `must be "<workspace>:<script path>", got "${value}"`;
  const workspace = value.slice(0, colon);
  if (!WORKSPACE_ID.test(workspace)) return `"${workspace}" is not a workspace id`;
  try {
    parsePath(value.slice(colon + 1), "dedicated_worker");
  } catch (error) {
    return error instanceof AppError
      ? error.message.replace(/^dedicated_worker: /, "script path ")
      : String(error);
  }
  return null;
}

function fieldOf(path: readonly PropertyKey[]): string {
  let field = "";
  for (const part of path)
    field += typeof part === "number" ? `[${part}]` : `${field ? "." : ""}${String(part)}`;
  return field || "config";
}

/** Validates a config as the API receives it; the error names the field (`worker_tags[2]: …`). */
export function parseWorkerGroupConfig(value: unknown): WorkerGroupConfig {
  const result = configSchema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw invalidInput("config", "is not a valid worker group config");
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0] ?? ""] : issue.path;
  throw invalidInput(fieldOf(path), issue.message);
}

export function validateWorkerGroupName(name: string, field = "name"): void {
  if (!WORKER_GROUP_NAME.test(name))
    throw invalidInput(field, `"${name}" is not a worker group name (1-50 letters, digits, _ or -)`);
}

/**
 * The tags a worker serves: `WORKER_TAGS` when set (non-empty), else its group's `worker_tags`,
 * else every default tag.
 */
export function effectiveWorkerTags(
  envTags: string[] | undefined,
  config: WorkerGroupConfig | null,
): string[] {
  if (envTags && envTags.length > 0) return [...envTags];
  if (config?.worker_tags && config.worker_tags.length > 0) return [...config.worker_tags];
  return [...DEFAULT_TAGS];
}

/** For the worker process: one cheap query, no Prisma. A hand-broken config fails loudly. */
export async function loadWorkerGroupConfig(pool: Pool, group: string): Promise<WorkerGroupConfig | null> {
  const { rows } = await pool.query<{ config: unknown }>(
    "SELECT config FROM worker_group_config WHERE name = $1",
    [group],
  );
  if (!rows[0]) return null;
  try {
    return parseWorkerGroupConfig(rows[0].config);
  } catch (error) {
    throw new Error(`worker group "${group}" has an invalid config: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

export interface WorkerGroupConfigRow {
  name: string;
  config: WorkerGroupConfig;
  updatedAt: Date;
}

export async function listWorkerGroupConfigs(
  ctx: CoreContext,
  principal: Principal,
): Promise<WorkerGroupConfigRow[]> {
  requireSuperadmin(principal, "read worker group configs");
  const { rows } = await ctx.pool.query<{ name: string; config: unknown; updated_at: Date }>(
    `SELECT name, config, updated_at AT TIME ZONE 'UTC' AS updated_at FROM worker_group_config ORDER BY name`,
  );
  // Listing shows what is stored even when it no longer validates, so that it can be fixed.
  return rows.map((row) => ({
    name: row.name,
    config: row.config as WorkerGroupConfig,
    updatedAt: row.updated_at,
  }));
}

export async function getWorkerGroupConfig(
  ctx: CoreContext,
  principal: Principal,
  name: string,
): Promise<WorkerGroupConfig | null> {
  requireSuperadmin(principal, "read worker group configs");
  validateWorkerGroupName(name);
  const { rows } = await ctx.pool.query<{ config: unknown }>(
    "SELECT config FROM worker_group_config WHERE name = $1",
    [name],
  );
  return rows[0] ? (rows[0].config as WorkerGroupConfig) : null;
}

/** Creates or replaces a group's config; running workers of the group reload it on the NOTIFY. */
export async function updateWorkerGroupConfig(
  ctx: CoreContext,
  principal: Principal,
  name: string,
  value: unknown,
): Promise<WorkerGroupConfig> {
  requireSuperadmin(principal, "configure worker groups");
  validateWorkerGroupName(name);
  const config = parseWorkerGroupConfig(value);
  await withTransaction(ctx.pool, async (client) => {
    await client.query(
      `INSERT INTO worker_group_config (name, config, updated_at) VALUES ($1, $2, now() AT TIME ZONE 'UTC')
       ON CONFLICT (name) DO UPDATE SET config = EXCLUDED.config, updated_at = EXCLUDED.updated_at`,
      [name, JSON.stringify(config)],
    );
    await auditInstanceChange(client, principal, "worker_config.update", `worker__${name}`, config);
    await client.query("SELECT pg_notify($1, $2)", [WORKER_CONFIG_CHANNEL, name]);
  });
  return config;
}

export async function deleteWorkerGroupConfig(
  ctx: CoreContext,
  principal: Principal,
  name: string,
): Promise<void> {
  requireSuperadmin(principal, "configure worker groups");
  validateWorkerGroupName(name);
  await withTransaction(ctx.pool, async (client) => {
    const { rowCount } = await client.query("DELETE FROM worker_group_config WHERE name = $1", [name]);
    if (!rowCount) throw notFound(`worker group config ${name}`);
    await auditInstanceChange(client, principal, "worker_config.delete", `worker__${name}`, null);
    await client.query("SELECT pg_notify($1, $2)", [WORKER_CONFIG_CHANNEL, name]);
  });
}
