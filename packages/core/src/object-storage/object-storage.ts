import { randomUUID } from "node:crypto";
import { recordAudit } from "../audit/index.ts";
import { AppError, invalidInput } from "../errors.ts";
import { requirePermission } from "../permissions.ts";
import { jobMembership } from "../resources/job-args.ts";
import { getResourceValueInterpolated } from "../resources/resources.ts";
import type { SecretsContext } from "../secrets/context.ts";
import type { CallMeta } from "../variables/variables.ts";
import type { Membership } from "../membership.ts";
import { parseS3Connection, S3Bucket, type S3Connection } from "./s3-bucket.ts";
import { readLargeFileStorage, resourcePathOf } from "./settings.ts";

/**
 * Which store a job helper call means, as Windmill's clients say it: an `s3` resource named by
 * the caller, or the workspace's storage (its primary one, or a secondary one by name).
 */
export interface StorageTarget {
  s3ResourcePath?: string | undefined;
  storage?: string | undefined;
  /** Windmill's clients may say the resource's type; Millrace's storage is S3 only. */
  resourceType?: string | undefined;
}

/** Windmill's S3Resource: what `denoS3LightClientSettings` and the Python client connect with. */
export type S3ResourceInfo = Omit<S3Connection, "port">;

/**
 * The membership a public storage's resource is read with: the admin who saved the setting, as
 * long as they still are one (their choice to share it with every member is what makes it
 * public). A former admin's word no longer counts.
 */
async function configuringAdmin(
  ctx: SecretsContext,
  membership: Membership,
  username: string,
): Promise<Membership> {
  const admin = await jobMembership(ctx, membership.workspace.id, `u/${username}`).catch(() => null);
  if (!admin || admin.role !== "admin") {
    throw new AppError(
      "FORBIDDEN",
      `the workspace storage is public, but ${username}, who set it, is no longer an admin here: an admin must save the storage setting again`,
    );
  }
  return admin;
}

/** The bucket a call means, its resource read with the rights that apply (see StorageTarget). */
export async function openBucket(
  ctx: SecretsContext,
  membership: Membership,
  target: StorageTarget,
  meta: CallMeta,
): Promise<{ bucket: S3Bucket; resourcePath: string }> {
  requirePermission(membership, "resource.read");
  if (target.resourceType !== undefined && target.resourceType !== "s3")
    throw invalidInput("resource_type", "Millrace's object storage is S3 or S3-compatible: only s3");
  if (target.s3ResourcePath) {
    if (target.storage) throw invalidInput("storage", "give storage or s3_resource_path, not both");
    const path = resourcePathOf(target.s3ResourcePath, "s3_resource_path");
    const value = await getResourceValueInterpolated(ctx, membership, path, meta);
    return { bucket: new S3Bucket(parseS3Connection(value, "s3_resource_path"), path), resourcePath: path };
  }
  const stored = await readLargeFileStorage(ctx, membership.workspace.id);
  if (!stored) {
    throw invalidInput(
      target.storage ? "storage" : "s3_resource_path",
      "this workspace has no object storage: an admin sets one (large_file_storage in the workspace settings), or name an s3 resource with s3_resource_path",
    );
  }
  const setting = target.storage ? stored.setting.secondary_storage?.[target.storage] : stored.setting;
  if (!setting) throw invalidInput("storage", `this workspace has no storage named ${target.storage}`);
  const field = "large_file_storage.s3_resource_path";
  const path = resourcePathOf(setting.s3_resource_path, field);
  const reader = setting.public_resource
    ? await configuringAdmin(ctx, membership, stored.configuredBy)
    : membership;
  const value = await getResourceValueInterpolated(ctx, reader, path, meta);
  return { bucket: new S3Bucket(parseS3Connection(value, field), path), resourcePath: path };
}

/** A key as Millrace accepts one: S3's own limits, and no segment that a store might resolve. */
function checkFileKey(key: string): string {
  if (!key) throw invalidInput("file_key", "is required");
  if (Buffer.byteLength(key) > 1024) throw invalidInput("file_key", "at most 1024 bytes");
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key))
    throw invalidInput("file_key", "must not contain control characters");
  if (key.startsWith("/")) throw invalidInput("file_key", "must not start with /");
  if (key.split("/").some((segment) => segment === "." || segment === ".."))
    throw invalidInput("file_key", "must not contain . or .. segments");
  return key;
}

