import { isUniqueViolation, withTransaction, type PoolClient } from "@millrace/db";
import { recordAudit } from "../audit/index.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import type { CallMeta } from "../variables/variables.ts";
import type { Membership } from "../membership.ts";
import { BUILTIN_RESOURCE_TYPES, builtinResourceType } from "./builtin-types.ts";
import { checkTypeSchema } from "./value-schema.ts";

export const RESOURCE_TYPE_NAME = /^[a-z][a-z0-9_]{0,49}$/;

export interface ResourceTypeView {
  workspaceId: string;
  name: string;
  schema: Record<string, unknown> | null;
  description: string;
  builtin: boolean;
  createdAt: Date | null;
}

interface ResourceTypeRow {
  workspace_id: string;
  name: string;
  schema: Record<string, unknown>;
  description: string;
  created_at: Date;
}

function rowView(row: ResourceTypeRow): ResourceTypeView {
  return {
    workspaceId: row.workspace_id,
    name: row.name,
    schema: row.schema,
    description: row.description,
    builtin: false,
    createdAt: row.created_at,
  };
}

function checkName(name: unknown): string {
  if (typeof name !== "string" || !RESOURCE_TYPE_NAME.test(name))
    throw invalidInput("name", "use 1-50 lowercase letters, digits and _, starting with a letter");
  return name;
}

/**
 * Built-in types first, then the workspace's own. A workspace type named like a built-in one
 * replaces it in that workspace (as a Windmill workspace's own type shadows the hub's): a
 * repository made on Windmill may carry its own `github.resource-type.yaml`, and a workspace may
 * have defined a type before Millrace shipped one of that name.
 */
export async function listResourceTypes(
  ctx: CoreContext,
  membership: Membership,
): Promise<ResourceTypeView[]> {
  requirePermission(membership, "resource.read");
  const { rows } = await ctx.pool.query<ResourceTypeRow>(
    "SELECT * FROM resource_type WHERE workspace_id = $1 ORDER BY name",
    [membership.workspace.id],
  );
  const own = new Set(rows.map((row) => row.name));
  const builtins = BUILTIN_RESOURCE_TYPES.filter((type) => !own.has(type.name)).map((type) => ({
    workspaceId: membership.workspace.id,
    name: type.name,
    schema: type.schema,
    description: type.description,
    builtin: true,
    createdAt: null,
  }));
  return [...builtins, ...rows.map(rowView)];
}

/** The type a resource names; null when the workspace has no such type. */
export async function findResourceType(
  client: Pick<PoolClient, "query">,
  workspaceId: string,
  name: string,
  /** Inside a transaction that stores a resource of this type: keeps the type from being deleted. */
  forShare = false,
): Promise<ResourceTypeView | null> {
  // The workspace's own type first: it shadows a built-in of the same name (see listResourceTypes).
  const { rows } = await client.query<ResourceTypeRow>(
    `SELECT * FROM resource_type WHERE workspace_id = $1 AND name = $2${forShare ? " FOR SHARE" : ""}`,
    [workspaceId, name],
  );
  if (rows[0]) return rowView(rows[0]);
  const builtin = builtinResourceType(name);
  return builtin ? { workspaceId, ...builtin, builtin: true, createdAt: null } : null;
}

export async function getResourceType(
  ctx: CoreContext,
  membership: Membership,
  name: string,
): Promise<ResourceTypeView> {
  requirePermission(membership, "resource.read");
  const type = await findResourceType(ctx.pool, membership.workspace.id, name);
  if (!type) throw notFound(`resource type ${name}`);
  return type;
}

export async function resourceTypeExists(ctx: CoreContext, membership: Membership, name: string) {
  requirePermission(membership, "resource.read");
  return (await findResourceType(ctx.pool, membership.workspace.id, name)) !== null;
}

export interface ResourceTypeInput {
  name: string;
  schema: unknown;
  description?: string | null;
}

