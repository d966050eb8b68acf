// A workspace's object storage (Windmill's large_file_storage and its job helpers) against a real
// S3-compatible server: the setting refused naming the field at fault, files written, read and
// deleted, and who may use a private and a public storage.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { listAudit } from "../audit/index.ts";
import { createResource } from "../resources/resources.ts";
import { createKeyring, type SecretsContext } from "../secrets/index.ts";
import {
  createTestMember,
  createTestServices,
  rejectsWith,
  startTestS3,
  type TestServices,
} from "../testing.ts";
import { createUser, principalOf } from "../users.ts";
import { createVariable } from "../variables/variables.ts";
import { requireMembership, type Membership } from "../workspaces.ts";
import { deleteFile, downloadFile, s3ResourceInfo, uploadFile } from "./object-storage.ts";
import { editLargeFileStorage, largeFileStorageSetting } from "./settings.ts";

const KEY = "test-instance-key-0123456789abcdefghijklmnop";
const WS = "files";

let services: TestServices;
let ctx: SecretsContext;
let s3: Awaited<ReturnType<typeof startTestS3>>;
let admin: Membership;
let developer: Membership;
let me: string;

const bytes = (text: string) => new TextEncoder().encode(text);
async function read(file: { body: ReadableStream<Uint8Array> | null }): Promise<string> {
  return new Response(file.body).text();
}

