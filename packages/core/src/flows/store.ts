// Deployed flows: one row per workspace and path (the latest version, what runs by path) and an
// immutable flow_version row per deploy. Scoped and permissioned exactly as scripts are (the
// script.read / script.write actions, the path's owner or folder rights), audited as `flows.*` in
// the same transaction as the change. The flow is validated (validate.ts) before anything is
// written: a refused deploy changes nothing.
import { withTransaction, type PoolClient } from "@millrace/db";
import { authorizePath, likePrefix, readablePrefixes } from "../access.ts";
import { recordAudit } from "../audit/index.ts";
import { refuseWhenBounded } from "../auth/principal.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { parsePath } from "../paths.ts";
import { requirePermission } from "../permissions.ts";
import type { Membership } from "../membership.ts";
import type { FlowValue, OpenFlow } from "./format.ts";
import { checkOpenFlow, type FlowWarning } from "./validate.ts";

export const MAX_FLOW_BYTES = 2 * 1024 * 1024;

/** A deployed flow, in Windmill's shape (Flow = OpenFlow & FlowMetadata). */
export interface StoredFlow {
  workspace_id: string;
  path: string;
  summary: string;
  description: string;
  value: FlowValue;
  schema: Record<string, unknown> | null;
  archived: boolean;
  edited_by: string;
  edited_at: string;
  version_id: number;
  extra_perms: Record<string, boolean>;
  /** Windmill's field, answered only when the flow was deployed with it (see mutedOf). */
  ws_error_handler_muted?: boolean;
}

/** What a deploy answers: the flow as stored, and what will fail when it runs (validate.ts). */
export type DeployedFlowAnswer = StoredFlow & { warnings: FlowWarning[] };

export interface FlowVersionInfo {
  id: number;
  created_at: string;
  created_by: string;
  deployment_msg?: string;
}

export interface FlowInput {
  path?: string;
  summary?: unknown;
  description?: unknown;
  value?: unknown;
  schema?: unknown;
  deployment_message?: string | null;
  /** The version this update replaces (flows/get's `version_id`): refused when it is not the latest. */
  parent_version?: number | null;
  ws_error_handler_muted?: unknown;
}

/**
 * Windmill's flow-level `ws_error_handler_muted`: kept as sent (null when absent) so that a
 * repository written by Windmill reads back as it was; Millrace has no error handler to mute.
 */
