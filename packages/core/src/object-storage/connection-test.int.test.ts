// The Object storage page's "Test connection" and what the page reads, against a real
// S3-compatible server: a working storage writes and deletes its probe, a refusing one answers
// the store's code at the setting's field, and who may test and see what.
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
import { requireMembership, type Membership } from "../workspaces.ts";
import { objectStorageView, testObjectStorage } from "./connection-test.ts";
import { downloadFile } from "./object-storage.ts";
import { editLargeFileStorage } from "./settings.ts";

const KEY = "test-instance-key-0123456789abcdefghijklmnop";
const WS = "probe";

let services: TestServices;
let ctx: SecretsContext;
let s3: Awaited<ReturnType<typeof startTestS3>>;
let admin: Membership;
let developer: Membership;
let me: string;

describe("object storage connection test", () => {
  before(async () => {
    services = await createTestServices();
    ctx = { ...services, secrets: createKeyring(KEY) };
    s3 = await startTestS3("probe-files");
    ({ membership: admin } = await createTestMember(services, WS));
    me = admin.principal.username;
    const dev = await createUser(services, { email: "dev@example.com", password: "password123" });
    await services.db.workspaceMember.create({
      data: { workspaceId: WS, userId: dev.id, role: "developer" },
    });
    developer = await requireMembership(services, principalOf(dev), WS);
    const connection = {
      region: "us-east-1",
      endPoint: s3.endpoint,
      useSSL: false,
      pathStyle: true,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
    };
    await createResource(ctx, admin, {
      path: `u/${me}/s3`,
      resourceType: "s3",
      value: { ...connection, bucket: s3.bucket },
      description: "the team's files",
    });
    await createResource(ctx, admin, {
      path: `u/${me}/wrong_key`,
      resourceType: "s3",
      value: { ...connection, bucket: s3.bucket, accessKey: "NOPE" },
    });
    await createResource(ctx, admin, {
      path: `u/${me}/no_bucket`,
      resourceType: "s3",
      value: { ...connection, bucket: "not-there" },
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

  it("answers the setting, and the s3 resources to choose from only to an admin", async () => {
    const empty = await objectStorageView(ctx, admin);
    assert.equal(empty.setting, null);
    assert.equal(empty.canEdit, true);
    assert.deepEqual(
      empty.s3Resources?.map((r) => r.path),
      [`u/${me}/no_bucket`, `u/${me}/s3`, `u/${me}/wrong_key`],
    );
    assert.equal(empty.s3Resources?.find((r) => r.path === `u/${me}/s3`)?.description, "the team's files");
    const seen = await objectStorageView(ctx, developer);
    assert.deepEqual(seen, { setting: null, configuredBy: null, canEdit: false, s3Resources: null });
  });

  it("a working storage writes and deletes its probe, and the test is audited", async () => {
    await editLargeFileStorage(ctx, admin, {
      type: "S3Storage",
      s3_resource_path: `$res:u/${me}/s3`,
      secondary_storage: {
        wrong: { type: "S3Storage", s3_resource_path: `u/${me}/wrong_key` },
        gone: { type: "S3Storage", s3_resource_path: `u/${me}/no_bucket` },
      },
    });
    const result = await testObjectStorage(ctx, admin, {});
    assert.equal(result.resourcePath, `u/${me}/s3`);
    assert.equal(result.bucket, s3.bucket);
    assert.match(result.key, /^\.millrace\/connection-test-[0-9a-f-]{36}$/);
    // The probe is gone from the store.
    await rejectsWith(downloadFile(ctx, admin, {}, result.key), "NOT_FOUND", "file_key");
    const audit = await listAudit(ctx, admin, { operation: "object_storage.test" });
    assert.ok(audit.some((row) => JSON.stringify(row).includes(result.key)));

    const view = await objectStorageView(ctx, admin);
    assert.equal(view.setting?.s3_resource_path, `$res:u/${me}/s3`);
    assert.equal(view.configuredBy, me);
  });

  it("a refusing store answers its code at the setting's field", async () => {
    await rejectsWith(
      testObjectStorage(ctx, admin, { storage: "wrong" }),
      "UPSTREAM_FAILED",
      "large_file_storage.secondary_storage.wrong.s3_resource_path",
      /refused \(InvalidAccessKeyId\)/,
    );
    await rejectsWith(
      testObjectStorage(ctx, admin, { storage: "gone" }),
      "UPSTREAM_FAILED",
      "large_file_storage.secondary_storage.gone.s3_resource_path",
      /refused \(NoSuchBucket\)/,
    );
    await rejectsWith(testObjectStorage(ctx, admin, { storage: "nope" }), "INVALID_INPUT", "storage");
    await rejectsWith(
      testObjectStorage(ctx, admin, { s3ResourcePath: `u/${me}/pg` }),
      "INVALID_INPUT",
      "s3_resource_path",
    );
    // A store that does not answer at all.
    await createResource(ctx, admin, {
      path: `u/${me}/dead`,
      resourceType: "s3",
      value: { bucket: "b", endPoint: "127.0.0.1:9", useSSL: false, pathStyle: true },
    });
    await rejectsWith(
      testObjectStorage(ctx, admin, { s3ResourcePath: `u/${me}/dead` }),
      "UPSTREAM_FAILED",
      "s3_resource_path",
      /cannot reach 127\.0\.0\.1:9/,
    );
  });

  it("tests with the helpers' rights: a private storage not for a developer, a public one as its admin", async () => {
    await rejectsWith(testObjectStorage(ctx, developer, {}), "NOT_FOUND");
    await editLargeFileStorage(ctx, admin, {
      type: "S3Storage",
      s3_resource_path: `$res:u/${me}/s3`,
      public_resource: true,
    });
    const result = await testObjectStorage(ctx, developer, {});
    assert.equal(result.resourcePath, `u/${me}/s3`);
    await editLargeFileStorage(ctx, admin, null);
    await rejectsWith(
      testObjectStorage(ctx, admin, {}),
      "INVALID_INPUT",
      "s3_resource_path",
      /no object storage/,
    );
  });

  it("tests an unsaved setting with the admin's own rights, and saves nothing", async () => {
    const unsaved = {
      type: "S3Storage",
      s3_resource_path: `$res:u/${me}/s3`,
      secondary_storage: { wrong: { type: "S3Storage", s3_resource_path: `u/${me}/wrong_key` } },
    };
    const result = await testObjectStorage(ctx, admin, { setting: unsaved });
    assert.equal(result.resourcePath, `u/${me}/s3`);
    await rejectsWith(
      testObjectStorage(ctx, admin, { setting: unsaved, storage: "wrong" }),
      "UPSTREAM_FAILED",
      "large_file_storage.secondary_storage.wrong.s3_resource_path",
      /InvalidAccessKeyId/,
    );
    await rejectsWith(
      testObjectStorage(ctx, admin, { setting: unsaved, storage: "nope" }),
      "INVALID_INPUT",
      "storage",
    );
    await rejectsWith(
      testObjectStorage(ctx, admin, { setting: { type: "S3Storage", s3_resource_path: `u/${me}/pg` } }),
      "INVALID_INPUT",
      "large_file_storage.s3_resource_path",
      /not an s3 one/,
    );
    await rejectsWith(
      testObjectStorage(ctx, admin, { setting: null }),
      "INVALID_INPUT",
      "large_file_storage.s3_resource_path",
    );
    // A developer may not try settings, even a public one they could use once saved.
    await rejectsWith(
      testObjectStorage(ctx, developer, { setting: { ...unsaved, public_resource: true } }),
      "FORBIDDEN",
    );
    assert.equal((await objectStorageView(ctx, admin)).setting, null);
  });
});
