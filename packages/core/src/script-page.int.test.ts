import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { listAudit } from "./audit/index.ts";
import { addMember } from "./people/members.ts";
import { createFolder, setFolderPermission } from "./people/folders.ts";
import { requirePathWrite } from "./paths.ts";
import {
  archiveScriptByPath,
  deleteScriptByPath,
  deployScript,
  getNewestScriptVersion,
  getScriptByHash,
  getScriptByPath,
  listScripts,
  listScriptVersions,
  pathRights,
  unarchiveScriptByPath,
  writablePaths,
} from "./scripts.ts";
import { createTestMember, createTestServices, rejectsWith, type TestServices } from "./testing.ts";
import { createUser, principalOf } from "./users.ts";
import { requireMembership, type Membership } from "./workspaces.ts";

let services: TestServices;
let admin: Membership;
let dev: Membership;
let viewerDev: Membership;
let op: Membership;

async function join(username: string, role: "developer" | "operator"): Promise<Membership> {
  const user = await createUser(services, {
    email: `${username}@page.test`,
    password: "password123",
    username,
  });
  await addMember(services, admin, { email: user.email, role });
  return requireMembership(services, principalOf(user), "page");
}

describe("the script page's core: versions, archive, unarchive, delete, rights", () => {
  before(async () => {
    services = await createTestServices();
    ({ membership: admin } = await createTestMember(services, "page"));
    dev = await join("dev", "developer");
    viewerDev = await join("viewer_dev", "developer");
    op = await join("op", "operator");
    await createFolder(services, admin, { name: "ops" });
    await setFolderPermission(services, admin, "ops", "u/dev", "writer");
    await setFolderPermission(services, admin, "ops", "u/viewer_dev", "viewer");
    await setFolderPermission(services, admin, "ops", "u/op", "writer");
  });
  after(() => services?.close());

  it("lists every version of a path, newest first, and each one's content by hash", async () => {
    const first = await deployScript(services, dev, {
      path: "f/ops/hello",
      language: "bash",
      content: "echo one",
      summary: "first",
    });
    const second = await deployScript(services, dev, {
      path: "f/ops/hello",
      language: "bash",
      content: "echo two",
      summary: "second",
      parentHash: first.hash,
    });
    const versions = await listScriptVersions(services, op, "f/ops/hello");
    assert.deepEqual(
      versions.map((version) => [version.hash, version.summary, version.createdBy, version.parentHash]),
      [
        [second.hash, "second", "dev", first.hash],
        [first.hash, "first", "dev", null],
      ],
    );
    assert.equal((await getScriptByHash(services, op, first.hash)).content, "echo one");
    await rejectsWith(listScriptVersions(services, op, "f/ops/nothing"), "NOT_FOUND");
    // A path the caller may not read is not found, whether or not it exists.
    await deployScript(services, admin, { path: "u/admin_only/x", language: "bash", content: "echo" });
    await rejectsWith(listScriptVersions(services, dev, "u/admin_only/x"), "NOT_FOUND");
  });

  it("archives and unarchives a path, keeping its versions", async () => {
    await rejectsWith(
      unarchiveScriptByPath(services, dev, "f/ops/hello"),
      "CONFLICT",
      undefined,
      /not archived/,
    );
    await archiveScriptByPath(services, dev, "f/ops/hello");
    await rejectsWith(getScriptByPath(services, dev, "f/ops/hello"), "NOT_FOUND");
    const archived = await getNewestScriptVersion(services, op, "f/ops/hello");
    assert.equal(archived.archived, true);
    assert.equal(archived.content, "echo two");
    assert.deepEqual(
      (await listScripts(services, op)).map((script) => script.path),
      [],
      "an archived script is not listed by default",
    );
    assert.deepEqual(
      (await listScripts(services, op, { includeArchived: true })).map((script) => [
        script.path,
        script.archived,
      ]),
      [["f/ops/hello", true]],
    );
    await rejectsWith(unarchiveScriptByPath(services, op, "f/ops/hello"), "FORBIDDEN");
    await rejectsWith(unarchiveScriptByPath(services, viewerDev, "f/ops/hello"), "FORBIDDEN");
    await unarchiveScriptByPath(services, dev, "f/ops/hello");
    const back = await getScriptByPath(services, op, "f/ops/hello");
    assert.equal(back.content, "echo two");
    assert.equal((await listScriptVersions(services, op, "f/ops/hello")).length, 2);
    await rejectsWith(unarchiveScriptByPath(services, dev, "f/ops/never"), "NOT_FOUND");
    const operations = (await listAudit(services, admin, { resource: "f/ops/hello" })).map(
      (row) => row.operation,
    );
    assert.ok(
      operations.includes("scripts.archive") && operations.includes("scripts.unarchive"),
      String(operations),
    );
  });

  it("deletes every version of a path, only for those who may write it", async () => {
    await deployScript(services, dev, { path: "f/ops/gone", language: "bash", content: "echo" });
    await archiveScriptByPath(services, dev, "f/ops/gone");
    await rejectsWith(deleteScriptByPath(services, op, "f/ops/gone"), "FORBIDDEN");
    await rejectsWith(deleteScriptByPath(services, viewerDev, "f/ops/gone"), "FORBIDDEN");
    await deleteScriptByPath(services, dev, "f/ops/gone");
    await rejectsWith(listScriptVersions(services, admin, "f/ops/gone"), "NOT_FOUND");
    await rejectsWith(deleteScriptByPath(services, dev, "f/ops/gone"), "NOT_FOUND");
    assert.equal(await services.db.script.count({ where: { workspaceId: "page", path: "f/ops/gone" } }), 0);
  });

  it("tells a page what the caller may do with a path", async () => {
    assert.deepEqual(await pathRights(services, admin, "f/ops/hello"), { canWrite: true, canRun: true });
    assert.deepEqual(await pathRights(services, dev, "f/ops/hello"), { canWrite: true, canRun: true });
    // A developer with only viewer rights on the folder may run, not deploy.
    assert.deepEqual(await pathRights(services, viewerDev, "f/ops/hello"), { canWrite: false, canRun: true });
    // An operator never writes, whatever the folder grants.
    assert.deepEqual(await pathRights(services, op, "f/ops/hello"), { canWrite: false, canRun: true });
    assert.deepEqual(await pathRights(services, dev, "u/dev/mine"), { canWrite: true, canRun: true });
    assert.deepEqual(await pathRights(services, dev, "u/admin_only/x"), { canWrite: false, canRun: true });
    assert.deepEqual(await pathRights(services, op, "f/ops/hello", "variable.write"), {
      canWrite: false,
      canRun: true,
    });
    const paths = ["f/ops/hello", "u/dev/mine", "u/admin_only/x", "f/other/x"];
    assert.deepEqual([...(await writablePaths(services, dev, paths))], ["f/ops/hello", "u/dev/mine"]);
    assert.deepEqual([...(await writablePaths(services, viewerDev, paths))], []);
    assert.deepEqual([...(await writablePaths(services, op, paths))], []);
    assert.deepEqual([...(await writablePaths(services, admin, paths))], paths);
  });

  it("words a refused path write as a plain sentence", () => {
    assert.throws(
      () => requirePathWrite(dev, "u/admin/x"),
      /^AppError: Only u\/admin\/ itself or a workspace admin may write under u\/admin\/\.$/,
    );
    requirePathWrite(admin, "u/dev/x");
    requirePathWrite(dev, "u/dev/x");
  });
});