function mutedOf(input: FlowInput): boolean | null {
  const value = input.ws_error_handler_muted;
  if (value === undefined || value === null) return null;
  if (typeof value !== "boolean") throw invalidInput("ws_error_handler_muted", "must be true or false");
  return value;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function flowFromRow(row: any): StoredFlow {
  return {
    workspace_id: row.workspace_id,
    path: row.path,
    summary: row.summary,
    description: row.description,
    value: row.value,
    schema: row.schema ?? null,
    archived: row.archived,
    edited_by: row.edited_by,
    edited_at: new Date(row.edited_at).toISOString(),
    version_id: Number(row.version_id),
    extra_perms: {},
    ...(typeof row.ws_error_handler_muted === "boolean"
      ? { ws_error_handler_muted: row.ws_error_handler_muted }
      : {}),
  };
}

const FLOW_COLUMNS =
  "workspace_id, path, summary, description, value, schema, archived, edited_by, edited_at, version_id, ws_error_handler_muted";

function authorizeFlowPath(ctx: CoreContext, membership: Membership, path: string, access: "read" | "write") {
  return authorizePath(ctx, membership, path, access).catch((error: unknown) => {
    throw error instanceof AppError && error.code === "NOT_FOUND" ? notFound(`flow ${path}`) : error;
  });
}

/** The flow at `path` in `workspaceId`, archived or not, without any permission check. */
export async function readFlow(
  client: Pick<PoolClient, "query">,
  workspaceId: string,
  path: string,
  lock = false,
): Promise<StoredFlow | null> {
  const { rows } = await client.query(
    `SELECT ${FLOW_COLUMNS} FROM flow WHERE workspace_id = $1 AND path = $2${lock ? " FOR UPDATE" : ""}`,
    [workspaceId, path],
  );
  return rows[0] ? flowFromRow(rows[0]) : null;
}

/**
 * Parses and validates a flow document (its shape, step ids, expressions, `results.x` reads,
 * the scripts it names in the caller's workspace), throwing INVALID_INPUT naming the field.
 */
/** A flow's size, the same limit whichever way it comes (deploy, push, restore, wmill). */
export function checkFlowSize(document: object): void {
  if (JSON.stringify(document).length > MAX_FLOW_BYTES) {
    throw invalidInput("value", `the flow is larger than ${MAX_FLOW_BYTES / 1024 / 1024} MB`);
  }
}

/**
 * A checked flow: `flow` as Millrace reads and runs it (normalized, see normalize.ts), `stored` as
 * it was sent, which is what a deploy keeps (so that what wmill wrote reads back unchanged), and
 * what the deploy should tell (steps that will fail when they run).
 */
export interface CheckedFlow {
  flow: OpenFlow;
  stored: OpenFlow;
  warnings: FlowWarning[];
}

export async function checkFlow(
  ctx: CoreContext,
  workspaceId: string,
  input: FlowInput,
): Promise<CheckedFlow> {
  const document = {
    summary: input.summary === undefined || input.summary === null ? "" : input.summary,
    ...(input.description === undefined || input.description === null
      ? {}
      : { description: input.description }),
    value: input.value,
    ...(input.schema === undefined || input.schema === null ? {} : { schema: input.schema }),
  };
  checkFlowSize(document);
  const { flow, warnings } = await checkOpenFlow(document, {
    scriptExists: async (path, hash) => {
      const { rows } = await ctx.pool.query(
        hash
          ? "SELECT 1 FROM script WHERE workspace_id = $1 AND path = $2 AND hash = $3"
          : "SELECT 1 FROM script WHERE workspace_id = $1 AND path = $2 AND NOT archived LIMIT 1",
        hash ? [workspaceId, path, hash] : [workspaceId, path],
      );
      return rows.length > 0;
    },
    flowExists: async (path) => {
      const { rows } = await ctx.pool.query(
        "SELECT 1 FROM flow WHERE workspace_id = $1 AND path = $2 AND NOT archived",
        [workspaceId, path],
      );
      return rows.length > 0;
    },
  });
  return { flow, stored: { ...flow, value: document.value as FlowValue }, warnings };
}

/** A flow's summary, description, value and schema, as the flow and flow_version rows hold them. */
function documentColumns(flow: { summary?: string; description?: string; value: unknown; schema?: unknown }) {
  return [
    flow.summary ?? "",
    flow.description ?? "",
    JSON.stringify(flow.value),
    flow.schema === undefined ? null : JSON.stringify(flow.schema),
  ];
}

async function writeVersion(
  client: PoolClient,
  workspaceId: string,
  path: string,
  flow: OpenFlow,
  createdBy: string,
  message: string | null,
): Promise<number> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO flow_version (workspace_id, path, summary, description, value, schema, deployment_msg, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [workspaceId, path, ...documentColumns(flow), message, createdBy],
  );
  return Number(rows[0]!.id);
}

async function checkWrite(ctx: CoreContext, membership: Membership, path: string, field = "path") {
  requirePermission(membership, "script.write");
  parsePath(path, field);
  await authorizePath(ctx, membership, path, "write");
  refuseWhenBounded(membership.principal, "deploy flows");
}

/** Deploys a new flow at `input.path` (Windmill's flows/create); a path already taken is a conflict. */
export async function createFlow(
  ctx: CoreContext,
  membership: Membership,
  input: FlowInput,
): Promise<DeployedFlowAnswer> {
  const path = input.path ?? "";
  await checkWrite(ctx, membership, path);
  const workspaceId = membership.workspace.id;
  const { stored: flow, warnings } = await checkFlow(ctx, workspaceId, input);
  const muted = mutedOf(input);
  const username = membership.principal.username;
  return withTransaction(ctx.pool, async (client) => {
    const existing = await readFlow(client, workspaceId, path, true);
    if (existing && !existing.archived) {
      throw new AppError("CONFLICT", `path conflict: a flow already exists at ${path}`, "path");
    }
    if (existing)
      await client.query("DELETE FROM flow WHERE workspace_id = $1 AND path = $2", [workspaceId, path]);
    const versionId = await writeVersion(
      client,
      workspaceId,
      path,
      flow,
      username,
      input.deployment_message ?? null,
    );
    const { rows } = await client.query(
      `INSERT INTO flow (workspace_id, path, summary, description, value, schema, version_id, edited_by, ws_error_handler_muted)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${FLOW_COLUMNS}`,
      [workspaceId, path, ...documentColumns(flow), versionId, username, muted],
    );
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: "flows.create",
      resource: path,
      parameters: { version_id: versionId },
    });
    return { ...flowFromRow(rows[0]), warnings };
  });
}

