import { z } from "zod";
import { recordAudit } from "../audit/index.ts";
import type { CoreContext } from "../context.ts";
import { AppError, invalidInput } from "../errors.ts";
import { parsePath } from "../paths.ts";
import { requirePermission } from "../permissions.ts";
import { getResource } from "../resources/resources.ts";
import { parseReference } from "../resources/value-schema.ts";
import type { SecretsContext } from "../secrets/context.ts";
import { isUnsetSetting } from "../windmill-settings.ts";
import type { Membership } from "../membership.ts";

/**
 * Windmill's `large_file_storage` workspace setting, as far as Millrace has it: an S3 (or
 * S3-compatible) resource for the workspace's files, optionally more under names
 * (`secondary_storage`), each either public (every member may use it through the job helpers)
 * or not (only those who may read its resource).
 */
export interface StorageSetting {
  type: "S3Storage";
  /** As the admin wrote it: `$res:f/data/s3` or `f/data/s3`. */
  s3_resource_path: string;
  public_resource?: boolean;
}

export interface LargeFileStorage extends StorageSetting {
  secondary_storage?: Record<string, StorageSetting>;
}

/** What is stored: the setting and the admin who saved it (public storage is used with their rights). */
export interface StoredLargeFileStorage {
  setting: LargeFileStorage;
  configuredBy: string;
}

const OTHER_TYPES = ["AzureBlobStorage", "AzureWorkloadIdentity", "S3AwsOidc", "GoogleCloudStorage"];

function storageSetting(value: unknown, field: string): StorageSetting {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalidInput(field, "must be a JSON object");
  const v = value as Record<string, unknown>;
  const type = v.type ?? "S3Storage";
  if (type !== "S3Storage") {
    throw invalidInput(
      `${field}.type`,
      OTHER_TYPES.includes(String(type))
        ? `Millrace's object storage is S3 or S3-compatible (S3Storage); ${String(type)} is not supported`
        : "must be S3Storage",
    );
  }
  for (const name of ["azure_blob_resource_path", "gcs_resource_path"]) {
    if (!isUnsetSetting(v[name])) throw invalidInput(`${field}.${name}`, "is not supported (S3Storage only)");
  }
  if (!isUnsetSetting(v.advanced_permissions))
    throw invalidInput(`${field}.advanced_permissions`, "is not supported: access follows the resource's");
  const path = v.s3_resource_path;
  if (typeof path !== "string" || !path) throw invalidInput(`${field}.s3_resource_path`, "is required");
  if (v.public_resource !== undefined && v.public_resource !== null && typeof v.public_resource !== "boolean")
    throw invalidInput(`${field}.public_resource`, "must be true or false");
  resourcePathOf(path, `${field}.s3_resource_path`);
  return {
    type: "S3Storage",
    s3_resource_path: path,
    ...(v.public_resource ? { public_resource: true } : {}),
  };
}

/** `$res:f/data/s3` or `f/data/s3` → `f/data/s3`; refused naming `field` when not a path. */
export function resourcePathOf(raw: string, field: string): string {
  const reference = parseReference(raw);
  if (reference && reference.kind !== "res") throw invalidInput(field, "must name a resource ($res:<path>)");
  const path = reference ? reference.path : raw;
  parsePath(path, field);
  return path;
}

const STORAGE_NAME = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);

/** Reads a `large_file_storage` value from Windmill's clients: null when it leaves storage unset. */
export function parseLargeFileStorage(value: unknown): LargeFileStorage | null {
  if (isUnsetSetting(value)) return null;
  const field = "large_file_storage";
  const primary = storageSetting(value, field);
  const secondary = (value as Record<string, unknown>).secondary_storage;
  if (isUnsetSetting(secondary)) return primary;
  if (typeof secondary !== "object" || secondary === null || Array.isArray(secondary))
    throw invalidInput(`${field}.secondary_storage`, "must be a JSON object of named storages");
  const named: Record<string, StorageSetting> = {};
  for (const [name, setting] of Object.entries(secondary)) {
    if (!STORAGE_NAME.safeParse(name).success)
      throw invalidInput(
        `${field}.secondary_storage`,
        `${name} is not a storage name (letters, digits, _ and -)`,
      );
    named[name] = storageSetting(setting, `${field}.secondary_storage.${name}`);
  }
  return { ...primary, secondary_storage: named };
}

export async function readLargeFileStorage(
  ctx: CoreContext,
  workspaceId: string,
): Promise<StoredLargeFileStorage | null> {
  const { rows } = await ctx.pool.query<{ large_file_storage: StoredLargeFileStorage | null }>(
    "SELECT large_file_storage FROM workspace WHERE id = $1",
    [workspaceId],
  );
  return rows[0]?.large_file_storage ?? null;
}

/** The setting as Windmill's getSettings answers it (without who saved it). */
export async function largeFileStorageSetting(
  ctx: CoreContext,
  membership: Membership,
): Promise<LargeFileStorage | undefined> {
  return (await readLargeFileStorage(ctx, membership.workspace.id))?.setting;
}

/**
 * A `large_file_storage` value checked as editLargeFileStorage checks it: each resource it names
 * must exist and be of type `s3` (`resourceTypeOf` answers a path's type, null when there is
 * none). Null when the value leaves storage unset.
 */
export async function checkLargeFileStorage(
  value: unknown,
  resourceTypeOf: (path: string) => Promise<string | null> | string | null,
): Promise<LargeFileStorage | null> {
  const setting = parseLargeFileStorage(value);
  const named: [string, StorageSetting][] = setting
    ? [["", setting], ...Object.entries(setting.secondary_storage ?? {})]
    : [];
  for (const [name, storage] of named) {
    const field = name
      ? `large_file_storage.secondary_storage.${name}.s3_resource_path`
      : "large_file_storage.s3_resource_path";
    const path = resourcePathOf(storage.s3_resource_path, field);
    const type = await resourceTypeOf(path);
    if (type === null) throw invalidInput(field, `no resource ${path} in this workspace`);
    if (type !== "s3") throw invalidInput(field, `${path} is a ${type} resource, not an s3 one`);
  }
  return setting;
}

/** A resource's type as `membership` may see it: null when there is none they may read. */
export function resourceTypeFor(
  ctx: SecretsContext,
  membership: Membership,
): (path: string) => Promise<string | null> {
  return async (path) => {
    try {
      return (await getResource(ctx, membership, path)).resourceType;
    } catch (error) {
      if (error instanceof AppError && error.code === "NOT_FOUND") return null;
      throw error;
    }
  };
}

/**
 * Windmill's editLargeFileStorageConfig, by a workspace admin. Each resource it names must exist
 * and be of type `s3` now (checked with the admin's rights), so that a typo fails here and not in
 * a job later; an unset value removes the setting.
 */
export async function editLargeFileStorage(
  ctx: SecretsContext,
  membership: Membership,
  value: unknown,
): Promise<void> {
  requirePermission(membership, "workspace.manage");
  const setting = await checkLargeFileStorage(value, resourceTypeFor(ctx, membership));
  const stored: StoredLargeFileStorage | null = setting
    ? { setting, configuredBy: membership.principal.username }
    : null;
  await ctx.pool.query("UPDATE workspace SET large_file_storage = $2 WHERE id = $1", [
    membership.workspace.id,
    stored === null ? null : JSON.stringify(stored),
  ]);
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: membership.workspace.id,
    operation: "workspaces.edit_large_file_storage",
    resource: membership.workspace.id,
    parameters: setting ? { ...setting } : { large_file_storage: null },
  });
}