describe("workspace object storage (S3)", () => {
  before(async () => {
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    s3 = await startTestS3("team-files");
    ({ membership: admin } = await createTestMember(services, WS));
    me = admin.principal.username;
    const dev = await createUser(services, { email: "dev@example.com", password: "password123" });
    await services.db.workspaceMember.create({
      data: { workspaceId: WS, userId: dev.id, role: "developer" },
    });
    developer = await requireMembership(services, principalOf(dev), WS);
    // The secret key is a secret variable the resource refers to, as Windmill's users keep it.
    await createVariable(ctx, admin, { path: `u/${me}/s3_secret`, value: s3.secretKey, isSecret: true });
    await createResource(ctx, admin, {
      path: `u/${me}/s3`,
      resourceType: "s3",
      value: s3.resourceValue({ secretKey: `$var:u/${me}/s3_secret` }),
    });
    await createResource(ctx, admin, {
      path: `u/${me}/wrong_key`,
      resourceType: "s3",
      value: s3.resourceValue({ accessKey: "NOPE" }),
    });
    await createResource(ctx, admin, {
      path: `u/${me}/metadata`,
      resourceType: "s3",
      value: s3.resourceValue({ endPoint: "169.254.169.254" }),
    });
    await createResource(ctx, admin, {
      path: `u/${me}/pg`,
      resourceType: "postgresql",
      value: { host: "db", port: 5432, user: "u", dbname: "d" },
    });
  });
  after(async () => {
    await s3?.close();
    await services?.close();
  });

  it("refuses a storage setting that cannot work, naming the field, and keeps the one stored", async () => {
    await rejectsWith(
      editLargeFileStorage(ctx, admin, { type: "S3Storage", s3_resource_path: `$res:u/${me}/missing` }),
      "INVALID_INPUT",
      "large_file_storage.s3_resource_path",
      /no resource/,
    );
    await rejectsWith(
      editLargeFileStorage(ctx, admin, { type: "S3Storage", s3_resource_path: `$res:u/${me}/pg` }),
      "INVALID_INPUT",
      "large_file_storage.s3_resource_path",
      /postgresql resource, not an s3 one/,
    );
    await rejectsWith(
      editLargeFileStorage(ctx, admin, { type: "AzureBlobStorage", azure_blob_resource_path: "u/x/y" }),
      "INVALID_INPUT",
      "large_file_storage.type",
      /not supported/,
    );
    await rejectsWith(
      editLargeFileStorage(ctx, admin, {
        type: "S3Storage",
        s3_resource_path: `$res:u/${me}/s3`,
        secondary_storage: { archive: { type: "S3Storage", s3_resource_path: "nope" } },
      }),
      "INVALID_INPUT",
      "large_file_storage.secondary_storage.archive.s3_resource_path",
    );
    await rejectsWith(
      editLargeFileStorage(ctx, developer, { type: "S3Storage", s3_resource_path: `$res:u/${me}/s3` }),
      "FORBIDDEN",
    );
    assert.equal(await largeFileStorageSetting(ctx, admin), undefined);

    await editLargeFileStorage(ctx, admin, {
      type: "S3Storage",
      s3_resource_path: `$res:u/${me}/s3`,
      secondary_storage: { archive: { type: "S3Storage", s3_resource_path: `u/${me}/s3` } },
    });
    await rejectsWith(
      editLargeFileStorage(ctx, admin, { type: "S3Storage", advanced_permissions: [{ pattern: "*" }] }),
      "INVALID_INPUT",
      "large_file_storage.advanced_permissions",
    );
    assert.deepEqual(await largeFileStorageSetting(ctx, admin), {
      type: "S3Storage",
      s3_resource_path: `$res:u/${me}/s3`,
      secondary_storage: { archive: { type: "S3Storage", s3_resource_path: `u/${me}/s3` } },
    });
  });

  it("writes, reads and deletes files in the workspace storage, under a given or a new key", async () => {
    const written = await uploadFile(
      ctx,
      admin,
      {},
      { fileKey: "reports/2026/q3 summary.txt", contentType: "text/plain" },
      bytes("quarterly numbers"),
      17,
    );
    assert.deepEqual(written, { file_key: "reports/2026/q3 summary.txt" });
    const file = await downloadFile(ctx, admin, {}, "reports/2026/q3 summary.txt");
    assert.equal(await read(file), "quarterly numbers");
    assert.match(file.contentType, /^text\/plain/);

    // No key: a new one under windmill_uploads/, with the extension asked for; a stream body.
    const stream = new Response("a,b\n1,2\n").body!;
    const fresh = await uploadFile(ctx, admin, {}, { fileExtension: "csv" }, stream, 8);
    assert.match(fresh.file_key, /^windmill_uploads\/[0-9a-f-]{36}\.csv$/);
    assert.equal(await read(await downloadFile(ctx, admin, {}, fresh.file_key)), "a,b\n1,2\n");

    // The same bucket through the secondary storage's name, and through the resource itself.
    const viaName = await downloadFile(ctx, admin, { storage: "archive" }, fresh.file_key);
    assert.equal(await read(viaName), "a,b\n1,2\n");
    const viaPath = await downloadFile(ctx, admin, { s3ResourcePath: `$res:u/${me}/s3` }, fresh.file_key);
    assert.equal(await read(viaPath), "a,b\n1,2\n");

    await deleteFile(ctx, admin, {}, fresh.file_key);
    await rejectsWith(downloadFile(ctx, admin, {}, fresh.file_key), "NOT_FOUND", "file_key");
    // Deleting what is not there is no error, as in S3.
    await deleteFile(ctx, admin, {}, fresh.file_key);

    const audit = await listAudit(ctx, admin, { operation: "object_storage.upload" });
    assert.ok(audit.some((row) => JSON.stringify(row).includes("reports/2026/q3 summary.txt")));
  });

  it("refuses bad keys and targets naming the field, and names the store's refusal", async () => {
    await rejectsWith(downloadFile(ctx, admin, {}, "../etc/passwd"), "INVALID_INPUT", "file_key");
    await rejectsWith(downloadFile(ctx, admin, {}, "/abs"), "INVALID_INPUT", "file_key");
    await rejectsWith(
      uploadFile(ctx, admin, {}, { fileExtension: "tar.gz" }, bytes("x"), 1),
      "INVALID_INPUT",
      "file_extension",
    );
    await rejectsWith(downloadFile(ctx, admin, { storage: "nope" }, "a"), "INVALID_INPUT", "storage");
    await rejectsWith(
      downloadFile(ctx, admin, { resourceType: "azure_blob" }, "a"),
      "INVALID_INPUT",
      "resource_type",
    );
    await rejectsWith(
      uploadFile(ctx, admin, { s3ResourcePath: `u/${me}/wrong_key` }, {}, bytes("x"), 1),
      "UPSTREAM_FAILED",
      undefined,
      /refused \(InvalidAccessKeyId\)/,
    );
    // The cloud's metadata service is never an object store the server calls.
    await rejectsWith(
      downloadFile(ctx, admin, { s3ResourcePath: `u/${me}/metadata` }, "latest/meta-data"),
      "FORBIDDEN",
      undefined,
      /link-local/,
    );
  });

  it("private storage: only those who may read its resource; public: every member, as its admin", async () => {
    // u/<admin>/s3 is the admin's own: a developer may not read it, so neither use the storage
    // nor learn its credentials.
    await rejectsWith(downloadFile(ctx, developer, {}, "reports/2026/q3 summary.txt"), "NOT_FOUND");
    await assert.rejects(s3ResourceInfo(ctx, developer, {}));

    await editLargeFileStorage(ctx, admin, {
      type: "S3Storage",
      s3_resource_path: `$res:u/${me}/s3`,
      public_resource: true,
    });
    const file = await downloadFile(ctx, developer, {}, "reports/2026/q3 summary.txt");
    assert.equal(await read(file), "quarterly numbers");
    const info = await s3ResourceInfo(ctx, developer, {});
    assert.deepEqual(info, s3.resourceValue());
    // Naming the resource itself still takes the right to read it.
    await rejectsWith(
      downloadFile(ctx, developer, { s3ResourcePath: `u/${me}/s3` }, "reports/2026/q3 summary.txt"),
      "NOT_FOUND",
    );

    // Once the admin who shared it is an admin no more, their word no longer counts.
    await services.pool.query(
      "UPDATE workspace_member SET role = 'developer' WHERE workspace_id = $1 AND user_id = $2",
      [WS, admin.principal.userId],
    );
    await rejectsWith(
      downloadFile(ctx, developer, {}, "reports/2026/q3 summary.txt"),
      "FORBIDDEN",
      undefined,
      /no longer an admin/,
    );
    await services.pool.query(
      "UPDATE workspace_member SET role = 'admin' WHERE workspace_id = $1 AND user_id = $2",
      [WS, admin.principal.userId],
    );
  });

  it("an unset setting removes the storage", async () => {
    await editLargeFileStorage(ctx, admin, {});
    assert.equal(await largeFileStorageSetting(ctx, admin), undefined);
    await rejectsWith(
      downloadFile(ctx, admin, {}, "a"),
      "INVALID_INPUT",
      "s3_resource_path",
      /no object storage/,
    );
  });
});