/**
 * Deploys a new version of the flow at `path` (Windmill's flows/update/{path}); `input.path`, when
 * it differs, renames it. With `parent_version`, an update of a flow whose latest version is
 * another one (someone deployed meanwhile) is refused (CONFLICT on parent_version).
 */
export async function updateFlow(
  ctx: CoreContext,
  membership: Membership,
  path: string,
  input: FlowInput,
): Promise<DeployedFlowAnswer> {
  const target = input.path || path;
  await checkWrite(ctx, membership, path);
  if (target !== path) await checkWrite(ctx, membership, target);
  const workspaceId = membership.workspace.id;
  if (
    input.parent_version !== undefined &&
    input.parent_version !== null &&
    !Number.isInteger(input.parent_version)
  ) {
    throw invalidInput("parent_version", "must be a version id (an integer)");
  }
  const { stored: flow, warnings } = await checkFlow(ctx, workspaceId, input);
  const muted = mutedOf(input);
  const username = membership.principal.username;
  return withTransaction(ctx.pool, async (client) => {
    const existing = await readFlow(client, workspaceId, path, true);
    if (!existing || existing.archived) throw notFound(`flow ${path}`);
    if (
      input.parent_version !== undefined &&
      input.parent_version !== null &&
      input.parent_version !== existing.version_id
    ) {
      throw new AppError(
        "CONFLICT",
        `parent_version ${input.parent_version} is not the latest version of ${path} (${existing.version_id}): someone deployed it meanwhile`,
        "parent_version",
      );
    }
    if (target !== path && (await readFlow(client, workspaceId, target, true))) {
      throw new AppError("CONFLICT", `path conflict: a flow already exists at ${target}`, "path");
    }
    // The same flow again (a `wmill sync push` re-applying a flow whose file differs from the
    // tarball only in fields Millrace does not keep) is no new version: nothing to deploy.
    if (target === path && !input.deployment_message) {
      const { rows: same } = await client.query(
        `SELECT 1 FROM flow WHERE workspace_id = $1 AND path = $2 AND summary = $3 AND description = $4
            AND value = $5::jsonb AND schema IS NOT DISTINCT FROM $6::jsonb
            AND ws_error_handler_muted IS NOT DISTINCT FROM $7`,
        [workspaceId, path, ...documentColumns(flow), muted],
      );
      if (same.length > 0) return { ...existing, warnings };
    }
    const versionId = await writeVersion(
      client,
      workspaceId,
      target,
      flow,
      username,
      input.deployment_message ?? null,
    );
    if (target !== path) {
      await client.query("UPDATE flow_version SET path = $3 WHERE workspace_id = $1 AND path = $2", [
        workspaceId,
        path,
        target,
      ]);
    }
    const { rows } = await client.query(
      `UPDATE flow SET path = $3, summary = $4, description = $5, value = $6, schema = $7, version_id = $8,
              edited_by = $9, edited_at = now(), ws_error_handler_muted = $10
        WHERE workspace_id = $1 AND path = $2 RETURNING ${FLOW_COLUMNS}`,
      [workspaceId, path, target, ...documentColumns(flow), versionId, username, muted],
    );
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: "flows.update",
      resource: target,
      parameters: { version_id: versionId, ...(target !== path ? { renamed_from: path } : {}) },
    });
    return { ...flowFromRow(rows[0]), warnings };
  });
}

/** The flow at `path` (archived ones too, as Windmill answers them, with `archived` set). */
export async function getFlow(ctx: CoreContext, membership: Membership, path: string): Promise<StoredFlow> {
  requirePermission(membership, "script.read");
  parsePath(path);
  await authorizeFlowPath(ctx, membership, path, "read");
  const flow = await readFlow(ctx.pool, membership.workspace.id, path);
  if (!flow) throw notFound(`flow ${path}`);
  return flow;
}

/** Whether a flow (not archived) exists at `path` that the caller may read. */
export async function flowExists(ctx: CoreContext, membership: Membership, path: string): Promise<boolean> {
  requirePermission(membership, "script.read");
  try {
    parsePath(path);
    await authorizePath(ctx, membership, path, "read");
  } catch {
    return false;
  }
  const flow = await readFlow(ctx.pool, membership.workspace.id, path);
  return !!flow && !flow.archived;
}

export interface ListFlowsInput {
  page?: number;
  perPage?: number;
  pathStart?: string;
  pathExact?: string;
  showArchived?: boolean;
  createdBy?: string;
  orderDesc?: boolean;
}

