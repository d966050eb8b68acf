import { randomUUID } from "node:crypto";
import { AppError, invalidInput } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import { getResourceValueInterpolated, listResources } from "../resources/resources.ts";
import type { SecretsContext } from "../secrets/context.ts";
import type { CallMeta } from "../variables/variables.ts";
import type { Membership } from "../membership.ts";
import { auditFile, openBucket, type StorageTarget } from "./object-storage.ts";
import { parseS3Connection, S3Bucket } from "./s3-bucket.ts";
import {
  checkLargeFileStorage,
  readLargeFileStorage,
  resourcePathOf,
  resourceTypeFor,
  type LargeFileStorage,
} from "./settings.ts";

/** What the Object storage page shows: the setting, and for an admin what it may be set to. */
export interface ObjectStorageView {
  setting: LargeFileStorage | null;
  /** The admin who saved it: a public storage is used with their rights. */
  configuredBy: string | null;
  canEdit: boolean;
  /** The workspace's `s3` resources the admin may read (null for other members). */
  s3Resources: { path: string; description: string }[] | null;
}

export async function objectStorageView(
  ctx: SecretsContext,
  membership: Membership,
): Promise<ObjectStorageView> {
  const stored = await readLargeFileStorage(ctx, membership.workspace.id);
  const canEdit = membership.role === "admin";
  const s3Resources = canEdit
    ? (await listResources(ctx, membership, { resourceType: "s3", perPage: 1000 })).map((r) => ({
        path: r.path,
        description: r.description ?? "",
      }))
    : null;
  return {
    setting: stored?.setting ?? null,
    configuredBy: stored?.configuredBy ?? null,
    canEdit,
    s3Resources,
  };
}

/** The setting's field a storage's problems are shown at (the page and the REST body say it so). */
function settingField(target: StorageTarget): string {
  if (target.s3ResourcePath) return "s3_resource_path";
  return target.storage
    ? `large_file_storage.secondary_storage.${target.storage}.s3_resource_path`
    : "large_file_storage.s3_resource_path";
}

/**
 * The bucket of a `large_file_storage` value not saved yet (the form as the admin left it): checked
 * as a save checks it, its resource read with the admin's own rights, as it would be once they
 * save it (a public storage is used with the rights of whoever saved it).
 */
async function openUnsavedBucket(
  ctx: SecretsContext,
  membership: Membership,
  value: unknown,
  storage: string | undefined,
  meta: CallMeta,
): Promise<{ bucket: S3Bucket; resourcePath: string }> {
  requirePermission(membership, "workspace.manage");
  const setting = await checkLargeFileStorage(value, resourceTypeFor(ctx, membership));
  const field = settingField({ storage });
  if (!setting) throw invalidInput(field, "is required");
  const chosen = storage ? setting.secondary_storage?.[storage] : setting;
  if (!chosen) throw invalidInput("storage", `the setting has no storage named ${storage}`);
  const path = resourcePathOf(chosen.s3_resource_path, field);
  const resource = await getResourceValueInterpolated(ctx, membership, path, meta);
  return { bucket: new S3Bucket(parseS3Connection(resource, field), path), resourcePath: path };
}

/**
 * Checks that a storage works end to end, as the job helpers would use it (same target, same
 * rights): writes a small probe object under `.millrace/connection-test-<uuid>` and deletes it.
 * With `setting`, an admin tests that value instead of the saved one (before saving it). A
 * store's refusal is UPSTREAM_FAILED naming its code (InvalidAccessKeyId, NoSuchBucket…) and the
 * setting's field; a setting that cannot be used is INVALID_INPUT naming the field.
 */
export async function testObjectStorage(
  ctx: SecretsContext,
  membership: Membership,
  target: StorageTarget & { setting?: unknown },
  meta: CallMeta = {},
): Promise<{ resourcePath: string; bucket: string; key: string }> {
  requirePermission(membership, "resource.read");
  const field = settingField(target);
  const atField = (error: unknown): never => {
    if (error instanceof AppError && error.code === "UPSTREAM_FAILED" && !error.field)
      throw new AppError("UPSTREAM_FAILED", error.message, field);
    throw error;
  };
  const { bucket, resourcePath } = await (
    target.setting !== undefined
      ? openUnsavedBucket(ctx, membership, target.setting, target.storage, meta)
      : openBucket(ctx, membership, target, meta)
  ).catch(atField);
  const key = `.millrace/connection-test-${randomUUID()}`;
  const body = new TextEncoder().encode(`Millrace connection test by ${membership.principal.username}\n`);
  await bucket.put(key, body, { contentType: "text/plain", contentLength: body.byteLength }).catch(atField);
  await bucket.delete(key).catch(atField);
  await auditFile(ctx, membership, "object_storage.test", resourcePath, key, meta);
  return { resourcePath, bucket: bucket.connection.bucket, key };
}
