import { isUniqueViolation, withTransaction, type PoolClient } from "@millrace/db";
import { recordAudit } from "../audit/index.ts";
import { authorizePath, readablePrefixes } from "../access.ts";
import { AppError, invalidInput, notFound } from "../errors.ts";
import { parsePath } from "../paths.ts";
import { requirePermission } from "../permissions.ts";
import type { SecretsContext } from "../secrets/context.ts";
import { isEncrypted } from "../secrets/keyring.ts";
import type { Membership } from "../workspaces.ts";
import { VARIABLE_FILE_FIELDS } from "@millrace/sync";
import { pageWindow, readableCondition } from "./readable.ts";
import { notifyJobSecretRead, recordAgentJobSecretRead } from "./secret-reads.ts";

export const MAX_VARIABLE_VALUE_CHARS = 1024 * 1024;
export const MAX_DESCRIPTION_CHARS = 10_000;

export interface VariableView {
  workspaceId: string;
  path: string;
  /** Null for a secret unless it was explicitly decrypted (never in lists). */
  value: string | null;
  isSecret: boolean;
  description: string;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

interface VariableRow {
  workspace_id: string;
  path: string;
  value: string;
  is_secret: boolean;
  description: string;
  file_fields: Record<string, unknown> | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** Audit context of a call that came over HTTP. */
export interface CallMeta {
  ip?: string | null;
}

function view(row: VariableRow, value: string | null): VariableView {
  return {
    workspaceId: row.workspace_id,
    path: row.path,
    value,
    isSecret: row.is_secret,
    description: row.description,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Windmill's variable keys Millrace has no use for (account, is_oauth, is_expired: there are no
 * OAuth accounts here), as a client sent them: kept only to be written back in the repository
 * form, so that a Windmill repository pushed with wmill reads back unchanged. Null: none sent.
 */
export function checkVariableFileFields(body: Record<string, unknown>): Record<string, unknown> | null {
  const kept: Record<string, unknown> = {};
  for (const key of VARIABLE_FILE_FIELDS) {
    if (!(key in body) || body[key] === undefined) continue;
    const value = body[key];
    if (value !== null && !["string", "number", "boolean"].includes(typeof value))
      throw invalidInput(key, "must be null, a string, a number or true/false");
    kept[key] = value;
  }
  return Object.keys(kept).length > 0 ? kept : null;
}

/** A variable's value, the same limit whichever way it comes (create, push, restore, wmill). */
export function checkVariableValue(value: unknown): string {
  if (typeof value !== "string") throw invalidInput("value", "must be a string");
  if (value.length > MAX_VARIABLE_VALUE_CHARS)
    throw invalidInput("value", `at most ${MAX_VARIABLE_VALUE_CHARS} characters`);
  return value;
}

function checkDescription(description: unknown): string {
  if (description === undefined || description === null) return "";
  if (typeof description !== "string") throw invalidInput("description", "must be a string");
  if (description.length > MAX_DESCRIPTION_CHARS)
    throw invalidInput("description", `at most ${MAX_DESCRIPTION_CHARS} characters`);
  return description;
}

async function loadRow(
  client: Pick<PoolClient, "query">,
  workspaceId: string,
  path: string,
  forUpdate = false,
): Promise<VariableRow> {
  const { rows } = await client.query<VariableRow>(
    `SELECT * FROM variable WHERE workspace_id = $1 AND path = $2${forUpdate ? " FOR UPDATE" : ""}`,
    [workspaceId, path],
  );
  if (!rows[0]) throw notFound(`variable ${path}`);
  return rows[0];
}

async function readableRow(ctx: SecretsContext, membership: Membership, path: string): Promise<VariableRow> {
  requirePermission(membership, "variable.read");
  parsePath(path);
  await authorizePath(ctx, membership, path, "read");
  return loadRow(ctx.pool, membership.workspace.id, path);
}

/** Decrypts a secret for a caller who may read it, leaving an audit row (without the value). */
async function revealSecret(
  ctx: SecretsContext,
  membership: Membership,
  row: VariableRow,
  meta: CallMeta,
): Promise<string> {
  const plain = await ctx.secrets.decrypt(ctx.pool, row.workspace_id, row.value);
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: row.workspace_id,
    operation: "variables.decrypt_secret",
    resource: row.path,
    ip: meta.ip ?? null,
  });
  // The workers mask what a job got in its logs and result.
  if (ctx.onSecretRevealed) ctx.onSecretRevealed(plain);
  else if (membership.principal.tokenKind === "job") {
    await notifyJobSecretRead(ctx.pool, {
      workspaceId: row.workspace_id,
      username: membership.principal.username,
      path: row.path,
      stored: row.value,
    });
    // On an agent worker, the server answering the agent masks it (no NOTIFY reaches an agent).
    if (membership.principal.jobId)
      await recordAgentJobSecretRead(ctx.pool, membership.principal.jobId, {
        path: row.path,
        stored: row.value,
      });
  }
  return plain;
}

/** Refusal of a secret sent as already encrypted that this workspace cannot decrypt (the value is never quoted). */
export const FOREIGN_SECRET_MESSAGE =
  "is not a secret encrypted by this Millrace workspace (already_encrypted was set): a secret exported " +
  "from Windmill is encrypted with that instance's key, which Millrace does not have. Re-export it with " +
  "`wmill sync pull --plain-secrets` from the Windmill instance and push it with `wmill sync push --plain-secrets`: " +
  "Millrace encrypts it with its own key";

/** This workspace's own ciphertext (`enc:v2:…` or `enc:v1:…` that it decrypts), or null. */
async function ownCiphertext(
  ctx: SecretsContext,
  workspaceId: string,
  value: string,
): Promise<string | null> {
  if (!isEncrypted(value)) return null;
  return ctx.secrets.tryDecrypt(ctx.pool, workspaceId, value);
}

/**
 * Encrypts a secret value, or checks that an already-encrypted one (an import) is this
 * workspace's. A value that is already this workspace's own ciphertext is stored as is even when
 * sent as plain text (`wmill sync push --plain-secrets` of a repository Millrace exported), never
 * encrypted twice.
 */
async function storedValue(
  ctx: SecretsContext,
  workspaceId: string,
  value: string,
  isSecret: boolean,
  alreadyEncrypted: boolean,
  tx: PoolClient,
): Promise<string> {
  if (!isSecret) return value;
  // Stored as is only under the workspace's current key, held until `tx` ends (a key change
  // waits for it, then re-encrypts what it stored).
  if (isEncrypted(value) && (await ctx.secrets.openCurrent(ctx.pool, workspaceId, value, tx)) !== null)
    return value;
  if (alreadyEncrypted) throw invalidInput("value", FOREIGN_SECRET_MESSAGE);
  return ctx.secrets.encrypt(ctx.pool, workspaceId, value, tx);
}

/** Whether a stored secret already holds `value` (plain, or this workspace's ciphertext of it). */
async function sameSecret(ctx: SecretsContext, row: VariableRow, value: string): Promise<boolean> {
  if (value === row.value) return true;
  const stored = await ctx.secrets.tryDecrypt(ctx.pool, row.workspace_id, row.value);
  if (stored === null) return false;
  const sent = (await ownCiphertext(ctx, row.workspace_id, value)) ?? value;
  return sent === stored;
}

export interface ListVariablesInput {
  pathStart?: string;
  page?: number;
  perPage?: number;
}

/** Variables the caller may read. Secret values are never part of a list. */
export async function listVariables(
  ctx: SecretsContext,
  membership: Membership,
  input: ListVariablesInput = {},
): Promise<VariableView[]> {
  requirePermission(membership, "variable.read");
  const { limit, offset } = pageWindow(input.page, input.perPage);
  const { rows } = await ctx.pool.query<VariableRow>(
    `SELECT * FROM variable
      WHERE workspace_id = $1 AND ($2::text IS NULL OR starts_with(path, $2)) AND ${readableCondition(5)}
      ORDER BY path LIMIT $3 OFFSET $4`,
    [
      membership.workspace.id,
      input.pathStart || null,
      limit,
      offset,
      await readablePrefixes(ctx, membership),
    ],
  );
  return rows.map((row) => view(row, row.is_secret ? null : row.value));
}

export interface GetVariableOptions extends CallMeta {
  /** Windmill's `decrypt_secret` (default true): decrypt a secret value, audited. */
  decryptSecret?: boolean;
  /** Windmill's `include_encrypted`: the stored ciphertext when not decrypting (exports). */
  includeEncrypted?: boolean;
}

export async function getVariable(
  ctx: SecretsContext,
  membership: Membership,
  path: string,
  options: GetVariableOptions = {},
): Promise<VariableView> {
  const row = await readableRow(ctx, membership, path);
  if (!row.is_secret) return view(row, row.value);
  if (options.decryptSecret ?? true) return view(row, await revealSecret(ctx, membership, row, options));
  return view(row, options.includeEncrypted ? row.value : null);
}

/** The plain value, as a job reads it (`getVariable` in the clients); secret reads are audited. */
export async function getVariableValue(
  ctx: SecretsContext,
  membership: Membership,
  path: string,
  meta: CallMeta = {},
): Promise<string> {
  const row = await readableRow(ctx, membership, path);
  return row.is_secret ? revealSecret(ctx, membership, row, meta) : row.value;
}

export async function variableExists(
  ctx: SecretsContext,
  membership: Membership,
  path: string,
): Promise<boolean> {
  requirePermission(membership, "variable.read");
  parsePath(path);
  const { rowCount } = await ctx.pool.query("SELECT 1 FROM variable WHERE workspace_id = $1 AND path = $2", [
    membership.workspace.id,
    path,
  ]);
  return (rowCount ?? 0) > 0;
}

export interface CreateVariableInput {
  path: string;
  value: string;
  isSecret?: boolean;
  description?: string | null;
  /** See checkVariableFileFields. */
  fileFields?: Record<string, unknown> | null;
}

export interface WriteOptions extends CallMeta {
  /** Windmill's `already_encrypted`: a secret value exported from this workspace, stored as is. */
  alreadyEncrypted?: boolean;
}

export async function createVariable(
  ctx: SecretsContext,
  membership: Membership,
  input: CreateVariableInput,
  options: WriteOptions = {},
): Promise<VariableView> {
  requirePermission(membership, "variable.write");
  parsePath(input.path);
  const value = checkVariableValue(input.value);
  const description = checkDescription(input.description);
  const isSecret = input.isSecret ?? false;
  if (typeof isSecret !== "boolean") throw invalidInput("is_secret", "must be true or false");
  await authorizePath(ctx, membership, input.path, "write");
  const workspaceId = membership.workspace.id;
  try {
    const row = await withTransaction(ctx.pool, async (client) => {
      const stored = await storedValue(
        ctx,
        workspaceId,
        value,
        isSecret,
        options.alreadyEncrypted ?? false,
        client,
      );
      const { rows } = await client.query<VariableRow>(
        `INSERT INTO variable (workspace_id, path, value, is_secret, description, file_fields, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, now(), now()) RETURNING *`,
        [
          workspaceId,
          input.path,
          stored,
          isSecret,
          description,
          input.fileFields ? JSON.stringify(input.fileFields) : null,
          membership.principal.username,
        ],
      );
      await recordAudit(client, membership.principal, {
        workspaceId,
        operation: "variables.create",
        resource: input.path,
        parameters: { is_secret: isSecret },
        ip: options.ip ?? null,
      });
      return rows[0]!;
    });
    return view(row, isSecret ? null : row.value);
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("CONFLICT", `path: variable ${input.path} already exists`, "path");
    throw error;
  }
}

export interface UpdateVariableInput {
  /** A new path renames the variable. */
  path?: string;
  value?: string;
  isSecret?: boolean;
  description?: string | null;
  /** See checkVariableFileFields; undefined: kept. */
  fileFields?: Record<string, unknown> | null;
}

export async function updateVariable(
  ctx: SecretsContext,
  membership: Membership,
  path: string,
  input: UpdateVariableInput,
  options: WriteOptions = {},
): Promise<VariableView> {
  requirePermission(membership, "variable.write");
  parsePath(path);
  const newPath = input.path ?? path;
  if (newPath !== path) parsePath(newPath);
  const value = input.value === undefined ? undefined : checkVariableValue(input.value);
  const description = input.description === undefined ? undefined : checkDescription(input.description);
  if (input.isSecret !== undefined && typeof input.isSecret !== "boolean")
    throw invalidInput("is_secret", "must be true or false");
  await authorizePath(ctx, membership, path, "write");
  if (newPath !== path) await authorizePath(ctx, membership, newPath, "write");
  const workspaceId = membership.workspace.id;

  try {
    const row = await withTransaction(ctx.pool, async (client) => {
      // The workspace key's row before the variable's (the order a key change locks them in).
      await ctx.secrets.lockKey(client, workspaceId);
      const existing = await loadRow(client, workspaceId, path, true);
      const isSecret = input.isSecret ?? existing.is_secret;
      const fileFields = input.fileFields === undefined ? existing.file_fields : input.fileFields;
      // Nothing to change (a push of what is stored): no write, no updated_at bump, no audit row.
      if (
        newPath === path &&
        isSecret === existing.is_secret &&
        (description === undefined || description === existing.description) &&
        JSON.stringify(fileFields) === JSON.stringify(existing.file_fields) &&
        (value === undefined ||
          (isSecret ? await sameSecret(ctx, existing, value) : value === existing.value))
      ) {
        return existing;
      }
      let stored = existing.value;
      if (value !== undefined) {
        stored = await storedValue(
          ctx,
          workspaceId,
          value,
          isSecret,
          options.alreadyEncrypted ?? false,
          client,
        );
      } else if (isSecret && !existing.is_secret) {
        stored = await ctx.secrets.encrypt(ctx.pool, workspaceId, existing.value, client);
      } else if (!isSecret && existing.is_secret) {
        // Turning a secret into a plain variable exposes it: only with write access (checked
        // above) and audited as a decryption.
        stored = await revealSecret(ctx, membership, existing, options);
      }
      const { rows } = await client.query<VariableRow>(
        `UPDATE variable SET path = $3, value = $4, is_secret = $5, description = $6, file_fields = $7::jsonb,
                updated_at = now()
          WHERE workspace_id = $1 AND path = $2 RETURNING *`,
        [
          workspaceId,
          path,
          newPath,
          stored,
          isSecret,
          description ?? existing.description,
          fileFields ? JSON.stringify(fileFields) : null,
        ],
      );
      await recordAudit(client, membership.principal, {
        workspaceId,
        operation: "variables.update",
        resource: path,
        parameters: {
          ...(newPath !== path ? { path: newPath } : {}),
          ...(value !== undefined ? { value_changed: true } : {}),
          is_secret: isSecret,
        },
        ip: options.ip ?? null,
      });
      return rows[0]!;
    });
    return view(row, row.is_secret ? null : row.value);
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("CONFLICT", `path: variable ${newPath} already exists`, "path");
    throw error;
  }
}

export async function deleteVariable(
  ctx: SecretsContext,
  membership: Membership,
  path: string,
  meta: CallMeta = {},
): Promise<void> {
  requirePermission(membership, "variable.write");
  parsePath(path);
  await authorizePath(ctx, membership, path, "write");
  const workspaceId = membership.workspace.id;
  await withTransaction(ctx.pool, async (client) => {
    const { rowCount } = await client.query("DELETE FROM variable WHERE workspace_id = $1 AND path = $2", [
      workspaceId,
      path,
    ]);
    if (!rowCount) throw notFound(`variable ${path}`);
    await recordAudit(client, membership.principal, {
      workspaceId,
      operation: "variables.delete",
      resource: path,
      ip: meta.ip ?? null,
    });
  });
}