/** The flows of the workspace the caller may read, by path. */
export async function listFlows(
  ctx: CoreContext,
  membership: Membership,
  input: ListFlowsInput = {},
): Promise<StoredFlow[]> {
  requirePermission(membership, "script.read");
  const perPage = Math.min(Math.max(input.perPage ?? 100, 1), 1000);
  const page = Math.max(input.page ?? 1, 1);
  const readable = await readablePrefixes(ctx, membership);
  const where = ["workspace_id = $1"];
  const values: unknown[] = [membership.workspace.id];
  const add = (sql: (n: string) => string, value: unknown) => {
    values.push(value);
    where.push(sql(`$${values.length}`));
  };
  if (!input.showArchived) where.push("NOT archived");
  if (input.pathStart) add((n) => `path LIKE ${n} || '%'`, likePrefix(input.pathStart));
  if (input.pathExact) add((n) => `path = ${n}`, input.pathExact);
  if (input.createdBy) add((n) => `edited_by = ${n}`, input.createdBy);
  if (readable)
    add(
      (n) => `EXISTS (SELECT 1 FROM unnest(${n}::text[]) p WHERE path LIKE p || '%')`,
      readable.map(likePrefix),
    );
  values.push(perPage, (page - 1) * perPage);
  const { rows } = await ctx.pool.query(
    `SELECT ${FLOW_COLUMNS} FROM flow WHERE ${where.join(" AND ")}
      ORDER BY ${input.orderDesc === false ? "path ASC" : "edited_at DESC, path ASC"}
      LIMIT $${values.length - 1} OFFSET $${values.length}`,
    values,
  );
  return rows.map(flowFromRow);
}

/** Archives (or, with `archived` false, restores) the flow at `path`. */
export async function archiveFlow(
  ctx: CoreContext,
  membership: Membership,
  path: string,
  archived = true,
): Promise<void> {
  await checkWrite(ctx, membership, path);
  const workspaceId = membership.workspace.id;
  await withTransaction(ctx.pool, async (client) => {
    const { rowCount } = await client.query(
      "UPDATE flow SET archived = $3, edited_by = $4, edited_at = now() WHERE workspace_id = $1 AND path = $2",
      [workspaceId, path, archived, membership.principal.username],
    );
    if (!rowCount) throw notFound(`flow ${path}`);
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: archived ? "flows.archive" : "flows.unarchive",
      resource: path,
    });
  });
}

/** Deletes the flow at `path` and every version of it. Jobs that ran it keep their record. */
export async function deleteFlow(ctx: CoreContext, membership: Membership, path: string): Promise<void> {
  await checkWrite(ctx, membership, path);
  const workspaceId = membership.workspace.id;
  await withTransaction(ctx.pool, async (client) => {
    const { rowCount } = await client.query("DELETE FROM flow WHERE workspace_id = $1 AND path = $2", [
      workspaceId,
      path,
    ]);
    if (!rowCount) throw notFound(`flow ${path}`);
    const versions = await client.query("DELETE FROM flow_version WHERE workspace_id = $1 AND path = $2", [
      workspaceId,
      path,
    ]);
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: "flows.delete",
      resource: path,
      parameters: { versions: versions.rowCount },
    });
  });
}

/** Every deployed version at `path`, newest first (Windmill's flows/history/p/{path}). */
export async function flowHistory(
  ctx: CoreContext,
  membership: Membership,
  path: string,
  input: { page?: number; perPage?: number } = {},
): Promise<FlowVersionInfo[]> {
  requirePermission(membership, "script.read");
  parsePath(path);
  await authorizeFlowPath(ctx, membership, path, "read");
  const perPage = Math.min(Math.max(input.perPage ?? 100, 1), 1000);
  const page = Math.max(input.page ?? 1, 1);
  const { rows } = await ctx.pool.query(
    `SELECT id, created_at, created_by, deployment_msg FROM flow_version
      WHERE workspace_id = $1 AND path = $2 ORDER BY id DESC LIMIT $3 OFFSET $4`,
    [membership.workspace.id, path, perPage, (page - 1) * perPage],
  );
  if (rows.length === 0 && page === 1) throw notFound(`flow ${path}`);
  return rows.map((row) => ({
    id: Number(row.id),
    created_at: new Date(row.created_at).toISOString(),
    created_by: row.created_by,
    ...(row.deployment_msg ? { deployment_msg: row.deployment_msg } : {}),
  }));
}
