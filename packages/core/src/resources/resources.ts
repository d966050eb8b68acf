import { isUniqueViolation, withTransaction, type PoolClient } from "@millrace/db";
import { recordAudit } from "../audit/index.ts";
import { authorizePath, readablePrefixes } from "../access.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { parsePath } from "../paths.ts";
import { requirePermission } from "../permissions.ts";
import type { SecretsContext } from "../secrets/context.ts";
import { getVariableValue, type CallMeta } from "../variables/variables.ts";
import { pageWindow, readableCondition } from "../variables/readable.ts";
import type { Membership } from "../membership.ts";
import { findResourceType } from "./resource-types.ts";
import { checkResourceValue, parseReference } from "./value-schema.ts";

export interface ResourceView {
  workspaceId: string;
  path: string;
  resourceType: string;
  /** As stored: `$var:` references unresolved (so never a secret's plain value). */
  value: unknown;
  /** null when none was given (Windmill's resources keep that apart from ""). */
  description: string | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

interface ResourceRow {
  workspace_id: string;
  path: string;
  resource_type: string;
  value: unknown;
  description: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

const MAX_REFERENCE_DEPTH = 5;

function view(row: ResourceRow): ResourceView {
  return {
    workspaceId: row.workspace_id,
    path: row.path,
    resourceType: row.resource_type,
    value: row.value,
    description: row.description,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function checkDescription(description: unknown): string | undefined {
  if (description === undefined || description === null) return undefined;
  if (typeof description !== "string" || description.length > 10_000)
    throw invalidInput("description", "must be a string of at most 10000 characters");
  return description;
}

/**
 * Writing a resource is for developers and admins, with one exception: a `state` resource under
 * the caller's own `u/<name>/` (windmill-client's setState from a job run by an operator).
 */
function requireResourceWrite(membership: Membership, path: string, resourceType: string): void {
  const parsed = parsePath(path);
  // Bounded callers (a job's token): each of them must be the state's owner (or may write).
  const own = (each: Membership) =>
    resourceType === "state" && parsed.kind === "u" && parsed.owner === each.principal.username;
  for (const each of membership.bounds ?? [membership]) {
    if (!own(each)) requirePermission(each, "resource.write");
  }
}

async function loadRow(
  client: Pick<PoolClient, "query">,
  workspaceId: string,
  path: string,
  forUpdate = false,
): Promise<ResourceRow> {
  const { rows } = await client.query<ResourceRow>(
    `SELECT * FROM resource WHERE workspace_id = $1 AND path = $2${forUpdate ? " FOR UPDATE" : ""}`,
    [workspaceId, path],
  );
  if (!rows[0]) throw notFound(`resource ${path}`);
  return rows[0];
}

/** Validates a value against its type (read FOR SHARE in the writing transaction). */
async function checkTyped(
  client: Pick<PoolClient, "query">,
  workspaceId: string,
  resourceType: string,
  value: unknown,
): Promise<void> {
  const type = await findResourceType(client, workspaceId, resourceType, true);
  if (!type) throw invalidInput("resource_type", `no resource type named ${resourceType} in this workspace`);
  checkResourceValue(value, type.schema, resourceType);
}

export interface ListResourcesInput {
  /** Comma-separated type names, as Windmill takes them. */
  resourceType?: string;
  resourceTypeExclude?: string;
  pathStart?: string;
  page?: number;
  perPage?: number;
}

/** Resources the caller may read, without their values (read one to get its value). */
export async function listResources(
  ctx: SecretsContext,
  membership: Membership,
  input: ListResourcesInput = {},
): Promise<Omit<ResourceView, "value">[]> {
  requirePermission(membership, "resource.read");
  const { limit, offset } = pageWindow(input.page, input.perPage);
  const types = input.resourceType?.split(",").filter(Boolean) ?? null;
  const excluded = input.resourceTypeExclude?.split(",").filter(Boolean) ?? null;
  const { rows } = await ctx.pool.query<ResourceRow>(
    `SELECT workspace_id, path, resource_type, description, created_by, created_at, updated_at FROM resource
      WHERE workspace_id = $1 AND ($2::text IS NULL OR starts_with(path, $2))
        AND ($3::text[] IS NULL OR resource_type = ANY($3)) AND ($4::text[] IS NULL OR resource_type <> ALL($4))
        AND ${readableCondition(7)}
      ORDER BY path LIMIT $5 OFFSET $6`,
    [
      membership.workspace.id,
      input.pathStart || null,
      types,
      excluded,
      limit,
      offset,
      await readablePrefixes(ctx, membership),
    ],
  );
  return rows.map((row) => {
    const { value: _unselected, ...summary } = view(row);
    return summary;
  });
}

export async function getResource(
  ctx: SecretsContext,
  membership: Membership,
  path: string,
): Promise<ResourceView> {
  requirePermission(membership, "resource.read");
  parsePath(path);
  await authorizePath(ctx, membership, path, "read");
  return view(await loadRow(ctx.pool, membership.workspace.id, path));
}

export async function resourceExists(ctx: SecretsContext, membership: Membership, path: string) {
  requirePermission(membership, "resource.read");
  parsePath(path);
  const { rowCount } = await ctx.pool.query("SELECT 1 FROM resource WHERE workspace_id = $1 AND path = $2", [
    membership.workspace.id,
    path,
  ]);
  return (rowCount ?? 0) > 0;
}

async function interpolate(
  ctx: SecretsContext,
  membership: Membership,
  node: unknown,
  meta: CallMeta,
  chain: string[],
): Promise<unknown> {
  const reference = parseReference(node);
  if (reference?.kind === "var") return getVariableValue(ctx, membership, reference.path, meta);
  if (reference?.kind === "res") return interpolatedValue(ctx, membership, reference.path, meta, chain);
  if (Array.isArray(node))
    return Promise.all(node.map((item) => interpolate(ctx, membership, item, meta, chain)));
  if (typeof node === "object" && node !== null) {
    const entries = await Promise.all(
      Object.entries(node).map(
        async ([key, item]) => [key, await interpolate(ctx, membership, item, meta, chain)] as const,
      ),
    );
    return Object.fromEntries(entries);
  }
  return node;
}

async function interpolatedValue(
  ctx: SecretsContext,
  membership: Membership,
  path: string,
  meta: CallMeta,
  chain: string[],
): Promise<unknown> {
  if (chain.includes(path) || chain.length >= MAX_REFERENCE_DEPTH) {
    throw new AppError("INVALID_INPUT", `resource ${chain[0]}: $res: references loop or nest too deep`);
  }
  const resource = await getResource(ctx, membership, path);
  return interpolate(ctx, membership, resource.value, meta, [...chain, path]);
}

/**
 * The value with `$var:` and `$res:` references resolved as the caller: what a job gets. Each
 * secret read on the way is authorized and audited like a direct read.
 */
export async function getResourceValueInterpolated(
  ctx: SecretsContext,
  membership: Membership,
  path: string,
  meta: CallMeta = {},
): Promise<unknown> {
  return interpolatedValue(ctx, membership, path, meta, []);
}

/** Resolves one `$var:`/`$res:` string (job arguments); other values come back unchanged. */
export async function resolveReference(
  ctx: SecretsContext,
  membership: Membership,
  value: unknown,
  meta: CallMeta = {},
): Promise<unknown> {
  const reference = parseReference(value);
  if (!reference) return value;
  if (reference.kind === "var") return getVariableValue(ctx, membership, reference.path, meta);
  return getResourceValueInterpolated(ctx, membership, reference.path, meta);
}

export interface CreateResourceInput {
  path: string;
  value: unknown;
  resourceType: string;
  description?: string | null;
}

export async function createResource(
  ctx: SecretsContext,
  membership: Membership,
  input: CreateResourceInput,
  options: CallMeta & { updateIfExists?: boolean } = {},
): Promise<ResourceView> {
  if (typeof input.resourceType !== "string" || !input.resourceType)
    throw invalidInput("resource_type", "is required");
  requireResourceWrite(membership, input.path, input.resourceType);
  const description = checkDescription(input.description) ?? null;
  await authorizePath(ctx, membership, input.path, "write");
  const workspaceId = membership.workspace.id;
  try {
    const row = await withTransaction(ctx.pool, async (client) => {
      await checkTyped(client, workspaceId, input.resourceType, input.value);
      const { rows } = await client.query<ResourceRow>(
        `INSERT INTO resource (workspace_id, path, resource_type, value, description, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6, now(), now())
         ${
           options.updateIfExists
             ? `ON CONFLICT (workspace_id, path) DO UPDATE SET resource_type = EXCLUDED.resource_type,
                  value = EXCLUDED.value, description = EXCLUDED.description, updated_at = now()`
             : ""
         }
         RETURNING *`,
        [
          workspaceId,
          input.path,
          input.resourceType,
          JSON.stringify(input.value),
          description,
          membership.principal.username,
        ],
      );
      await recordAudit(client, membership.principal, {
        workspaceId,
        operation: "resources.create",
        resource: input.path,
        parameters: { resource_type: input.resourceType },
        ip: options.ip ?? null,
      });
      return rows[0]!;
    });
    return view(row);
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("CONFLICT", `path: resource ${input.path} already exists`, "path");
    throw error;
  }
}

export interface UpdateResourceInput {
  path?: string;
  value?: unknown;
  resourceType?: string;
  description?: string | null;
}

export async function updateResource(
  ctx: SecretsContext,
  membership: Membership,
  path: string,
  input: UpdateResourceInput,
  meta: CallMeta = {},
): Promise<ResourceView> {
  parsePath(path);
  const newPath = input.path ?? path;
  if (newPath !== path) parsePath(newPath);
  const description = checkDescription(input.description);
  if (input.resourceType !== undefined && (typeof input.resourceType !== "string" || !input.resourceType))
    throw invalidInput("resource_type", "must be a type name");
  requirePermission(membership, "resource.read");
  await authorizePath(ctx, membership, path, "write");
  if (newPath !== path) await authorizePath(ctx, membership, newPath, "write");
  const workspaceId = membership.workspace.id;
  try {
    const row = await withTransaction(ctx.pool, async (client) => {
      const existing = await loadRow(client, workspaceId, path, true);
      requireResourceWrite(membership, path, existing.resource_type);
      const resourceType = input.resourceType ?? existing.resource_type;
      if (newPath !== path || resourceType !== existing.resource_type)
        requireResourceWrite(membership, newPath, resourceType);
      const value = input.value === undefined ? existing.value : input.value;
      await checkTyped(client, workspaceId, resourceType, value);
      const { rows } = await client.query<ResourceRow>(
        `UPDATE resource SET path = $3, resource_type = $4, value = $5::jsonb, description = $6, updated_at = now()
          WHERE workspace_id = $1 AND path = $2 RETURNING *`,
        [
          workspaceId,
          path,
          newPath,
          resourceType,
          JSON.stringify(value),
          description ?? existing.description,
        ],
      );
      await recordAudit(client, membership.principal, {
        workspaceId,
        operation: "resources.update",
        resource: path,
        parameters: {
          ...(newPath !== path ? { path: newPath } : {}),
          ...(input.value !== undefined ? { value_changed: true } : {}),
          resource_type: resourceType,
        },
        ip: meta.ip ?? null,
      });
      return rows[0]!;
    });
    return view(row);
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("CONFLICT", `path: resource ${newPath} already exists`, "path");
    throw error;
  }
}

export async function deleteResource(
  ctx: SecretsContext,
  membership: Membership,
  path: string,
  meta: CallMeta = {},
): Promise<void> {
  parsePath(path);
  requirePermission(membership, "resource.read");
  await authorizePath(ctx, membership, path, "write");
  const workspaceId = membership.workspace.id;
  await withTransaction(ctx.pool, async (client) => {
    const existing = await loadRow(client, workspaceId, path, true);
    requireResourceWrite(membership, path, existing.resource_type);
    await client.query("DELETE FROM resource WHERE workspace_id = $1 AND path = $2", [workspaceId, path]);
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: "resources.delete",
      resource: path,
      ip: meta.ip ?? null,
    });
  });
}