export async function auditFile(
  ctx: SecretsContext,
  membership: Membership,
  operation: string,
  resourcePath: string,
  key: string,
  meta: CallMeta,
): Promise<void> {
  await recordAudit(ctx.pool, membership.principal, {
    workspaceId: membership.workspace.id,
    operation,
    resource: resourcePath,
    parameters: { file_key: key },
    ip: meta.ip ?? null,
  });
}

/**
 * Windmill's s3ResourceInfo: the connection settings themselves (credentials included), for
 * clients that talk to the store directly. Whoever may use the storage gets them: for a public
 * workspace storage, every member (that is what Windmill's public_resource means); otherwise
 * only those who may read the resource.
 */
export async function s3ResourceInfo(
  ctx: SecretsContext,
  membership: Membership,
  target: StorageTarget,
  meta: CallMeta = {},
): Promise<S3ResourceInfo> {
  const { bucket } = await openBucket(ctx, membership, target, meta);
  const connection = bucket.connection;
  return {
    bucket: connection.bucket,
    region: connection.region,
    endPoint: bucket.endpointHost(),
    useSSL: bucket.endpointUsesTls(),
    pathStyle: connection.pathStyle,
    ...(connection.accessKey ? { accessKey: connection.accessKey } : {}),
    ...(connection.secretKey ? { secretKey: connection.secretKey } : {}),
  };
}

export interface UploadInput {
  fileKey?: string | undefined;
  fileExtension?: string | undefined;
  contentType?: string | undefined;
  contentDisposition?: string | undefined;
}

/**
 * Windmill's fileUpload: writes the body under `file_key`, or under a new
 * `windmill_uploads/<uuid>[.<ext>]` key when none is given (an existing object is replaced, as
 * S3 does). Answers the key written.
 */
export async function uploadFile(
  ctx: SecretsContext,
  membership: Membership,
  target: StorageTarget,
  input: UploadInput,
  body: ReadableStream<Uint8Array> | Uint8Array,
  contentLength: number | undefined,
  meta: CallMeta = {},
): Promise<{ file_key: string }> {
  if (input.fileExtension !== undefined && !/^[A-Za-z0-9]{1,16}$/.test(input.fileExtension))
    throw invalidInput("file_extension", "letters and digits only, at most 16");
  const key = input.fileKey
    ? checkFileKey(input.fileKey)
    : `windmill_uploads/${randomUUID()}${input.fileExtension ? `.${input.fileExtension}` : ""}`;
  const { bucket, resourcePath } = await openBucket(ctx, membership, target, meta);
  await bucket.put(key, body, {
    contentType: input.contentType,
    contentDisposition: input.contentDisposition,
    contentLength,
  });
  await auditFile(ctx, membership, "object_storage.upload", resourcePath, key, meta);
  return { file_key: key };
}

export interface DownloadedFile {
  body: ReadableStream<Uint8Array> | null;
  contentType: string;
  contentLength: string | null;
}

/** Windmill's fileDownload: the object's bytes, streamed from the store. */
export async function downloadFile(
  ctx: SecretsContext,
  membership: Membership,
  target: StorageTarget,
  fileKey: string,
  meta: CallMeta = {},
): Promise<DownloadedFile> {
  const key = checkFileKey(fileKey);
  const { bucket } = await openBucket(ctx, membership, target, meta);
  const response = await bucket.get(key);
  return {
    body: response.body,
    contentType: response.headers.get("content-type") ?? "application/octet-stream",
    contentLength: response.headers.get("content-length"),
  };
}

/** Windmill's deleteS3File: removes the object (a key that is not there is no error, as in S3). */
export async function deleteFile(
  ctx: SecretsContext,
  membership: Membership,
  target: StorageTarget,
  fileKey: string,
  meta: CallMeta = {},
): Promise<void> {
  const key = checkFileKey(fileKey);
  const { bucket, resourcePath } = await openBucket(ctx, membership, target, meta);
  await bucket.delete(key);
  await auditFile(ctx, membership, "object_storage.delete", resourcePath, key, meta);
}