export async function createResourceType(
  ctx: CoreContext,
  membership: Membership,
  input: ResourceTypeInput,
  meta: CallMeta = {},
): Promise<ResourceTypeView> {
  requirePermission(membership, "resource.write");
  const name = checkName(input.name);
  const schema = checkTypeSchema(input.schema);
  const description = input.description ?? "";
  if (typeof description !== "string" || description.length > 10_000)
    throw invalidInput("description", "must be a string of at most 10000 characters");
  const workspaceId = membership.workspace.id;
  try {
    const row = await withTransaction(ctx.pool, async (client) => {
      const { rows } = await client.query<ResourceTypeRow>(
        `INSERT INTO resource_type (workspace_id, name, schema, description, created_at)
         VALUES ($1, $2, $3::jsonb, $4, now()) RETURNING *`,
        [workspaceId, name, JSON.stringify(schema), description],
      );
      await recordAudit(client, membership.principal, {
        workspaceId,
        operation: "resource_types.create",
        resource: name,
        ip: meta.ip ?? null,
      });
      return rows[0]!;
    });
    return rowView(row);
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("CONFLICT", `name: resource type ${name} already exists`, "name");
    throw error;
  }
}

/** A name the workspace has no type of: a built-in one may not be deleted, others do not exist. */
function builtinOrNotFound(name: string): AppError {
  return builtinResourceType(name)
    ? new AppError("FORBIDDEN", `${name} is a built-in resource type and cannot be deleted`)
    : notFound(`resource type ${name}`);
}

export async function updateResourceType(
  ctx: CoreContext,
  membership: Membership,
  name: string,
  input: { schema?: unknown; description?: string | null },
  meta: CallMeta = {},
): Promise<ResourceTypeView> {
  requirePermission(membership, "resource.write");
  const schema = input.schema === undefined ? undefined : checkTypeSchema(input.schema);
  if (input.description !== undefined && input.description !== null && typeof input.description !== "string")
    throw invalidInput("description", "must be a string");
  const workspaceId = membership.workspace.id;
  const builtin = builtinResourceType(name);
  return withTransaction(ctx.pool, async (client) => {
    const { rows } = await client.query<ResourceTypeRow>(
      `UPDATE resource_type SET schema = COALESCE($3::jsonb, schema), description = COALESCE($4, description)
        WHERE workspace_id = $1 AND name = $2 RETURNING *`,
      [workspaceId, name, schema === undefined ? null : JSON.stringify(schema), input.description ?? null],
    );
    // A built-in type edited in a workspace (wmill pushes a type file it finds existing as an
    // update) becomes the workspace's own, which shadows the built-in there.
    if (!rows[0] && builtin) {
      const made = await client.query<ResourceTypeRow>(
        `INSERT INTO resource_type (workspace_id, name, schema, description, created_at)
         VALUES ($1, $2, $3::jsonb, $4, now()) ON CONFLICT DO NOTHING RETURNING *`,
        [
          workspaceId,
          name,
          JSON.stringify(schema ?? builtin.schema),
          input.description ?? builtin.description,
        ],
      );
      rows.push(...made.rows);
    }
    if (!rows[0]) throw notFound(`resource type ${name}`);
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: "resource_types.update",
      resource: name,
      ip: meta.ip ?? null,
    });
    return rowView(rows[0]);
  });
}

export async function deleteResourceType(
  ctx: CoreContext,
  membership: Membership,
  name: string,
  meta: CallMeta = {},
): Promise<void> {
  requirePermission(membership, "resource.write");
  const workspaceId = membership.workspace.id;
  await withTransaction(ctx.pool, async (client) => {
    // Locks the type against resources created meanwhile (they read it FOR SHARE).
    const locked = await client.query(
      "SELECT 1 FROM resource_type WHERE workspace_id = $1 AND name = $2 FOR UPDATE",
      [workspaceId, name],
    );
    if (!locked.rowCount) throw builtinOrNotFound(name);
    // A type shadowing a built-in one leaves its resources typed: the built-in takes over.
    const used = builtinResourceType(name)
      ? { rows: [] }
      : await client.query<{ path: string }>(
          "SELECT path FROM resource WHERE workspace_id = $1 AND resource_type = $2 LIMIT 1",
          [workspaceId, name],
        );
    if (used.rows[0])
      throw new AppError(
        "CONFLICT",
        `resource type ${name} is used by ${used.rows[0].path}; delete it first`,
      );
    await client.query("DELETE FROM resource_type WHERE workspace_id = $1 AND name = $2", [
      workspaceId,
      name,
    ]);
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: "resource_types.delete",
      resource: name,
      ip: meta.ip ?? null,
    });
  });
}
